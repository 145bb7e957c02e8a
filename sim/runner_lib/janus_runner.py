"""Implementation of sim/runner: simulate one Janus program on a modelled machine.

The runner turns "program, platform, ranks, parameters" into one smpirun invocation with the
options large simulations need, watches it (forwarding output, heartbeat, timeout, deadlock
detection) and reports simulated time, wall time, peak memory and simulated ranks per second.
"""

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "platforms"))
sys.path.insert(0, os.path.join(ROOT, "sim", "calibration"))

import platformgen  # noqa: E402  (lives in platforms/, found through ROOT)
import calibration_profile as calibration  # noqa: E402  (sim/calibration/)

PRELOAD_LABEL = "//sim/calibration:libcharge_preload.so"

# Collective algorithms named explicitly: SMPI's default selectors include O(P^2) steps (linear
# reduce + bcast for allreduce, ring allgather probes), which dominate at thousands of ranks.
LARGE_RUN_COLLECTIVES = {
    "allreduce": "rdb",
    "bcast": "binomial_tree",
    "reduce": "binomial",
    "barrier": "ompi_recursivedoubling",
    "allgather": "rdb",
    "allgatherv": "mpich_rdb",
    "gather": "ompi_binomial",
    "scatter": "ompi_binomial",
    "alltoall": "bruck",
    "alltoallv": "ompi",
    "reduce_scatter": "mpich_rdb",
}

# Simulated cost of one MPI_Iprobe / MPI_Test without a profile: Open MPI 4.1's measured ~40 ns
# (./janus calibrate on the development machine) instead of SMPI's 1e-4 s default, which made
# every probe-then-receive exchange cost ~100 us (the constant ~403 us hypercube phases). Never
# 0: a polling loop would livelock. A profile or --cfg=smpi/iprobe:... overrides it.
DEFAULT_POLL_COST = "4e-08"

EXIT_DEADLOCK = 3
EXIT_TIMEOUT = 4
EXIT_USAGE = 2

EXAMPLES = """\
examples (one per platform; a Bazel label is built first, a path is used as is):
  # JQuick, SuperMUC-like, 4096 ranks (1 island), n/p = 256 uniform, alpha = 1.5 us per hop
  sim/runner //bench:sort --platform supermuc --np 4096 -p alpha=1.5us --deterministic -- --nps=256 --distributions=uniform --impls=jquick_rbc
  # JUQUEEN-like 5D torus partition 4x4x4x4x2 (512 nodes), 8192 ranks
  sim/runner //sim/tests:netcheck --platform juqueen -p dims=4x4x4x4x2 --np 8192 -- barrier
  # flat cluster of 8 nodes with 2 cores each, beta given as time per byte
  sim/runner //sim/tests:netcheck --platform cluster -p nodes=8 -p cores=2 -p beta=0.1ns --np 16 -- pingpong 1 1024
  # generic fat tree from SimGrid parameters, with a user --cfg passed through
  sim/runner //sim/tests:netcheck --platform fattree -p topo='2;8,8;1,8;1,1' --np 1024 --cfg=smpi/bcast:NTSL -- barrier
  # 3D torus 8x8x8, JSON record to a file
  sim/runner //sim/tests:netcheck --platform torus -p dims=8x8x8 --np 512 -p cores=1 --json run.json -- barrier
  # the same program at several sizes, one after the other, with a table at the end (docs/scale.md)
  sim/runner //sim/tests:netcheck --platform supermuc --np 1024,4096,16384,32768 --deterministic --rendezvous -- barrier
"""


class RunnerError(Exception):
    """A problem with the user's request; printed as 'runner: <message>' with exit status 2."""


# ---------------------------------------------------------------------------------------------
# Command line


