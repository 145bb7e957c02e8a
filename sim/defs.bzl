"""One source, two backends.

Every macro here turns one set of sources into a real-MPI twin (`<name>_mpi`, an ordinary
executable run by `mpirun`) and a SimGrid SMPI twin (`<name>_smpi`, a shared object run by
`smpirun`). `deps` name other two-backend targets by their base name; `plain_deps` are
backend-independent (e.g. GoogleTest). The real MPI is Open MPI unless the build says otherwise
(`--config=mpich`, `--config=system_mpi`; see sim/BUILD.bazel).
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

BACKENDS = ["mpi", "smpi"]

_BACKEND_COPTS = {
    "mpi": [],
    # SMPI's mpi.h; its smpi_helpers.h is left out on purpose: its malloc/free/exit macros break
    # C++ standard headers, and the project reads time only through MPI_Wtime.
    "smpi": ["-I/usr/include/smpi", "-fPIC", "-DJANUS_SMPI=1"],
}

_BACKEND_DEPS = {
    "mpi": ["//sim:mpi"],
    "smpi": [],
}

_BACKEND_LINKOPTS = {
    "mpi": [],
    "smpi": ["-lsimgrid"],
}

def _full_label(label):
    # "//pkg" means "//pkg:pkg"; spell the name out so the backend suffix goes on the target.
    if ":" in label:
        return label
    return label + ":" + label.split("/")[-1]

def _twin(labels, backend):
    return [_full_label(label) + "_" + backend for label in labels]

def mpi_smpi_library(name, deps = [], plain_deps = [], copts = [], linkopts = [], **kwargs):
    for backend in BACKENDS:
        cc_library(
            name = name + "_" + backend,
            deps = _twin(deps, backend) + plain_deps + _BACKEND_DEPS[backend],
            copts = _BACKEND_COPTS[backend] + copts,
            linkopts = _BACKEND_LINKOPTS[backend] + linkopts,
            **kwargs
        )

def mpi_smpi_binary(name, deps = [], plain_deps = [], copts = [], linkopts = [], tags = [], **kwargs):
    """`<name>_mpi` is an executable; `<name>_smpi` is the shared object smpirun loads."""
    for backend in BACKENDS:
        cc_binary(
            name = name + "_" + backend,
            deps = _twin(deps, backend) + plain_deps + _BACKEND_DEPS[backend],
            copts = _BACKEND_COPTS[backend] + copts,
            linkopts = _BACKEND_LINKOPTS[backend] + linkopts,
            linkshared = backend == "smpi",
            tags = tags + [backend],
            **kwargs
        )

def mpi_smpi_test(
        name,
        srcs = [],
        deps = [],
        plain_deps = [],
        copts = [],
        mpi_np = [1, 2, 3, 4, 7, 8],
        smpi_np = [1, 2, 3, 4, 7, 8, 16, 31],
        smpi_platform = "//platforms:test_cluster.xml",
        args = [],
        size = "medium",
        tags = [],
        timeout_seconds = 240,
        smpi_rendezvous = False,
        smpi_pack = 0,
        binary = None):
    """Builds the program for both backends and runs it at every listed rank count.

    Tests are named `<name>_mpi_np<N>` and `<name>_smpi_np<N>`; the test_suite `<name>` holds them all.
    A run that exceeds `timeout_seconds` is killed and fails as a hang. `smpi_rendezvous` makes
    every SMPI send wait for its receiver (see sim/run_ranks.sh); `smpi_pack` = K puts K
    consecutive SMPI ranks on each host, as a cluster does (default: one rank per host). Real-MPI tests on more than
    2 ranks are also tagged `mpi_oversubscribed`: more ranks than the 2-core reference machine
    has cores. Open MPI yields the core while it waits there; MPICH busy-polls, so each message
    hop costs a scheduler time slice (milliseconds) and such runs take minutes instead of seconds.
    `binary` = the name of another mpi_smpi_test runs that test's programs instead of building
    `srcs` again (other arguments, rank counts or packing; no compile of its own).
    """
    if binary and (srcs or deps or plain_deps or copts):
        fail("mpi_smpi_test %s: `binary` runs %s's programs; srcs, deps, plain_deps and copts belong to that test" % (name, binary))
    program = binary or name
    if not binary:
        mpi_smpi_binary(name = name, srcs = srcs, deps = deps, plain_deps = plain_deps, copts = copts, testonly = True)
    tests = []
    for backend, counts in [("mpi", mpi_np), ("smpi", smpi_np)]:
        for np in counts:
            test_name = "%s_%s_np%d" % (name, backend, np)
            native.sh_test(
                name = test_name,
                srcs = ["//sim:run_ranks.sh"],
                args = [
                    "--backend",
                    backend,
                    "--np",
                    str(np),
                    "--timeout",
                    str(timeout_seconds),
                    "--platform",
                    "$(location %s)" % smpi_platform,
                ] + (["--rendezvous"] if smpi_rendezvous and backend == "smpi" else []) +
                (["--pack", str(smpi_pack)] if smpi_pack and backend == "smpi" else []) + [
                    "$(location :%s_%s)" % (program, backend),
                ] + args,
                data = [":%s_%s" % (program, backend), smpi_platform] +
                       (["//sim:mpi_launcher.env"] if backend == "mpi" else []),
                size = size,
                tags = tags + [backend] + (["mpi_oversubscribed"] if backend == "mpi" and np > 2 else []),
            )
            tests.append(":" + test_name)
    native.test_suite(name = name, tests = tests)
