"""./janus validate: does the simulation, under a calibration profile, predict real runs?

Runs the benchmark programs comm_create, split_bcast, collectives and sort (all four sort
implementations) on real MPI (repeated; the median of the runs' medians) and once on SMPI with
the profile (deterministic), on the platform the profile names at the same rank count, and
writes side by side:
  <out>/validate-<name>-np<N>.jsonl   one record per point: real and simulated seconds, ratio
  <out>/validate-<name>-np<N>.md      the table (simulated / real, within +-25% or not)
  <out>/validate-<name>-np<N>.png     simulated / real per point on a log axis (gnuplot)

Before the real runs it re-measures a few of the profile's own micro-benchmarks on this machine
(calibrate_mpi --quick: ping-pong, communicator creation, a broadcast, RBC's ping-pong and
split) and reports how far the machine has drifted from the profile: a machine that changed
(another load, another clock, a virtual machine's other mode) makes the simulated / real
ratios wrong however good the model is, and only a recalibration tells the two apart.
"""

import argparse
import datetime
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import calibrate  # noqa: E402
import calibration_profile as cp  # noqa: E402

BENCH_PREFIX = "JANUS_BENCH "
TOLERANCE = 0.25
SORT_IMPLS = "jquick_rbc,jquick_mpi_create_group,jquick_mpi_split,hypercube_rbc"
KEY_FIELDS = ("benchmark", "p", "variant", "implementation", "n", "n_per_pe", "k")
DRIFT_SECTIONS = ["pingpong", "comm", "coll", "rbc"]


def drift_probes(np):
    """(label, kind, fields) of the micro-measurements compared with the profile's."""
    return [
        ("MPI ping-pong 8 B", "pingpong", {"bytes": 8}),
        ("MPI ping-pong 1 KiB", "pingpong", {"bytes": 1024}),
        (f"MPI_Comm_create_group p={np}", "comm", {"op": "create_group", "p": np}),
        (f"MPI_Comm_split p={np}", "comm", {"op": "split", "p": np}),
        (f"MPI_Bcast 8 B p={np}", "coll", {"op": "bcast", "bytes": 8, "p": np}),
        ("RBC ping-pong 8 B", "rbc_pingpong", {"bytes": 8}),
        (f"RBC split p={np}", "rbc_split", {"p": np}),
    ]


def drift(profile_samples, measured, np):
    """This machine now against the profile's own measurements of it: one row per probe that
    both hold (label, profile seconds, now seconds, now / profile, within +-25%)."""
    def find(records, kind, fields):
        for r in records:
            if r.get("kind") == kind and all(r.get(k) == v for k, v in fields.items()) and r.get("samples"):
                return statistics.median(r["samples"])
        return None

    rows = []
    for label, kind, fields in drift_probes(np):
        then, now = find(profile_samples, kind, fields), find(measured, kind, fields)
        if then and now:
            ratio = now / then
            rows.append({"probe": label, "profile_s": then, "now_s": now, "ratio": ratio,
                         "within_25": abs(ratio - 1) <= TOLERANCE})
    return rows


def drift_summary(rows, checked, np):
    """One line on the drift rows, for the table and the records."""
    if not checked:
        return "not checked (--sim-only: no real runs)"
    if not rows:
        return "not checked: the profile holds no measurements of this kind (a published profile)"
    off = [r for r in rows if not r["within_25"]]
    text = f"{len(rows) - len(off)} of {len(rows)} probes within +-25% of the profile's own measurements"
    if off:
        names = ", ".join("{} {:.2f}x".format(r["probe"], r["ratio"]) for r in off)
        text += (f"; drifted: {names}. The ratios below mix the model's error with the machine's "
                 f"drift; recalibrate (./janus calibrate --np {np}) to tell them apart")
    return text


