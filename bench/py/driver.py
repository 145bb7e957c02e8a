"""bench/run: build the benchmark programs, run them on SMPI and on a real MPI (Open MPI by
default, MPICH or the machine's own MPI with --mpi; locally or through any launcher with
--launcher, e.g. srun on a cluster), collect the JSON records into results/bench-<rev>.jsonl and
write the report (bench/report)."""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import plan  # noqa: E402
import records  # noqa: E402

try:  # The platform generator (platforms/platformgen.py), if this checkout has it.
    sys.path.insert(0, os.path.join(ROOT, "platforms"))
    import platformgen  # noqa: E402
except ImportError:  # pragma: no cover - older checkouts
    platformgen = None

sys.path.insert(0, os.path.join(ROOT, "sim", "calibration"))
import calibration_profile  # noqa: E402

# Collective algorithms named explicitly for every SMPI run: SMPI's automatic selectors probe
# the node layout with O(p^2) steps. These are the ones the records name.
SMPI_COLLECTIVES = {
    "bcast": "binomial_tree",
    "reduce": "binomial",
    "gather": "ompi_binomial",
    "allreduce": "rdb",
    "barrier": "ompi_recursivedoubling",
    "allgather": "rdb",
    "allgatherv": "mpich_rdb",
    "scatter": "ompi_binomial",
    "alltoall": "bruck",
    "alltoallv": "ompi",
    "reduce_scatter": "mpich_rdb",
}
# MPI_Scan / MPI_Iscan and MPI_Exscan have no selectable algorithm in SMPI 3.32.
SMPI_FIXED = {"scan": "smpi_builtin_scan", "exscan": "smpi_builtin_exscan"}

# SMPI injects smpi/test (MPI_Test) and smpi/iprobe (MPI_Iprobe) seconds per call, 100 us by
# default, to stop busy loops from freezing the clock. That is a simulator guard, not a machine
# property. Default here: 40 ns, the measured cost of MPI_Test on a pending request with Open MPI
# 4.1 on the project's machine (42 ns); nonzero, so polling loops still advance simulated time.
# SMPI's own collectives wait inside the library and pay nothing per poll; RBC's progress loop
# pays per call, so this value matters for small-message RBC times (--poll-cost changes it).
DEFAULT_POLL_COST = "4e-8"


class DriverError(Exception):
    pass


def log(message):
    print(message, file=sys.stderr, flush=True)


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---------------------------------------------------------------------------------------------
# Programs


def bazel_command():
    bazel = shutil.which("bazel")
    if not bazel:
        raise DriverError("'bazel' is not on PATH (./janus setup installs it)")
    return [bazel] + shlex.split(os.environ.get("JANUS_BAZEL_STARTUP", ""))


# The Bazel configuration of each real MPI (.bazelrc, sim/BUILD.bazel).
MPI_CONFIGS = {"openmpi": [], "mpich": ["--config=mpich"], "system": ["--config=system_mpi"]}


def build(names, backend, mpi):
    """Builds the programs of one backend; returns the bazel-bin directory holding them. The
    real-MPI build also writes sim/mpi_launcher.env there: the launcher of the MPI it linked."""
    targets = [f"//bench:{n}_{backend}" for n in names]
    if backend == "mpi":
        targets.append("//sim:mpi_launcher")
    bazel = bazel_command()
    # Optimised code: sorting's local work and RBC's local communicator creation are charged as
    # host CPU time, which an unoptimised (fastbuild) build would inflate several times.
    flags = (["-c", "opt"] + (MPI_CONFIGS[mpi] if backend == "mpi" else []) +
             shlex.split(os.environ.get("JANUS_BAZEL_FLAGS", "")))
    log(f"bench: building {len(targets)} targets ({' '.join(flags)})")
    result = subprocess.run(bazel + ["build"] + flags + targets, cwd=ROOT)
    if result.returncode != 0:
        raise DriverError(f"bazel build failed (status {result.returncode})")
    info = subprocess.run(bazel + ["info"] + flags + ["bazel-bin"], cwd=ROOT, capture_output=True, text=True)
    if info.returncode != 0:
        raise DriverError(f"bazel info bazel-bin failed: {info.stderr.strip()}")
    return info.stdout.strip()


