"""Local repositories for the Debian packages the build uses (installed by `./janus setup`)."""

load("//sim:system_mpi.bzl", "system_mpi_repository")

def system_dependencies():
    native.local_repository(name = "rules_cc", path = "third_party/rules_cc")
    native.local_repository(name = "rules_java", path = "third_party/rules_java")
    native.local_repository(name = "remote_coverage_tools", path = "third_party/remote_coverage_tools")
    native.local_repository(name = "platforms", path = "/usr/share/bazel/platforms")

    # Open MPI 4.1 (libopenmpi-dev). Linked by explicit path so that an installed MPICH
    # owning the `mpi` alternative cannot be picked up by accident.
    native.new_local_repository(
        name = "openmpi",
        path = "/usr/lib/x86_64-linux-gnu/openmpi",
        build_file_content = """
cc_library(
    name = "mpi",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
    defines = ["OMPI_SKIP_MPICXX"],
    linkopts = ["-L/usr/lib/x86_64-linux-gnu/openmpi/lib", "-lmpi"],
    visibility = ["//visibility:public"],
)
""",
    )

    # MPICH 4.0 (libmpich-dev), for --config=mpich: the MPICH family (Intel MPI, Cray MPICH,
    # MVAPICH, ParaStation MPI) with its smaller MPI_TAG_UB. Same explicit-path care as above.
    native.new_local_repository(
        name = "mpich",
        path = "/usr/include/x86_64-linux-gnu/mpich",
        build_file_content = """
cc_library(
    name = "mpi",
    hdrs = glob(["*.h"]),
    includes = ["."],
    defines = ["MPICH_SKIP_MPICXX"],
    linkopts = ["-L/usr/lib/x86_64-linux-gnu", "-lmpich"],
    visibility = ["//visibility:public"],
)
""",
    )

    # The machine's own MPI, found through its compiler wrapper, for --config=system_mpi.
    system_mpi_repository(name = "system_mpi")

    # GoogleTest and RapidCheck (libgtest-dev, libgmock-dev, librapidcheck-dev): headers live
    # under /usr/include, which the toolchain already searches.
    native.new_local_repository(
        name = "system_libs",
        path = "/usr/lib/x86_64-linux-gnu",
        build_file_content = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "gtest", linkopts = ["-lgtest", "-pthread"])

cc_library(name = "gtest_main", linkopts = ["-lgtest_main", "-lgtest", "-pthread"])

cc_library(name = "rapidcheck", linkopts = ["-lrapidcheck"])
""",
    )