def plan(quick):
    """(program, arguments) of every benchmark run."""
    if quick:
        return [
            ("comm_create", ["--modes=halves", "--impls=rbc,mpi_create_group,mpi_split", "--warmup=3", "--reps=10"]),
            ("split_bcast", ["--ks=1,10", "--sizes=1", "--impls=rbc,mpi_create_group,mpi_split",
                             "--warmup=2", "--reps=10"]),
            ("collectives", ["--ops=bcast,reduce,scan,gather", "--sizes=1", "--impls=rbc,mpi",
                             "--warmup=2", "--reps=10"]),
            ("sort", ["--nps=1,256,65536", "--impls=" + SORT_IMPLS, "--distributions=uniform",
                      "--warmup=1", "--reps=3"]),
        ]
    return [
        ("comm_create", ["--modes=halves", "--impls=rbc,mpi_create_group,mpi_split", "--warmup=3", "--reps=30"]),
        ("split_bcast", ["--ks=1,10,50", "--sizes=1", "--impls=rbc,mpi_create_group,mpi_split",
                         "--warmup=2", "--reps=20"]),
        ("collectives", ["--ops=bcast,reduce,scan,gather", "--sizes=1,1024,65536", "--impls=rbc,mpi",
                         "--warmup=2", "--reps=20"]),
        ("sort", ["--nps=1,16,256,4096,65536", "--impls=" + SORT_IMPLS, "--distributions=uniform",
                  "--warmup=1", "--reps=7"]),
    ]


def key_of(rec):
    return tuple((f, rec[f]) for f in KEY_FIELDS if f in rec)


def key_text(key):
    d = dict(key)
    parts = [d.get("benchmark", "?"), d.get("implementation", "")]
    if "variant" in d and d["variant"] not in ("uniform",):
        parts.append(str(d["variant"]))
    if "n_per_pe" in d:
        parts.append(f"n/p={d['n_per_pe']}")
    elif "n" in d and d.get("benchmark") != "split_bcast":
        parts.append(f"n={d['n']}")
    parts.append(f"p={d.get('p')}")
    return " ".join(p for p in parts if p)


def collect(cmd, env, timeout, label):
    calibrate.log(f"validate: {label}")
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise calibrate.CalibrationError(f"{label}: no result within {timeout} s") from None
    found = [json.loads(line[len(BENCH_PREFIX):]) for line in proc.stdout.splitlines()
             if line.startswith(BENCH_PREFIX)]
    if proc.returncode != 0 or not found:
        tail = (proc.stdout + proc.stderr).splitlines()[-15:]
        raise calibrate.CalibrationError(f"{label} failed (status {proc.returncode}):\n  " + "\n  ".join(tail))
    bad = [r for r in found if r.get("verified") is False]
    if bad:
        raise calibrate.CalibrationError(f"{label}: {len(bad)} sort output(s) failed the check")
    return found