def build_preload():
    """The charge library of calibrated simulations (sim/calibration/charge_preload.cpp)."""
    path = os.environ.get("JANUS_CHARGE_PRELOAD")
    if path:
        return path
    bazel = bazel_command()
    flags = shlex.split(os.environ.get("JANUS_BAZEL_FLAGS", ""))
    target = "//sim/calibration:libcharge_preload.so"
    if subprocess.run(bazel + ["build"] + flags + [target], cwd=ROOT).returncode != 0:
        raise DriverError(f"bazel build {target} failed")
    info = subprocess.run(bazel + ["info"] + flags + ["bazel-bin"], cwd=ROOT, capture_output=True, text=True)
    return os.path.join(info.stdout.strip(), "sim", "calibration", "libcharge_preload.so")


def program_path(bin_root, name, backend):
    """Where Bazel put <name>_<backend>: a shared object for smpi (lib<name>_smpi.so in Bazel 4)."""
    candidates = [os.path.join(bin_root, "bench", f"{name}_{backend}"),
                  os.path.join(bin_root, f"{name}_{backend}")]
    if backend == "smpi":
        candidates = [os.path.join(bin_root, "bench", f"lib{name}_smpi.so"),
                      os.path.join(bin_root, f"lib{name}_smpi.so")] + candidates
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise DriverError(f"no {name}_{backend} program under {bin_root}")


# ---------------------------------------------------------------------------------------------
# One job


class Platform:
    """The simulated machine of a run: XML, hostfile and a JSON-able description."""

    def __init__(self, name, params, np, scratch, profile=None):
        self.name = name
        self.cfg = []
        self.speed = None
        if platformgen is not None:
            try:
                given = platformgen.parse_assignments(params)
                if profile is not None:  # the profile's link figures unless -p gives them
                    known = set(platformgen.param_names(name))
                    for key, text in calibration_profile.platform_params(profile).items():
                        if key in known and key not in given and not (key == "bw" and "beta" in given):
                            given[key] = text
                built = platformgen.build(name, given, np)
                lines = built.hostfile_lines(np)
            except platformgen.ParamError as err:
                raise DriverError(f"platform {name}: {err}") from None
            self.xml = os.path.join(scratch, f"{name}.xml")
            self.hostfile = os.path.join(scratch, "hostfile")
            with open(self.xml, "w") as f:
                f.write(built.xml)
            with open(self.hostfile, "w") as f:
                f.write("\n".join(lines) + "\n")
            self.summary = built.summary()
            self.cfg = list(built.smpi_cfg)
            self.speed = built.values["speed"]
        else:
            # Fallback for checkouts without the generator: the tests' flat cluster.
            self.name = "test_cluster"
            self.xml = os.path.join(ROOT, "platforms", "test_cluster.xml")
            self.hostfile = None
            self.summary = {"name": "test_cluster", "file": "platforms/test_cluster.xml"}
            self.speed = 1e9


def smpi_command(job, program, platform, poll_cost, profile=None, preload=None):
    cmd = ["smpirun", "-np", str(job.p), "-platform", platform.xml]
    if platform.hostfile:
        cmd += ["-hostfile", platform.hostfile]
    if preload:
        cmd += ["-wrapper", f"env LD_PRELOAD={preload}"]
    cmd += ["-no-privatize", "--cfg=contexts/guard-size:0", f"--cfg=contexts/stack-size:{job.stack_kib}",
            "--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0", "--cfg=network/crosstraffic:0"]
    if profile is not None:
        # Calibrated: overheads, probe/test costs, collectives, charges from the profile;
        # computation charged by the profile's kernel costs, never host time.
        cmd += calibration_profile.collective_cfg(profile) or [
            f"--cfg=smpi/{c}:{a}" for c, a in SMPI_COLLECTIVES.items()]
        cmd += calibration_profile.smpi_cfg(profile)
        cmd += ["--cfg=" + c if not c.startswith("--cfg=") else c for c in platform.cfg]
        cmd += [f"--cfg={c}" for c in job.sim_cfg] + ["--log=root.thres:warning"]
        return cmd + [program]
    cmd += [f"--cfg=smpi/test:{poll_cost}", f"--cfg=smpi/iprobe:{poll_cost}"]
    cmd += [f"--cfg=smpi/{c}:{a}" for c, a in SMPI_COLLECTIVES.items()]
    if job.compute == "charged":
        cmd += ["--cfg=smpi/simulate-computation:yes", f"--cfg=smpi/host-speed:{platform.speed!r}"]
    else:
        cmd += ["--cfg=smpi/simulate-computation:no"]
    cmd += ["--cfg=" + c if not c.startswith("--cfg=") else c for c in platform.cfg]
    cmd += [f"--cfg={c}" for c in job.sim_cfg]
    cmd += ["--log=root.thres:warning"]
    return cmd + [program]