def make_parser():
    parser = argparse.ArgumentParser(
        prog="sim/runner",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s PROGRAM --np N [--platform NAME] [-p KEY=VALUE]... [options] [-- PROGRAM_ARGS]",
        description=(
            "Simulate one MPI program (its SMPI twin, a *_smpi shared object) on a modelled machine.\n"
            "PROGRAM is a Bazel label (//pkg:name, built first; '_smpi' is appended if missing) or a\n"
            "path to the shared object. Ranks are packed per node (ranks 0..cores-1 on node 0, ...).\n\n"
            "Network model: alpha is the latency of ONE link (hop), beta = 1/bw the time per byte;\n"
            "an uncontended message of l bytes between nodes h hops apart takes h*alpha + l*beta.\n"
            "SMPI's calibration factors are off by default (network/model:CM02, TCP-gamma:0,\n"
            "crosstraffic:0) so the platform parameters mean exactly that; --smpi-model restores them.\n\n"
            "Platforms and their parameters (defaults and sources): --list-platforms, docs/platforms.md."
        ),
        epilog=EXAMPLES + (
            "\nexit status: the program's own status; 2 = bad request, 3 = deadlock in the simulation,\n"
            "4 = timeout. Through the launcher: ./janus run ARGS; through Bazel: bazel run //sim:run -- ARGS."
        ),
    )
    parser.add_argument("program", nargs="?", help="Bazel label or path of the *_smpi shared object")
    parser.add_argument("--np", "-n", help="rank count, or a comma-separated list for a sweep")
    parser.add_argument("--platform", default="cluster",
                        help=f"one of {', '.join(platformgen.PLATFORMS)} (default cluster), or an XML file")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="platform parameter, e.g. -p alpha=1.5us -p islands=4 (repeatable)")
    parser.add_argument("--hostfile", help="with an XML --platform: hostfile to use (one host per rank)")
    parser.add_argument("--oversubscribe", action="store_true",
                        help="allow more ranks than cores (ranks wrap around the nodes)")
    parser.add_argument("--deterministic", action="store_true",
                        help="do not charge host CPU time (smpi/simulate-computation:no): bit-identical runs")
    parser.add_argument("--calibration", metavar="PROFILE",
                        help="calibration profile (a JSON file or a built-in: "
                             + ", ".join(calibration.builtin_names()) + "): per-message overheads, "
                             "probe/test costs, link latency and bandwidth, collective selector, "
                             "communicator creation and computation charged as calibrated; implies "
                             "--deterministic (docs/calibration.md)")
    parser.add_argument("--smpi-model", action="store_true",
                        help="keep SMPI's calibrated network model instead of the pure alpha-beta one")
    parser.add_argument("--rendezvous", action="store_true",
                        help="no eager (detached) sends: every send waits for its receiver "
                             "(smpi/send-is-detached-thresh:0). Removes SMPI's per-message O(P) cost "
                             "when thousands of small messages are in flight; needs MPI-correct "
                             "programs that never rely on send buffering")
    parser.add_argument("--stack-size", type=int, default=512, metavar="KIB",
                        help="stack per simulated rank in KiB (default 512)")
    parser.add_argument("--default-collectives", action="store_true",
                        help="let SMPI select collective algorithms itself (slow at scale)")
    parser.add_argument("--cfg", action="append", default=[], metavar="KEY:VALUE",
                        help="extra SimGrid option, passed through (repeatable; overrides the runner's)")
    parser.add_argument("--timeout", type=float, default=0, metavar="SECONDS",
                        help="kill the simulation after this wall time (0 = none)")
    parser.add_argument("--heartbeat", type=float, default=10, metavar="SECONDS",
                        help="print progress every SECONDS of wall time (0 = never; default 10)")
    parser.add_argument("--json", metavar="FILE", help="write a machine-readable record ('-' = stdout)")
    parser.add_argument("--keep", action="store_true", help="keep the generated platform and hostfile")
    parser.add_argument("--dry-run", action="store_true", help="print the smpirun command, do not run")
    parser.add_argument("--quiet", action="store_true", help="do not forward the program's standard output (errors still show)")
    parser.add_argument("--list-platforms", action="store_true", help="list platforms and parameters")
    return parser


def split_program_args(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def parse_np_list(text):
    if not text:
        raise RunnerError("--np is required (the number of simulated ranks)")
    counts = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)|2\^(\d+)", part)
        if not match:
            raise RunnerError(f"--np: '{part}' is not a positive integer (or 2^k)")
        n = int(match.group(1)) if match.group(1) else 2 ** int(match.group(2))
        if n < 1:
            raise RunnerError("--np must be at least 1")
        counts.append(n)
    return counts