def make_parser():
    parser = argparse.ArgumentParser(
        prog="./janus validate",
        description="Compare real MPI runs of the benchmarks with their SMPI simulation under a "
                    "calibration profile, on this machine (docs/calibration.md).")
    parser.add_argument("--calibration", default=os.path.join(ROOT, "results", "calibration.json"),
                        help="profile (path or built-in name; default results/calibration.json, "
                             "which ./janus calibrate writes)")
    parser.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    parser.add_argument("--quick", action="store_true", help="fewer points and repetitions (CI)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="real runs per program; the median of their medians is used (default 3, quick 1)")
    parser.add_argument("--out", default=os.path.join(ROOT, "results"), help="output directory (default results/)")
    parser.add_argument("--mpi", choices=calibrate.MPI_FLAVORS, default="openmpi",
                        help="real MPI to build against and launch with (default openmpi; mpich: "
                             "Debian's MPICH, --config=mpich and mpiexec.mpich)")
    parser.add_argument("--launcher", help="real MPI launcher command (default: the --mpi library's; also JANUS_MPIRUN)")
    parser.add_argument("--platform", help="simulated platform (default: the profile's)")
    parser.add_argument("-p", "--param", action="append", default=None, metavar="KEY=VALUE",
                        help="platform parameter (default: the profile's, with cores = --np)")
    parser.add_argument("--sim-only", metavar="REAL_JSONL",
                        help="take the real times from an earlier validate record instead of running MPI")
    parser.add_argument("--real-only", action="store_true",
                        help="only the real runs (no Bazel, no SMPI; with --programs): records that a later "
                             "--sim-only run on a machine with SimGrid completes")
    parser.add_argument("--programs", metavar="DIR",
                        help="real-MPI programs built elsewhere (./janus bundle DIR) instead of building them here")
    parser.add_argument("--only", default="", help="comma-separated subset of comm_create, split_bcast, collectives, sort")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    return parser


def main(argv=None):
    args = make_parser().parse_args(argv)
    if args.launcher:
        os.environ["JANUS_MPIRUN"] = args.launcher
    repeat = args.repeat or (1 if args.quick else 3)
    try:
        profile = cp.load(args.calibration)
        programs = plan(args.quick)
        only = [x for x in args.only.split(",") if x]
        if only:
            unknown = sorted(set(only) - {name for name, _ in programs})
            if unknown:
                raise calibrate.CalibrationError(f"--only: unknown program(s) {', '.join(unknown)}")
            programs = [(n, a) for n, a in programs if n in only]
        if args.real_only and (args.sim_only or not args.programs):
            raise calibrate.CalibrationError("--real-only needs --programs (./janus bundle DIR) and no --sim-only")
        sim_targets = [f"//bench:{name}_smpi" for name, _ in programs] + ["//sim/calibration:libcharge_preload.so"]
        if args.programs or args.sim_only:
            bin_root = None if args.real_only else calibrate.bazel_bin(sim_targets)
            real_program = None if args.sim_only else bundled_programs(args.programs, [name for name, _ in programs])
        else:
            mpi_targets = [f"//bench:{name}_mpi" for name, _ in programs] + ["//sim/calibration:calibrate_mpi"]
            bin_root, mpi_root = calibrate.bazel_bins(sim_targets, mpi_targets, args.mpi)

            def real_program(name):
                where = ("sim", "calibration") if name == "calibrate" else ("bench",)
                return os.path.join(mpi_root, *where, f"{name}_mpi")
        preload = None if args.real_only else os.path.join(bin_root, "sim", "calibration", "libcharge_preload.so")
        platform = args.platform or profile.get("platform", {}).get("name", "cluster")
        params = args.param
        if params is None:
            given = dict(profile.get("platform", {}).get("params", {"nodes": "1"}))
            given["cores"] = str(max(args.np, int(given.get("cores", "1"))))
            params = [f"{k}={v}" for k, v in given.items()]
        library, version = calibrate.mpi_library(args.mpi)
        cores = os.cpu_count() or 1
        load = os.getloadavg()[0]
        started = time.monotonic()
        real, sim = {}, {}
        drift_rows = []
        machine_check = drift_summary(drift_rows, False, args.np)
        scratch = tempfile.mkdtemp(prefix="janus-validate.")
        try:
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       PMIX_MCA_gds="hash", TMPDIR=scratch)
            if preload:
                env["JANUS_CHARGE_PRELOAD"] = preload
            real_text = None
            if args.sim_only:
                with open(args.sim_only) as f:
                    for line in f:
                        rec = json.loads(line)
                        # The real runs' description and machine check travel with their times.
                        real_text = real_text or rec.get("real")
                        if rec.get("machine_check"):
                            machine_check = (f"{rec['machine_check']} (checked where the real runs ran, against "
                                             f"profile {rec.get('profile', '?')})")
                        if rec.get("real_s") is not None:
                            real[tuple(tuple(x) for x in rec["key"])] = [rec["real_s"]]
            launcher = calibrate.default_launcher(args.np, args.mpi) + calibrate.isolation_options(args.mpi, scratch)
            if not args.sim_only:
                measured = calibrate.run_measurements(
                    launcher + [real_program("calibrate"), "--quick"] + DRIFT_SECTIONS,
                    env, args.timeout, f"machine check against the profile, np={args.np}")
                drift_rows = drift(profile.get("samples") or [], measured, args.np)
                machine_check = drift_summary(drift_rows, True, args.np)
                calibrate.log(f"validate: machine against the profile: {machine_check}")
            for name, bench_args in programs:
                if not args.sim_only:
                    for r in range(repeat):
                        cmd = launcher + [real_program(name)] + bench_args
                        for rec in collect(cmd, env, args.timeout, f"real {name} np={args.np} run {r + 1}/{repeat}"):
                            real.setdefault(key_of(rec), []).append(rec["median_s"])
                if args.real_only:
                    continue
                cmd = [os.path.join(ROOT, "sim", "runner"), os.path.join(bin_root, "bench", f"lib{name}_smpi.so"),
                       "--np", str(args.np), "--platform", platform, "--calibration", profile["_path"],
                       "--heartbeat", "0", "--stack-size", "1024"]
                for p in params:
                    cmd += ["-p", p]
                cmd += ["--"] + bench_args
                for rec in collect(cmd, env, args.timeout, f"SMPI {name} np={args.np} ({platform} {' '.join(params)})"):
                    sim[key_of(rec)] = rec["median_s"]
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

        stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        context = {"profile": profile["name"], "profile_path": profile["_path"], "np": args.np,
                   "real": (f"{real_text or 'real runs'}, from {args.sim_only}" if args.sim_only else
                            f"{library} {version}, np={args.np} on {cores} cores"
                            f"{' (oversubscribed)' if args.np > cores else ''}, {repeat} run(s), "
                            f"load average {load:.1f} at the start"),
                   "simulated": ("not simulated (--real-only)" if args.real_only else
                                 f"SMPI, platform {platform} {' '.join(params)}, profile {profile['name']}, deterministic"),
                   "date": stamp, "quick": args.quick,
                   "machine_check": machine_check}
        rows = []
        for key in sorted(set(real) | set(sim), key=lambda k: [str(x) for x in k]):
            r = statistics.median(real[key]) if key in real else None
            s = sim.get(key)
            ratio = s / r if (r and s is not None and r > 0) else None
            rows.append(dict(context, key=[list(x) for x in key], point=key_text(key), real_s=r,
                             real_runs=real.get(key, []), simulated_s=s, ratio=ratio,
                             within_25=None if ratio is None else abs(ratio - 1) <= TOLERANCE))
        base = os.path.join(args.out, f"validate-{profile['name']}-np{args.np}")
        os.makedirs(args.out, exist_ok=True)
        with open(base + ".jsonl", "w") as f:
            for row in rows:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")
        table = render_table(rows, context, drift_rows)
        with open(base + ".md", "w") as f:
            f.write(table + "\n")
        print(table)
        plot(rows, base, context)
        calibrate.log(f"validate: records {base}.jsonl, table {base}.md, plot {base}.png "
                      f"({time.monotonic() - started:.0f} s)")
        problems = check_records(base + ".jsonl", need_real=not args.sim_only, need_sim=not args.real_only)
        for problem in problems:
            calibrate.log(f"validate: MALFORMED: {problem}")
        return 1 if problems else 0
    except (calibrate.CalibrationError, cp.ProfileError) as err:
        calibrate.log(f"validate: error: {err}")
        return 1