def linked_flavor(program):
    """The MPI family a program is linked against ("openmpi", "mpich" for MPICH and its
    derivatives) from its dynamic section, or None if that cannot be told."""
    try:
        out = subprocess.run(["readelf", "-d", program], capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL="C")).stdout
    except OSError:
        return None
    needed = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line and "[" in line]
    if any(n.startswith("libmpich") or n == "libmpi.so.12" for n in needed):
        return "mpich"
    if any(n.startswith("libmpi.so.") for n in needed):
        return "openmpi"
    return None


def read_launcher_file(path):
    """JANUS_MPI_FLAVOR and JANUS_MPI_LAUNCHER from a sim/mpi_launcher.env, or {}."""
    values = {}
    try:
        with open(path) as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep and not key.startswith("#"):
                    values[key] = value
    except OSError:
        pass
    return values


class Launcher:
    """How real-MPI jobs start. `template` is a command prefix in which {np} stands for the
    number of ranks (the program and its arguments follow it), e.g. "srun -n {np}" or
    "mpirun -np {np}"; without one, the local launcher of the MPI the programs were linked
    against, with the options this machine needs (Open MPI: run as root, oversubscribe)."""

    def __init__(self, flavor, local_command, template=None, platform=None):
        self.flavor = flavor
        self.local_command = local_command
        self.template = template
        self.local = template is None
        self.platform = platform or f"{flavor}-{'local' if self.local else 'cluster'}"

    def describe(self):
        if self.template is not None:
            return self.template
        if self.flavor == "openmpi":
            return f"{self.local_command} --oversubscribe -np {{np}}"
        return f"{self.local_command} -n {{np}}"

    def executable(self):
        words = shlex.split(self.template) if self.template is not None else [self.local_command]
        return words[0] if words else ""

    def command(self, p, program, scratch):
        if self.template is not None:
            return [w.replace("{np}", str(p)) for w in shlex.split(self.template)] + [program]
        if self.flavor == "openmpi":
            # Shared-memory files in the run's own directory; the context reaches every rank.
            return [self.local_command, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                    "-np", str(p), "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
                    "--mca", "btl_vader_backing_directory", scratch,
                    "--mca", "shmem_mmap_backing_file_base_dir", scratch,
                    "-x", "JANUS_BENCH_PLATFORM", "-x", "JANUS_BENCH_PLATFORM_PARAMS",
                    "-x", "JANUS_BENCH_REV", "-x", "JANUS_BENCH_EXTRA", program]
        # Hydra (MPICH and relatives) passes the environment on and oversubscribes by itself.
        return [self.local_command, "-n", str(p), program]

    def platform_params(self, p):
        if self.local:
            return {"name": self.platform, "host_cores": os.cpu_count(),
                    "oversubscribed": p > (os.cpu_count() or 1)}
        params = {"name": self.platform, "launcher": self.template}
        # Inside a Slurm allocation, its shape.
        for key, var in (("nodes", "SLURM_JOB_NUM_NODES"), ("tasks_per_node", "SLURM_NTASKS_PER_NODE"),
                         ("cpus_per_task", "SLURM_CPUS_PER_TASK"), ("partition", "SLURM_JOB_PARTITION"),
                         ("cluster", "SLURM_CLUSTER_NAME")):
            if os.environ.get(var):
                params[key] = os.environ[var]
        return params