# ---------------------------------------------------------------------------------------------
# The program


def _elf_kind(path):
    """'shared' for a shared object, 'executable' for an executable (PIE or not), None if not ELF."""
    with open(path, "rb") as f:
        header = f.read(64)
        if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2:
            return None
        e_type = struct.unpack_from("<H", header, 16)[0]
        if e_type == 2:
            return "executable"
        if e_type != 3:
            return None
        phoff = struct.unpack_from("<Q", header, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", header, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        for i in range(phnum):
            if struct.unpack_from("<I", table, i * phentsize)[0] == 3:  # PT_INTERP
                return "executable"
        return "shared"


def _workspace():
    return os.environ.get("BUILD_WORKSPACE_DIRECTORY") or ROOT


def _bazel_command():
    bazel = shutil.which("bazel")
    if not bazel:
        raise RunnerError("a Bazel label needs 'bazel' on PATH (./janus setup installs it)")
    # JANUS_BAZEL_STARTUP lets tools give startup options such as --output_base.
    return [bazel] + shlex.split(os.environ.get("JANUS_BAZEL_STARTUP", ""))


def resolve_program(spec, log, suffix=True):
    looks_like_relative_label = re.fullmatch(r"[\w/.-]*:[\w.-]+", spec) and not os.path.exists(spec)
    if not spec.startswith("//") and looks_like_relative_label:
        raise RunnerError(f"'{spec}': give an absolute Bazel label like //sim/tests:netcheck")
    if spec.startswith("//"):
        label = spec
        package, _, name = label[2:].partition(":")
        if not name:
            name = package.rsplit("/", 1)[-1]
        if suffix and name.endswith("_mpi"):
            raise RunnerError(f"{label} is the Open MPI twin; the simulator runs {label[:-4]}_smpi")
        if suffix and not name.endswith("_smpi"):
            name += "_smpi"
        target = f"//{package}:{name}"
        bazel = _bazel_command()
        log(f"runner: building {target}")
        build = subprocess.run(bazel + ["build"] + shlex.split(os.environ.get("JANUS_BAZEL_FLAGS", ""))
                               + [target], cwd=_workspace())
        if build.returncode != 0:
            raise RunnerError(f"bazel build {target} failed (status {build.returncode})")
        info = subprocess.run(bazel + ["info", "bazel-bin"], cwd=_workspace(), capture_output=True, text=True)
        if info.returncode != 0:
            raise RunnerError(f"bazel info bazel-bin failed: {info.stderr.strip()}")
        outputs = os.path.join(info.stdout.strip(), package)
        # cc_binary(linkshared = True) names its output lib<name>.so
        candidates = [os.path.join(outputs, f) for f in (f"lib{name}.so", f"{name}.so", name)]
        path = next((c for c in candidates if os.path.isfile(c)), candidates[0])
    else:
        # Resolved now: building the charge preload afterwards (default compilation mode) re-points
        # the bazel-bin symlink, and bazel-bin/... would then name another build's program.
        path = os.path.realpath(spec)
    if not suffix:
        return path
    if not os.path.isfile(path):
        raise RunnerError(f"program '{path}' does not exist")
    kind = _elf_kind(path)
    if kind != "shared":
        what = "an executable" if kind == "executable" else "not an ELF file"
        raise RunnerError(f"program '{path}' is {what}; smpirun needs the SMPI twin, a shared "
                          "object (the *_smpi target of mpi_smpi_binary)")
    return path


# ---------------------------------------------------------------------------------------------
# One simulation


class Monitor:
    """Forwards the child's output, remembers what the summary needs, and measures memory."""

    SIM_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")
    DEADLOCK = re.compile(r"Deadlock detected")
    STUCK = re.compile(r"Actor (\d+) \(([^@)]*)@([^)]*)\):? (.*)")

    def __init__(self):
        self.sim_time = None
        self.deadlock = False
        self.stuck = []
        self.lines = 0
        self.lock = threading.Lock()

    def pump(self, stream, sink, forward):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            with self.lock:
                self.lines += 1
                m = self.SIM_TIME.search(line)
                if m:
                    self.sim_time = float(m.group(1))
                if self.DEADLOCK.search(line):
                    self.deadlock = True
                m = self.STUCK.search(line)
                if m and self.deadlock:
                    self.stuck.append({"actor": int(m.group(1)), "rank": m.group(2), "host": m.group(3),
                                       "state": m.group(4).strip()})
            if forward:
                sink.write(line)
                sink.flush()
        stream.close()


def _tree_rss_bytes(pid):
    """Resident memory of pid and its descendants (Linux /proc), for the heartbeat."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return total


def _fmt_bytes(n):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def _fmt_seconds(s):
    return f"{s:.1f} s" if s >= 10 else f"{s:.3f} s"


def resolve_preload(log):
    """The charge library for calibrated runs: $JANUS_CHARGE_PRELOAD, or built by Bazel."""
    path = os.environ.get("JANUS_CHARGE_PRELOAD")
    if not path:
        path = resolve_program(PRELOAD_LABEL, log, suffix=False)
    if not os.path.isfile(path):
        raise RunnerError(f"charge library '{path}' does not exist")
    if re.search(r"\s", path):
        raise RunnerError(f"charge library path '{path}' contains a space (smpirun splits -wrapper)")
    return os.path.abspath(path)


def smpi_options(args, built, profile=None):
    opts = [f"--cfg=contexts/guard-size:0", f"--cfg=contexts/stack-size:{args.stack_size}"]
    if not args.smpi_model:
        opts += ["--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0", "--cfg=network/crosstraffic:0"]
    if profile is not None and not args.default_collectives and calibration.collective_cfg(profile):
        opts += calibration.collective_cfg(profile)
    elif not args.default_collectives:
        opts += [f"--cfg=smpi/{coll}:{alg}" for coll, alg in LARGE_RUN_COLLECTIVES.items()]
    if args.rendezvous:
        opts.append("--cfg=smpi/send-is-detached-thresh:0")
    if args.deterministic:
        opts.append("--cfg=smpi/simulate-computation:no")
    elif built is not None:
        # Host CPU time is charged 1:1 as time on one modelled core.
        opts.append(f"--cfg=smpi/host-speed:{built.values['speed']!r}f")
    if built is not None:
        opts += built.smpi_cfg
    if profile is not None:
        opts += calibration.smpi_cfg(profile)
    else:
        opts += [f"--cfg=smpi/iprobe:{DEFAULT_POLL_COST}", f"--cfg=smpi/test:{DEFAULT_POLL_COST}"]
    opts += ["--cfg=smpi/display-timing:yes", "--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning",
             "--log=smpi_coll.thres:warning"]
    opts += [c if c.startswith("--cfg=") else "--cfg=" + c for c in args.cfg]
    return opts


def run_one(args, program, program_args, np, log, profile=None, preload=None):
    """Runs one simulation; returns the JSON-able record."""
    scratch = tempfile.mkdtemp(prefix="janus-run.")
    built = None
    if os.path.isfile(args.platform):
        platform_file = os.path.abspath(args.platform)
        if args.param:
            raise RunnerError("-p/--param applies to generated platforms, not to an XML file")
        hostfile = os.path.abspath(args.hostfile) if args.hostfile else None
        description = f"platform file {platform_file}" + (f", hostfile {hostfile}" if hostfile else "")
    else:
        if args.hostfile:
            raise RunnerError("--hostfile is only for an XML --platform; generated platforms pack ranks per node")
        try:
            params = platformgen.parse_assignments(args.param)
            if profile is not None:
                # The profile's link figures, unless the user gave them (-p wins).
                known = set(platformgen.param_names(args.platform))
                for key, text in calibration.platform_params(profile).items():
                    if key in known and key not in params and not (key == "bw" and "beta" in params):
                        params[key] = text
            built = platformgen.build(args.platform, params, np)
            lines = built.hostfile_lines(np, args.oversubscribe)
        except platformgen.ParamError as err:
            raise RunnerError(str(err)) from None
        platform_file = os.path.join(scratch, f"{args.platform}.xml")
        hostfile = os.path.join(scratch, "hostfile")
        with open(platform_file, "w") as f:
            f.write(built.xml)
        with open(hostfile, "w") as f:
            f.write("\n".join(lines) + "\n")
        used_nodes = len(set(lines))
        description = built.describe() + f"\n  ranks: {np} on {used_nodes} node(s), packed {built.cores} per node"
        if np > built.nodes * built.cores:
            description += f" (oversubscribed: {np} ranks > {built.nodes * built.cores} cores)"

    cmd = ["smpirun", "-np", str(np), "-platform", platform_file]
    if hostfile:
        cmd += ["-hostfile", hostfile]
    if preload:
        cmd += ["-wrapper", f"env LD_PRELOAD={preload}"]
    cmd += ["-no-privatize"] + smpi_options(args, built, profile) + [program] + program_args
    if any(re.search(r"\s", a) for a in program_args):
        raise RunnerError("program arguments must not contain spaces (smpirun splits them)")

    log(f"runner: simulating {os.path.basename(program)} {' '.join(program_args)}".rstrip())
    log("  " + description.replace("\n", "\n  "))
    compute = ("charged from the calibration (deterministic)" if profile is not None else
               "not charged (deterministic)" if args.deterministic else "host CPU time charged")
    log(f"  model: {'SMPI calibrated (factors on)' if args.smpi_model else 'pure alpha-beta (CM02, factors off)'}"
        f"; compute: {compute}")
    if profile is not None:
        log("  " + calibration.describe(profile))
    log("+ " + " ".join(shlex.quote(c) for c in cmd))

    record = {
        "program": program, "program_args": program_args, "np": np,
        "platform": built.summary() if built else {"file": platform_file, "hostfile": hostfile},
        "deterministic": args.deterministic, "rendezvous": args.rendezvous,
        "model": "smpi" if args.smpi_model else "alpha-beta",
        "command": cmd,
    }
    if profile is not None:
        record["calibration"] = calibration.summary(profile)
    if args.dry_run:
        record["status"] = "dry-run"
        _cleanup(scratch, args.keep, log)
        return record

    monitor = Monitor()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    # Benchmarks record which machine they ran on (bench/src/harness.cpp reads these).
    env = dict(os.environ)
    if built is not None:
        env.setdefault("JANUS_BENCH_PLATFORM", built.name)
        env.setdefault("JANUS_BENCH_PLATFORM_PARAMS", json.dumps(built.summary(), separators=(",", ":")))
    if profile is not None:
        env.update(calibration.environment(profile))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env=env)
    pumps = [threading.Thread(target=monitor.pump, args=(proc.stdout, sys.stdout, not args.quiet), daemon=True),
             threading.Thread(target=monitor.pump, args=(proc.stderr, sys.stderr, True), daemon=True)]
    for t in pumps:
        t.start()
    timed_out = False
    peak_seen = 0
    next_beat = start + args.heartbeat if args.heartbeat > 0 else None
    try:
        while proc.poll() is None:
            time.sleep(0.05)
            now = time.monotonic()
            rss = _tree_rss_bytes(proc.pid)
            peak_seen = max(peak_seen, rss)
            if args.timeout and now - start > args.timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                break
            if next_beat is not None and now >= next_beat:
                log(f"runner: ... {now - start:.0f} s wall, {_fmt_bytes(rss)} resident, "
                    f"{monitor.lines} output lines so far")
                next_beat = now + args.heartbeat
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    status = proc.wait()
    wall = time.monotonic() - start
    for t in pumps:
        t.join(timeout=5)
    # ru_maxrss of waited-for descendants (smpirun's smpimain child included), in KiB. CPU time
    # is the honest cost when other jobs share the cores; wall time is what the user waits.
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = max(after.ru_maxrss * 1024, peak_seen)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    record.update({
        "exit_code": status,
        "wall_time_s": round(wall, 3),
        "cpu_time_s": round(cpu, 3),
        "peak_rss_bytes": peak,
        "simulated_time_s": monitor.sim_time,
        "ranks_per_wall_second": round(np / wall, 1) if wall > 0 else None,
    })
    if timed_out:
        record["status"] = "timeout"
        log(f"runner: TIMEOUT: the simulation of {np} ranks did not finish within {args.timeout:g} s wall; killed")
    elif monitor.deadlock:
        record["status"] = "deadlock"
        record["stuck"] = monitor.stuck
        ranks = ", ".join(s["rank"] for s in monitor.stuck[:32])
        more = f" (and {len(monitor.stuck) - 32} more)" if len(monitor.stuck) > 32 else ""
        log(f"runner: DEADLOCK: the simulated program can never finish; {len(monitor.stuck)} rank(s) "
            f"were stuck: {ranks}{more}")
        for s in monitor.stuck[:8]:
            log(f"  rank {s['rank']} on {s['host']}: {s['state']}")
    elif status != 0:
        record["status"] = "failed"
        log(f"runner: the simulation failed with exit status {status}")
    else:
        record["status"] = "ok"
    sim = "unknown" if monitor.sim_time is None else f"{monitor.sim_time:.9g} s"
    log(f"runner: summary: {np} ranks, status {record['status']}, simulated time {sim}, wall "
        f"{_fmt_seconds(wall)} (CPU {_fmt_seconds(cpu)}), peak memory {_fmt_bytes(peak)}, {record['ranks_per_wall_second']} "
        "simulated ranks per wall second")
    _cleanup(scratch, args.keep, log)
    return record


def _cleanup(scratch, keep, log):
    if keep:
        log(f"runner: kept platform and hostfile in {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)


def _exit_code(record):
    return {"ok": 0, "dry-run": 0, "deadlock": EXIT_DEADLOCK, "timeout": EXIT_TIMEOUT}.get(
        record["status"], record.get("exit_code") or 1)


def _table(records):
    rows = ["| ranks | status | simulated time [s] | wall time [s] | CPU time [s] | peak memory [MiB] | ranks / wall s |",
            "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in records:
        sim = "-" if r.get("simulated_time_s") is None else f"{r['simulated_time_s']:.6g}"
        rows.append(f"| {r['np']} | {r['status']} | {sim} | {r.get('wall_time_s', '-')} | "
                    f"{r.get('cpu_time_s', '-')} | {r.get('peak_rss_bytes', 0) / 2**20:.0f} | "
                    f"{r.get('ranks_per_wall_second', '-')} |")
    return "\n".join(rows)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("BUILD_WORKING_DIRECTORY"):
        os.chdir(os.environ["BUILD_WORKING_DIRECTORY"])   # bazel run: paths are the user's
    own, program_args = split_program_args(argv)
    parser = make_parser()
    args = parser.parse_args(own)

    def log(message):
        print(message, file=sys.stderr, flush=True)

    if args.list_platforms:
        print(platformgen.describe_platforms())
        return 0
    try:
        if not args.program:
            raise RunnerError("no program given (a Bazel label like //sim/tests:netcheck or a *_smpi path)")
        if args.stack_size < 16:
            raise RunnerError("--stack-size is in KiB and must be at least 16")
        counts = parse_np_list(args.np)
        if not os.path.isfile(args.platform) and args.platform not in platformgen.PLATFORMS:
            raise RunnerError(f"unknown platform '{args.platform}'; valid platforms: "
                              f"{', '.join(platformgen.PLATFORMS)} (or the path of a SimGrid XML file)")
        if shutil.which("smpirun") is None:
            raise RunnerError("smpirun not found (./janus setup installs libsimgrid-dev)")
        profile = preload = None
        if args.calibration:
            try:
                profile = calibration.load(args.calibration)
            except calibration.ProfileError as err:
                raise RunnerError(str(err)) from None
            args.deterministic = True
        program = resolve_program(args.program, log)
        if profile is not None and not args.dry_run:
            preload = resolve_preload(log)
        records = []
        for np in counts:
            records.append(run_one(args, program, program_args, np, log, profile, preload))
            if records[-1]["status"] not in ("ok", "dry-run"):
                break
    except RunnerError as err:
        log(f"runner: error: {err}")
        return EXIT_USAGE
    if len(records) > 1:
        log("\n" + _table(records))
    if args.json:
        payload = records[0] if len(records) == 1 else {"runs": records}
        text = json.dumps(payload, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return _exit_code(records[-1])