def bundled_programs(directory, names):
    """program name -> path in a ./janus bundle directory (calibrate_mpi and the benchmarks'
    <name>_mpi); every one must be there."""
    paths = {n: os.path.join(directory, f"{n}_mpi") for n in list(names) + ["calibrate"]}
    missing = [p for p in paths.values() if not os.access(p, os.X_OK)]
    if missing:
        raise calibrate.CalibrationError(f"--programs {directory}: missing {', '.join(missing)} (./janus bundle makes them)")
    return paths.__getitem__


def check_records(path, need_real=True, need_sim=True):
    """Problems with a validation record (missing file, malformed row, a point without a real or
    simulated time); timing itself is never judged."""
    if not os.path.isfile(path):
        return [f"{path} is missing"]
    problems, count = [], 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                problems.append(f"{path}:{n}: not JSON ({err})")
                continue
            count += 1
            for field in ("key", "point", "real_s", "simulated_s", "ratio", "profile", "np"):
                if field not in row:
                    problems.append(f"{path}:{n}: no '{field}'")
            sim = row.get("simulated_s")
            real = row.get("real_s")
            if need_sim and (not isinstance(sim, (int, float)) or sim < 0):
                problems.append(f"{path}:{n}: {row.get('point')}: no simulated time")
            if need_real and (not isinstance(real, (int, float)) or real <= 0):
                problems.append(f"{path}:{n}: {row.get('point')}: no real time")
    if count == 0:
        problems.append(f"{path} holds no records")
    return problems


