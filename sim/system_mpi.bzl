"""`@system_mpi`: the MPI a machine provides (a cluster's module-loaded MPI), found through its
C++ compiler wrapper. Used by `--config=system_mpi` (see sim/BUILD.bazel).

Where the wrapper comes from, first match wins:
  JANUS_MPICXX   the wrapper itself (a name on PATH or a path), e.g. mpiicpc or mpicxx.mpich
  MPI_HOME       $MPI_HOME/bin/mpicxx (or mpic++, mpiCC)
  PATH           the first mpicxx on PATH
The wrapper's flags come from `-showme:compile` / `-showme:link` (Open MPI) or `-show`
(MPICH, Intel MPI, MVAPICH, ParaStation MPI). The launcher the tests and benchmarks use is
JANUS_MPIEXEC if set, else mpiexec (or mpirun) beside the wrapper, else mpiexec on PATH.

The repository never fails to fetch: without an MPI its `:mpi` target fails to build with a
message saying what was looked for, so a query over every select() branch stays usable.
"""

# Searched by the dynamic linker anyway: no rpath for these.
_DEFAULT_LIBDIRS = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]

_ENV = ["JANUS_MPICXX", "JANUS_MPIEXEC", "MPI_HOME", "PATH"]

def _find_wrapper(rctx):
    env = rctx.os.environ
    tried = []
    named = env.get("JANUS_MPICXX", "")
    if named:
        path = rctx.path(named) if named.startswith("/") else rctx.which(named)
        if path != None and path.exists:
            return path, "JANUS_MPICXX=" + named, tried
        tried.append("JANUS_MPICXX=%s (not found)" % named)
        return None, None, tried
    home = env.get("MPI_HOME", "")
    if home:
        for name in ["mpicxx", "mpic++", "mpiCC"]:
            path = rctx.path(home + "/bin/" + name)
            if path.exists:
                return path, "MPI_HOME=" + home, tried
        tried.append("MPI_HOME=%s (no bin/mpicxx, bin/mpic++ or bin/mpiCC)" % home)
    path = rctx.which("mpicxx")
    if path != None:
        return path, "mpicxx on PATH", tried
    tried.append("mpicxx on PATH (none)")
    return None, None, tried

def _run(rctx, args):
    result = rctx.execute(args, timeout = 30)
    if result.return_code != 0:
        return None
    return result.stdout.strip()

def _words(text):
    return [w for w in text.replace("\t", " ").replace("\n", " ").split(" ") if w]

def _wrapper_flags(rctx, wrapper):
    """(flavor, compile tokens, link tokens), or None if the wrapper answers neither way."""
    compile = _run(rctx, [wrapper, "-showme:compile"])
    link = _run(rctx, [wrapper, "-showme:link"])
    if compile != None and link != None:
        return "openmpi", _words(compile), _words(link)
    shown = _run(rctx, [wrapper, "-show"])
    if shown:
        # "<compiler> <flags...>": the flags serve both compiling and linking; sorted below.
        tokens = _words(shown)[1:]
        return "mpich", tokens, tokens
    return None

def _classify(compile_tokens, link_tokens):
    """Include directories, defines and link options. Other compile options of the wrapper
    (optimisation, warnings) are the project's own business and are left out."""
    includes, defines, linkopts = [], [], []
    take = None
    for token in compile_tokens:
        if take != None:
            take.append(token)
            take = None
        elif token in ["-I", "-isystem"]:
            take = includes
        elif token.startswith("-I"):
            includes.append(token[2:])
        elif token.startswith("-isystem"):
            includes.append(token[len("-isystem"):])
        elif token.startswith("-D"):
            defines.append(token[2:])

    # The link line: libraries, search paths and linker options, in order.
    libdirs = []
    pending = False
    for token in link_tokens:
        if pending:
            linkopts.append(token)
            pending = False
        elif token in ["-Xlinker", "-L"]:
            linkopts.append(token)
            pending = True
        elif token.startswith("-L"):
            linkopts.append(token)
            libdirs.append(token[2:])
        elif (token.startswith("-l") or token.startswith("-Wl,") or token == "-pthread" or
              token.endswith(".so") or token.endswith(".a") or ".so." in token):
            linkopts.append(token)

    # The binaries find the libraries they were built against without a module loaded, in
    # Bazel's test environment too (which does not pass LD_LIBRARY_PATH through).
    linkopts += ["-Wl,-rpath," + d for d in libdirs if d not in _DEFAULT_LIBDIRS]
    return includes, defines, linkopts