def choose_launcher(args, program, launcher_file):
    """The Launcher for real-MPI runs of `program`, consistent with the MPI it is linked against."""
    written = read_launcher_file(launcher_file) if launcher_file else {}
    linked = linked_flavor(program)
    flavor = written.get("JANUS_MPI_FLAVOR") or (None if args.mpi == "system" else args.mpi)
    if args.programs and args.mpi == "openmpi" and linked:
        flavor = linked  # --programs DIR: the programs say which MPI they need
    flavor = flavor or linked or "openmpi"
    if linked and linked != flavor:
        raise DriverError(f"{program} is linked against {linked}, but --mpi {args.mpi} launches {flavor}; "
                          "build and run with the same MPI")
    local = written.get("JANUS_MPI_LAUNCHER") or (
        shutil.which("mpirun.openmpi") or "mpirun" if flavor == "openmpi" else shutil.which("mpiexec.mpich") or "mpiexec")
    return Launcher(flavor, local, args.launcher, args.mpi_platform)


def algorithms_argument(backend, flavor=None):
    if backend == "smpi":
        algs = dict(SMPI_COLLECTIVES)
        algs.update(SMPI_FIXED)
    else:
        # The library's own choice: Open MPI's tuned component, MPICH's default selection.
        name = "openmpi_tuned_default" if flavor == "openmpi" else f"{flavor or 'mpi'}_default"
        algs = {c: name for c in ("bcast", "reduce", "allreduce", "scan", "exscan", "gather", "allgather", "barrier")}
    return "--mpi-algorithms=" + ",".join(f"{c}:{a}" for c, a in sorted(algs.items()))