def fmt_us(s):
    return "-" if s is None else f"{s * 1e6:.3g}"


def group_of(key):
    """The summary group of a point: what it measures and at which size class."""
    d = dict(key)
    bench = d.get("benchmark", "?")
    if bench == "sort":
        n = d.get("n_per_pe", 0)
        return f"sort, n/p {'<= 256' if n <= 256 else '> 256'}"
    if bench == "collectives":
        return f"collectives, n = {d.get('n')}"
    if bench in ("comm_create", "split_bcast"):
        return "creation, split + broadcasts"
    return bench


def group_summary(rows):
    """(group, points within, points, lowest ratio, highest ratio) per group, in first-seen order."""
    groups = {}
    for r in rows:
        if r["ratio"] is None:
            continue
        g = groups.setdefault(group_of(r["key"]), [0, 0, math.inf, 0.0])
        g[0] += 1 if r["within_25"] else 0
        g[1] += 1
        g[2] = min(g[2], r["ratio"])
        g[3] = max(g[3], r["ratio"])
    return [(name, *v) for name, v in groups.items()]


def render_table(rows, context, drift_rows=()):
    ok = [r for r in rows if r["within_25"]]
    rated = [r for r in rows if r["ratio"] is not None]
    lines = [f"Validation of profile {context['profile']} ({context['date']})",
             f"real: {context['real']}", f"simulated: {context['simulated']}",
             f"machine against the profile: {context['machine_check']}",
             f"{len(ok)} of {len(rated)} points within +-25% (simulated / real in [0.75, 1.25])", ""]
    if drift_rows:
        lines += ["| probe | in the profile [us] | now [us] | now / profile | within +-25% |",
                  "| --- | ---: | ---: | ---: | --- |"]
        for r in drift_rows:
            lines.append(f"| {r['probe']} | {fmt_us(r['profile_s'])} | {fmt_us(r['now_s'])} | {r['ratio']:.2f} | "
                         f"{'yes' if r['within_25'] else 'no'} |")
        lines.append("")
    summary = group_summary(rows)
    if summary:
        lines += ["| group | within +-25% | simulated / real |", "| --- | --- | --- |"]
        lines += [f"| {name} | {ok} of {n} | {lo:.2f} - {hi:.2f} |" for name, ok, n, lo, hi in summary]
        lines.append("")
    lines += ["| point | real [us] | simulated [us] | simulated / real | within +-25% |",
              "| --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        within = "-" if r["within_25"] is None else ("yes" if r["within_25"] else "no")
        lines.append(f"| {r['point']} | {fmt_us(r['real_s'])} | {fmt_us(r['simulated_s'])} | {ratio} | {within} |")
    return "\n".join(lines)


def plot(rows, base, context):
    if shutil.which("gnuplot") is None:
        calibrate.log("validate: gnuplot not found, no plot")
        return
    rated = [r for r in rows if r["ratio"] and r["ratio"] > 0]
    if not rated:
        return
    data = base + ".dat"
    with open(data, "w") as f:
        for i, r in enumerate(rated):
            f.write(f"{i} {r['ratio']:.6g} \"{r['point']}\"\n")
    script = f"""
set terminal pngcairo size {max(900, 28 * len(rated))},600 noenhanced
set output '{base}.png'
set title "simulated / real per point: profile {context['profile']}, np={context['np']}"
set logscale y
set yrange [0.01:100]
set ylabel 'simulated / real (log)'
set xtics rotate by 60 right font ',8'
set grid ytics
set bmargin 14
set lmargin 16
plot '{data}' using 1:2:xtic(3) with points pt 7 ps 1.2 title 'simulated / real', \\
     1 with lines lt 1 dt 2 title 'exact', 1.25 with lines lt 3 dt 3 title '+-25%', 0.75 with lines lt 3 dt 3 notitle
"""
    result = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if result.returncode != 0:
        calibrate.log(f"validate: gnuplot failed: {result.stderr.strip()[:300]}")
    os.remove(data)


if __name__ == "__main__":
    sys.exit(main())