def _find_launcher(rctx, wrapper):
    named = rctx.os.environ.get("JANUS_MPIEXEC", "")
    if named:
        path = rctx.path(named) if named.startswith("/") else rctx.which(named)
        return path if path != None and path.exists else None
    # A suffixed wrapper (Debian's mpicxx.mpich) goes with the launcher of the same suffix.
    suffix = ""
    for stem in ["mpicxx", "mpic++", "mpiCC"]:
        if wrapper.basename.startswith(stem):
            suffix = wrapper.basename[len(stem):]
    names = ["mpiexec" + suffix, "mpirun" + suffix] if suffix else []
    for name in names + ["mpiexec", "mpirun"]:
        path = rctx.path(str(wrapper.dirname) + "/" + name)
        if path.exists:
            return path
    return rctx.which("mpiexec")

def _unavailable(rctx, why):
    rctx.file("mpi_launcher.env", "# no system MPI: %s\n" % why)
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

exports_files(["mpi_launcher.env"])

genrule(
    name = "no_system_mpi",
    outs = ["no_system_mpi.h"],
    cmd = "echo 'system_mpi: %s' >&2; exit 1",
)

cc_library(name = "mpi", hdrs = [":no_system_mpi"])
""" % why.replace("'", "").replace('"', ""))

def _quoted(items):
    return "[" + ", ".join(['"%s"' % i.replace("\\", "\\\\").replace('"', '\\"') for i in items]) + "]"

def _system_mpi_impl(rctx):
    wrapper, source, tried = _find_wrapper(rctx)
    if wrapper == None:
        _unavailable(rctx, "no MPI compiler wrapper found; looked for " + ", ".join(tried) +
                           ". Load the MPI module or set MPI_HOME or JANUS_MPICXX")
        return
    flags = _wrapper_flags(rctx, wrapper)
    if flags == None:
        _unavailable(rctx, "%s (%s) answers neither -showme:compile nor -show" % (wrapper, source))
        return
    flavor, compile_tokens, link_tokens = flags
    includes, defines, linkopts = _classify(compile_tokens, link_tokens)
    launcher = _find_launcher(rctx, wrapper)
    if launcher == None:
        _unavailable(rctx, "no mpiexec beside %s or on PATH; set JANUS_MPIEXEC" % wrapper)
        return

    # Headers come in through symlinks inside the repository, so that Bazel's check of
    # included headers accepts them wherever the MPI is installed.
    hdr_dirs = []
    for i, directory in enumerate(includes):
        if rctx.path(directory).exists:
            link = "include%d" % i
            rctx.symlink(directory, link)
            hdr_dirs.append(link)

    rctx.file("mpi_launcher.env", "\n".join([
        "# Written by @system_mpi from %s (%s)." % (wrapper, source),
        "JANUS_MPI_FLAVOR=" + flavor,
        "JANUS_MPI_LAUNCHER=" + str(launcher),
        "",
    ]))
    rctx.file("BUILD.bazel", """
package(default_visibility = ["//visibility:public"])

exports_files(["mpi_launcher.env"])

# {wrapper} ({source}), {flavor} flavour; launcher {launcher}.
cc_library(
    name = "mpi",
    hdrs = glob([{globs}], allow_empty = True),
    includes = {includes},
    defines = {defines},
    linkopts = {linkopts},
)
""".format(
        wrapper = wrapper,
        source = source,
        flavor = flavor,
        launcher = launcher,
        globs = ", ".join(['"%s/**/*.h"' % d for d in hdr_dirs]),
        includes = _quoted(hdr_dirs),
        # The MPI-2 C++ bindings are deprecated and unused here; skipping them keeps the C++
        # bindings' libraries out of the link and their warnings out of the build.
        defines = _quoted(["OMPI_SKIP_MPICXX", "MPICH_SKIP_MPICXX"] + defines),
        linkopts = _quoted(linkopts),
    ))

system_mpi_repository = repository_rule(
    implementation = _system_mpi_impl,
    environ = _ENV,
    local = True,
    configure = True,
    doc = "The machine's own MPI, from its compiler wrapper (see the module docstring).",
)