def run_job(job, program, args, rev, heartbeat, label="", running=None, launcher=None, profile=None,
            preload=None):
    """Runs one job; returns (records, error message or None, wall seconds). label prefixes its
    progress lines (several jobs may run at once)."""
    scratch = tempfile.mkdtemp(prefix="janus-bench.")
    try:
        env = dict(os.environ)
        if job.backend == "smpi":
            platform = Platform(args.platform, args.param, job.p, scratch, profile)
            cmd = smpi_command(job, program, platform, args.poll_cost, profile, preload)
            env["JANUS_BENCH_PLATFORM"] = platform.name
            env["JANUS_BENCH_PLATFORM_PARAMS"] = json.dumps(platform.summary, separators=(",", ":"))
            extra = {"compute": job.compute, "launcher": "smpirun", "poll_cost_s": float(args.poll_cost),
                     "sim_options": " ".join(c for c in cmd if c.startswith("--cfg=") or c == "-no-privatize")}
            if profile is not None:
                env.update(calibration_profile.environment(profile))
                extra.update({"compute": "calibrated", "calibration": profile["name"]})
        else:
            cmd = launcher.command(job.p, program, scratch)
            if launcher.local:
                env["TMPDIR"] = scratch
                env["PMIX_MCA_gds"] = "hash"
            env["JANUS_BENCH_PLATFORM"] = launcher.platform
            env["JANUS_BENCH_PLATFORM_PARAMS"] = json.dumps(launcher.platform_params(job.p), separators=(",", ":"))
            extra = {"compute": "real", "launcher": launcher.describe(), "mpi_family": launcher.flavor}
        env["JANUS_BENCH_REV"] = rev
        env["JANUS_BENCH_EXTRA"] = json.dumps(extra, separators=(",", ":"))
        # The driver knows the run's context; it stamps it on every record itself, since a
        # launcher on a cluster need not pass the environment on to rank 0.
        context = {"platform": env["JANUS_BENCH_PLATFORM"],
                   "platform_params": json.loads(env["JANUS_BENCH_PLATFORM_PARAMS"]), "rev": rev, **extra}
        cmd += [algorithms_argument(job.backend, launcher.flavor if launcher else None)] + job.args
        if args.verbose:
            log(f"{label}+ " + " ".join(shlex.quote(c) for c in cmd))

        found, problems, tail = [], [], []
        start = time.monotonic()
        # Separate pipes: mpirun forwards the ranks' stdout and stderr independently, and on one
        # pipe a progress note on stderr can land inside a long record line.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True, cwd=scratch)
        if running is not None:
            running.add(proc)
        tail_lock = threading.Lock()

        def keep(line):
            with tail_lock:
                tail.append(line)
                del tail[:-40]

        def pump_errors():
            for raw in iter(proc.stderr.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                keep(line)
                if line.startswith("bench:") and args.verbose:
                    log(f"    {label}" + line)

        def pump():
            for raw in iter(proc.stdout.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if line.startswith(records.PREFIX):
                    try:
                        rec = json.loads(line[len(records.PREFIX):])
                        rec.update(context)
                        missing = records.missing_fields(rec)
                        if missing:
                            problems.append(f"record without {', '.join(missing)}: {line}")
                        found.append(rec)
                    except json.JSONDecodeError as err:
                        problems.append(f"malformed record ({err}): {line}")
                else:
                    keep(line)
                    if line.startswith("bench:") and args.verbose:
                        log(f"    {label}" + line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        error_reader = threading.Thread(target=pump_errors, daemon=True)
        error_reader.start()
        next_beat = start + heartbeat
        timed_out = False
        while proc.poll() is None:
            time.sleep(0.2)
            now = time.monotonic()
            if now - start > job.timeout:
                timed_out = True
                os.killpg(proc.pid, 9)
                break
            if heartbeat > 0 and now >= next_beat:
                log(f"    {label}... {now - start:.0f} s, {len(found)} record(s) so far")
                next_beat = now + heartbeat
        status = proc.wait()
        if running is not None:
            running.discard(proc)
        reader.join(timeout=10)
        error_reader.join(timeout=10)
        wall = time.monotonic() - start
        error = None
        joined = "\n".join(tail)
        if timed_out:
            error = f"timeout after {job.timeout} s"
        elif status != 0:
            error = f"exit status {status}"
        elif "MPI_Abort was called" in joined or "Deadlock detected" in joined:
            error = "aborted or deadlocked (see output)"
        elif problems:
            error = problems[0]
        elif not found:
            error = "no records produced"
        if error:
            log(f"    {label}output tail:\n      " + "\n      ".join(tail[-15:]))
        return found, error, wall
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Main


def available_memory_gib():
    """MemAvailable from /proc/meminfo in GiB (assume plenty where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 1e9


def make_parser():
    parser = argparse.ArgumentParser(
        prog="bench/run",
        description="Run the Janus benchmarks (paper figs. 4-9) on SMPI and on a real MPI (Open MPI, MPICH or "
                    "the machine's own; locally or with --launcher on a cluster) and write "
                    "results/bench-<rev>.jsonl plus results/report.md with plots.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small p, minutes (default; CI smoke test)")
    mode.add_argument("--full", action="store_true", help="the paper's figures up to --max-p ranks (hours)")
    mode.add_argument("--medium", action="store_true",
                      help="p up to 4096 (sorting 512) plus the headline 2^15 points; about an hour")
    mode.add_argument("--smoke", action="store_true", help="one tiny run per program and backend (seconds)")
    parser.add_argument("--max-p", type=int, default=2**15, help="largest simulated p in --full / --medium (default 32768)")
    parser.add_argument("--min-p", type=int, default=1, help="skip runs with fewer ranks (e.g. to run only the largest)")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(plan.BENCHMARKS)}")
    parser.add_argument("--backends", default="smpi,mpi", help="smpi, mpi or both (default smpi,mpi)")
    parser.add_argument("--platform", default="supermuc", help="simulated platform (platforms/platformgen.py; default supermuc)")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="platform parameter, e.g. -p alpha=1us (repeatable)")
    parser.add_argument("--poll-cost", default=DEFAULT_POLL_COST, metavar="SECONDS",
                        help="simulated cost of one MPI_Test / MPI_Iprobe (smpi/test, smpi/iprobe; default "
                             f"{DEFAULT_POLL_COST}, measured with Open MPI here)")
    parser.add_argument("--mpi", choices=sorted(MPI_CONFIGS), default="openmpi",
                        help="the real MPI the mpi backend is built against: openmpi (default), mpich "
                             "(--config=mpich) or system (--config=system_mpi: the machine's MPI from MPI_HOME, "
                             "JANUS_MPICXX or the mpicxx on PATH)")
    parser.add_argument("--launcher", metavar="COMMAND",
                        help="start real-MPI runs with COMMAND followed by the program, {np} standing for the "
                             "number of ranks, e.g. \"srun -n {np}\" or \"mpirun -np {np}\" (default: the local "
                             "launcher of the MPI built against, oversubscribing this machine)")
    parser.add_argument("--mpi-np", metavar="LIST", default="",
                        help="run every real-MPI benchmark at these rank counts instead of the mode's "
                             "(comma-separated, e.g. 64,128,256 across nodes)")
    parser.add_argument("--mpi-platform", metavar="NAME",
                        help="platform name in real-MPI records (default <mpi>-local, or <mpi>-cluster with --launcher)")
    parser.add_argument("--calibration", metavar="PROFILE",
                        help="calibration profile for every simulation (a JSON file or a built-in: "
                             + ", ".join(calibration_profile.builtin_names())
                             + "); replaces --poll-cost and the compute mode (docs/calibration.md)")
    parser.add_argument("--programs", metavar="DIR", help="use the programs in DIR instead of building them")
    parser.add_argument("--out", default=os.path.join(ROOT, "results"), help="output directory (default results/)")
    parser.add_argument("--rev", help="revision to record (default: git rev-parse HEAD, '-dirty' if modified)")
    parser.add_argument("--no-report", action="store_true", help="only collect the records")
    parser.add_argument("--heartbeat", type=float, default=30, help="progress every N s inside a run (0 = never)")
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="runs at once (default 1). Each simulation uses one core; keep N <= cores, and "
                             "runs start only while the memory they need (up to ~17 GiB "
                             "at 2^15 ranks) is available")
    parser.add_argument("--dry-run", action="store_true", help="list the runs, do not run them")
    parser.add_argument("--verbose", "-v", action="store_true", help="show commands and per-measurement progress")
    return parser


def select_jobs(args):
    if args.full:
        jobs, mode = plan.full(args.max_p), "full"
    elif args.medium:
        jobs, mode = plan.medium(args.max_p), "medium"
    elif args.smoke:
        jobs, mode = plan.smoke(), "smoke"
    else:
        jobs, mode = plan.quick(), "quick"
    only = [x for x in args.only.split(",") if x]
    unknown = [x for x in only if x not in plan.BENCHMARKS]
    if unknown:
        raise DriverError(f"--only: unknown benchmark(s) {', '.join(unknown)}; valid: {', '.join(plan.BENCHMARKS)}")
    backends = [b for b in args.backends.split(",") if b]
    if not backends or any(b not in ("smpi", "mpi") for b in backends):
        raise DriverError(f"--backends must name smpi and/or mpi, got '{args.backends}'")
    jobs = [j for j in jobs if (not only or j.benchmark in only) and j.backend in backends]
    if args.mpi_np:
        try:
            counts = [int(x) for x in args.mpi_np.split(",") if x]
        except ValueError:
            counts = []
        if not counts or min(counts) < 1:
            raise DriverError(f"--mpi-np must be a comma-separated list of positive rank counts, got '{args.mpi_np}'")
        real = []
        for job in jobs:
            if job.backend == "mpi" and not any(r.benchmark == job.benchmark and r.args == job.args for r in real):
                real += [plan.Job(job.benchmark, "mpi", p, job.args, timeout=job.timeout) for p in counts]
        jobs = [j for j in jobs if j.backend != "mpi"] + real
    jobs = [j for j in jobs if j.p >= args.min_p]
    return jobs, mode, backends


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        jobs, mode, backends = select_jobs(args)
        if not jobs:
            raise DriverError("nothing to run (check --only and --backends)")
        rev = args.rev or git_revision()
        if args.dry_run:
            for i, job in enumerate(jobs, 1):
                print(f"[{i}/{len(jobs)}] {job.describe()}")
            return 0
        if "smpi" in backends and shutil.which("smpirun") is None:
            raise DriverError("'smpirun' not found (./janus setup installs it)")
        profile = preload = None
        if args.calibration:
            try:
                profile = calibration_profile.load(args.calibration)
            except calibration_profile.ProfileError as err:
                raise DriverError(str(err)) from None
            if "smpi" in backends:
                preload = build_preload()
        used_backends = sorted({j.backend for j in jobs})
        programs, launcher = {}, None
        for backend in used_backends:
            names = sorted({j.benchmark for j in jobs if j.backend == backend})
            bin_root = os.path.abspath(args.programs) if args.programs else build(names, backend, args.mpi)
            for n in names:
                programs[(n, backend)] = program_path(bin_root, n, backend)
            if backend == "mpi":
                launcher_file = None if args.programs else os.path.join(bin_root, "sim", "mpi_launcher.env")
                launcher = choose_launcher(args, programs[(names[0], "mpi")], launcher_file)
                if shutil.which(launcher.executable()) is None:
                    raise DriverError(f"launcher '{launcher.executable()}' not found")
                log(f"bench: real-MPI runs ({launcher.flavor}) start with: {launcher.describe()}")

        os.makedirs(args.out, exist_ok=True)
        out_file = os.path.join(args.out, f"bench-{rev}.jsonl")
        log(f"bench: {mode} mode, {len(jobs)} runs, revision {rev}, platform {args.platform} "
            f"{' '.join(args.param)}".rstrip() + f"; records -> {out_file}")
        if args.jobs < 1:
            raise DriverError(f"--jobs must be at least 1, got {args.jobs}")
        failures = []
        total_records = 0
        started = time.monotonic()
        lock = threading.Lock()
        pending = list(enumerate(jobs, 1))
        running = set()  # simulations in flight, killed if the driver is interrupted

        # Memory admission: a job starts only while the estimates of the jobs in flight plus its own
        # fit into the memory that was available at the start (one job always may run).
        budget = available_memory_gib() * 0.85
        in_use = [0.0]
        changed = threading.Condition(lock)

        def next_job():
            with changed:
                while pending:
                    for k, (i, job) in enumerate(pending):
                        if in_use[0] == 0 or in_use[0] + job.mem_gib <= budget:
                            in_use[0] += job.mem_gib
                            return pending.pop(k)
                    changed.wait()
                return None

        def worker(out):
            nonlocal total_records
            while True:
                picked = next_job()
                if picked is None:
                    return
                i, job = picked
                label = f"[{i}/{len(jobs)}] " if args.jobs > 1 else ""
                log(f"[{i}/{len(jobs)}] {job.describe()}")
                found, error, wall = run_job(job, programs[(job.benchmark, job.backend)], args, rev,
                                             args.heartbeat, label, running, launcher, profile, preload)
                with lock:
                    for rec in found:
                        rec["mode"] = mode
                        out.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    out.flush()
                    total_records += len(found)
                    status = "ok" if error is None else f"FAILED: {error}"
                    log(f"    {label}{status}; {len(found)} record(s) in {wall:.1f} s "
                        f"(total {time.monotonic() - started:.0f} s)")
                    if error:
                        failures.append({"job": job.describe(), "error": error})
                    in_use[0] -= job.mem_gib
                    changed.notify_all()

        def run_phase(count, out):
            workers = [threading.Thread(target=worker, args=(out,), daemon=True)
                       for _ in range(min(count, len(pending)))]
            for w in workers:
                w.start()
            try:
                for w in workers:
                    while w.is_alive():
                        w.join(timeout=0.5)
            except KeyboardInterrupt:
                with changed:
                    pending.clear()
                    changed.notify_all()
                for proc in list(running):
                    os.killpg(proc.pid, 9)
                raise

        with open(out_file, "w") as out:
            # Real-MPI runs measure wall time: they run alone, one after the other, before the
            # simulations (whose simulated times do not depend on the load).
            simulated = [(i, j) for i, j in pending if j.backend == "smpi"]
            pending[:] = [(i, j) for i, j in pending if j.backend != "smpi"]
            run_phase(1, out)
            pending[:] = simulated
            run_phase(args.jobs, out)
        log(f"bench: {total_records} records in {out_file}; {len(failures)} failed run(s)")
        if failures:
            with open(os.path.join(args.out, f"bench-{rev}.failures.json"), "w") as f:
                json.dump(failures, f, indent=2)
        if not args.no_report:
            import report  # noqa: E402
            report.generate([out_file], args.out, failures=failures)
        return 1 if failures else 0
    except DriverError as err:
        log(f"bench: error: {err}")
        return 2
    except KeyboardInterrupt:
        log("bench: interrupted")
        return 130
