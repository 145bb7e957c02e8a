"""./janus calibrate: measure this machine's MPI and write a calibration profile.

1. calibrate_mpi (sim/calibration/calibrate.cpp) runs on real MPI: ping-pong, per-message
   overheads, MPI_Iprobe / MPI_Test, communicator creation against p, the library's
   collectives, the local kernels. Every measurement is repeated; fits use medians.
2. Fits (least squares): per-message overheads piecewise by size (smpi/os, or, ois), the
   loopback link (latency and bandwidth) from the ping-pong minus the overheads, per-element
   kernel costs c0 + c1 * f(n).
3. The SMPI twin runs the same ping-pong and creation measurements under the fitted profile:
   the link latency is corrected by the ping-pong residual, and the creation charges are what
   the real library costs beyond what SMPI's own creation algorithms already charge.
"""

import argparse
import datetime
import json
import math
import os
import platform as host_platform
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

import calibration_profile as cp  # noqa: E402

PREFIX = "JANUS_CALIB "
# Overhead segments: up to 8 bytes, small, medium. Open MPI sends up to 8 bytes on a faster path
# than anything larger (the 16-core node, 4.1.6: MPI_Send 0.09 us at 8 B, 0.25 at 64 B; ping-pong
# 0.44 against 0.59 us), which one straight segment from 0 to 511 B smoothed away; a library
# without that step (MPICH) fits about the same line on both sides of 9.
SEGMENT_STARTS = (0, 9, 512)
EAGER_LIMIT = 4096          # Open MPI's shared-memory eager limit: larger sends wait for the receiver
DETACHED_LIMIT = cp.DETACHED_LIMIT  # os and or reach blocking messages only below it; ois every isend


class CalibrationError(Exception):
    pass


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Programs and launchers


MPI_FLAVORS = ("openmpi", "mpich")


def bazel_bin(targets, mpi="openmpi"):
    """Builds targets; returns bazel-bin. mpi="mpich" links the real-MPI (*_mpi) targets against
    Debian's MPICH (--config=mpich, its own output directory); SMPI targets are the same either way."""
    bazel = shutil.which("bazel")
    if not bazel:
        raise CalibrationError("'bazel' is not on PATH (./janus setup installs it)")
    flags = shlex.split(os.environ.get("JANUS_BAZEL_FLAGS", ""))
    if mpi == "mpich":
        flags.append("--config=mpich")
    result = subprocess.run([bazel, "build"] + flags + targets, cwd=ROOT)
    if result.returncode != 0:
        raise CalibrationError(f"bazel build {' '.join(targets)} failed")
    info = subprocess.run([bazel, "info"] + flags + ["bazel-bin"], cwd=ROOT, capture_output=True, text=True)
    if info.returncode != 0:
        raise CalibrationError("bazel info bazel-bin failed")
    return info.stdout.strip()


def bazel_bins(targets, mpi_targets, mpi):
    """(bazel-bin of targets, bazel-bin of the real-MPI targets built for mpi): one build where
    both share a configuration."""
    if mpi == "openmpi":
        root = bazel_bin(targets + mpi_targets)
        return root, root
    return bazel_bin(targets), bazel_bin(mpi_targets, mpi)


def default_launcher(np, mpi="openmpi"):
    """The launcher for np ranks, bound to cores unless oversubscribed: Open MPI's mpirun with the
    options the benchmarks use, or MPICH's Hydra (mpiexec.mpich). JANUS_MPIRUN replaces it (a
    cluster's own launcher; it must take -np)."""
    custom = os.environ.get("JANUS_MPIRUN")
    if custom:
        return shlex.split(custom) + ["-np", str(np)]
    cores = os.cpu_count() or 1
    if mpi == "mpich":
        # Hydra runs as root and oversubscribes without options.
        bind = ["-bind-to", "core"] if np <= cores else []
        return [shutil.which("mpiexec.mpich") or "mpiexec", "-n", str(np)] + bind
    bind = ["--bind-to", "core"] if np <= cores else ["--oversubscribe", "--bind-to", "none"]
    return ["mpirun", "--allow-run-as-root"] + bind + ["-np", str(np), "--mca", "btl", "self,vader",
                                                       "--mca", "btl_vader_single_copy_mechanism", "none"]


def isolation_options(mpi, scratch):
    """Launcher options that keep one run's shared-memory files in its own directory (Open MPI)."""
    if mpi != "openmpi" or os.environ.get("JANUS_MPIRUN"):
        return []
    return ["--mca", "btl_vader_backing_directory", scratch, "--mca", "shmem_mmap_backing_file_base_dir", scratch]


def parse_library(text):
    """(library, version) from ompi_info, mpirun --version, mpichversion or mpiexec --version."""
    hydra = False
    for line in text.splitlines():
        if line.startswith("ompi:version:full:"):
            return "Open MPI", line.split(":")[-1].strip()
        if "Open MPI" in line:
            return "Open MPI", line.split()[-1]
        if line.startswith("MPICH Version:"):
            return "MPICH", line.split(":", 1)[1].strip()
        if "HYDRA" in line:
            hydra = True
        elif hydra and line.strip().startswith("Version:"):
            return "MPICH", line.split(":", 1)[1].strip()
    return None


def mpi_library(mpi="openmpi"):
    """(library, version) of the MPI the real runs use."""
    if mpi == "mpich":
        cmds = [["mpichversion"], [shutil.which("mpiexec.mpich") or "mpiexec", "--version"]]
    else:
        cmds = [["ompi_info", "--parsable", "--version", "ompi"], ["mpirun", "--version"]]
    for cmd in cmds:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        found = parse_library(out)
        if found:
            return found
    return "unknown", "unknown"


def run_measurements(cmd, env, timeout, label):
    """Runs a calibrate program; returns its JANUS_CALIB records; shows a progress line."""
    log(f"calibrate: {label}: " + " ".join(shlex.quote(c) for c in cmd))
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    found, tail = [], []
    for line in proc.stdout:
        if line.startswith(PREFIX):
            rec = json.loads(line[len(PREFIX):])
            found.append(rec)
            what = " ".join(f"{k}={rec[k]}" for k in ("kind", "op", "bytes", "p", "n") if k in rec)
            sys.stderr.write(f"\rcalibrate: {label}: {len(found)} measurements, "
                             f"{time.monotonic() - start:.0f} s, last: {what}".ljust(100)[:100])
            sys.stderr.flush()
        else:
            tail.append(line.rstrip("\n"))
            del tail[:-30]
        if time.monotonic() - start > timeout:
            proc.kill()
            raise CalibrationError(f"{label}: no result within {timeout} s")
    status = proc.wait()
    sys.stderr.write("\n")
    if status != 0 or not found:
        raise CalibrationError(f"{label} failed (status {status}):\n  " + "\n  ".join(tail[-15:]))
    return found


# ---------------------------------------------------------------------------------------------
# Fits


def med(rec):
    return statistics.median(rec["samples"])


def least_squares(xs, ys, weights=None):
    """(a, b) minimising sum w (a + b x - y)^2; b = 0 for a single point."""
    if weights is None:
        weights = [1.0] * len(xs)
    if len(xs) == 1 or len(set(xs)) == 1:
        return sum(w * y for w, y in zip(weights, ys)) / sum(weights), 0.0
    sw = sum(weights)
    sx = sum(w * x for w, x in zip(weights, xs))
    sy = sum(w * y for w, y in zip(weights, ys))
    sxx = sum(w * x * x for w, x in zip(weights, xs))
    sxy = sum(w * x * y for w, x, y in zip(weights, xs, ys))
    det = sw * sxx - sx * sx
    b = (sw * sxy - sx * sy) / det
    a = (sy - b * sx) / sw
    return a, b


def relative_fit(xs, ys):
    """Least squares in relative error (weights 1/y^2), both coefficients clamped at >= 0."""
    weights = [1.0 / max(y, 1e-12) ** 2 for y in ys]
    a, b = least_squares(xs, ys, weights)
    if b < 0:
        a, b = least_squares([0.0] * len(xs), ys, weights)[0], 0.0
    if a < 0:
        b = sum(w * x * y for w, x, y in zip(weights, xs, ys)) / sum(w * x * x for w, x in zip(weights, xs))
        a = 0.0
    return a, max(b, 0.0)


def fit_piecewise(points):
    """points {bytes: seconds} -> [[start, c, per_byte], ...] over SEGMENT_STARTS."""
    segments = []
    for i, lo in enumerate(SEGMENT_STARTS):
        hi = SEGMENT_STARTS[i + 1] if i + 1 < len(SEGMENT_STARTS) else math.inf
        inside = sorted((s, t) for s, t in points.items() if lo <= s < min(hi, EAGER_LIMIT))
        if not inside:
            continue
        c, b = relative_fit([s for s, _ in inside], [t for _, t in inside])
        segments.append([lo, c, b])
    if segments:
        segments[0][0] = 0
    return segments


def weighted_solve(columns, ys, weights):
    """Coefficients minimising sum w (sum_j c_j x_j - y)^2 (normal equations, Gaussian
    elimination); None if they are singular."""
    k = len(columns)
    a = [[sum(w * ci * cj for w, ci, cj in zip(weights, columns[i], columns[j])) for j in range(k)]
         + [sum(w * ci * y for w, ci, y in zip(weights, columns[i], ys))] for i in range(k)]
    for c in range(k):
        pivot = max(range(c, k), key=lambda r: abs(a[r][c]))
        if abs(a[pivot][c]) < 1e-300:
            return None
        a[c], a[pivot] = a[pivot], a[c]
        for r in range(k):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][k] / a[i][i] for i in range(k)]


STEP_MIN_FACTOR = 1.2  # a latency step must raise the latency by at least this factor
STEP_MIN_GAIN = 2.0    # and divide the fit's weighted squared error by at least this much


def fit_link(eager, weights):
    """(alpha, beta, step) through the eager half round trips minus overheads, {bytes: s}:
    alpha + beta * size, or with a latency step, where the transport switches protocol (Open
    MPI's shared memory sends up to 256 B inline): from step[0] bytes on the latency is
    alpha * step[1]; step[2] is the largest measured size below it. A step needs two sizes
    below it and one from it on, and is kept only where it fits much better."""
    sizes = sorted(eager)
    ys = [eager[s] for s in sizes]
    ws = [weights[s] for s in sizes]

    def error(predict):
        return sum(w * (predict(s) - y) ** 2 for s, y, w in zip(sizes, ys, ws))

    alpha, beta = least_squares(sizes, ys, ws)
    best, step = error(lambda s: alpha + beta * s), None
    plain = best
    for i in range(2, len(sizes)):
        cut = sizes[i]
        below = [1.0 if s < cut else 0.0 for s in sizes]
        solved = weighted_solve([below, [1.0 - b for b in below], [float(s) for s in sizes]], ys, ws)
        if solved is None:
            continue
        a1, a2, b = solved
        if a1 <= 0 or b <= 0 or a2 < STEP_MIN_FACTOR * a1:
            continue
        err = error(lambda s: (a1 if s < cut else a2) + b * s)
        if err * STEP_MIN_GAIN <= plain and err < best:
            best, alpha, beta, step = err, a1, b, (sizes[i - 1] + 1, a2 / a1, sizes[i - 1])
    beta = max(beta, 1e-11)  # <= 0: the per-byte cost is in the overheads (copies through shared memory)
    alpha = max(alpha, 1e-9)
    return alpha, beta, step


def long_message_factors(long_pp, alpha, beta):
    """(latency factor, bandwidth factor) that make alpha * lat + size * beta / bw fit the half
    round trips of messages from the detached limit on (least squares in relative error), where a
    rendezvous adds a handshake and the link alone carries the copies; None for a factor the
    eager fit already explains (or without such sizes)."""
    points = {s: t for s, t in long_pp.items() if t > alpha}
    if not points:
        return None, None
    sizes = sorted(points)
    weights = [1.0 / points[s] ** 2 for s in sizes]
    a, b = alpha, 0.0
    if len(sizes) >= 2:
        a, b = least_squares(sizes, [points[s] for s in sizes], weights)
    if len(sizes) < 2 or a < alpha or b <= 0:
        a = alpha
        b = sum(w * s * (points[s] - a) for s, w in zip(sizes, weights)) / sum(w * s * s for s, w in zip(sizes, weights))
    lat = a / alpha if a > 1.05 * alpha else None
    bw = beta / b if abs(b - beta) > 0.05 * beta else None
    return lat, bw


def joined_segments(kernel, points):
    """Segments [[n, c0, c1], ...] (core/cost's piecewise spec) through measured (n, seconds):
    from each measured size to the next, the last one extended, the first one from n = 0. A
    single formula over all sizes misses by 2-3x at 16-256 elements, where a comparison sort's
    branch misses cost more per element than the radix passes of large inputs."""
    points = sorted(points)
    if len(points) == 1:
        n, t = points[0]
        x = cp.size_term(kernel, n)
        return [[0, 0.0, t / x]] if x > 0 else [[0, t, 0.0]]
    segments = []
    for i in range(len(points) - 1):
        (n, t), (n2, t2) = points[i], points[i + 1]
        slope = max((t2 - t) / (cp.size_term(kernel, n2) - cp.size_term(kernel, n)), 0.0)
        if i == 0:
            segments.append([0, max(t - slope * cp.size_term(kernel, n), 0.0), slope])
        else:
            segments.append([n, t, slope])
    return segments


def param(value, unit, source):
    return {"value": value, "unit": unit, "source": source}


def by_kind(records):
    """{kind: [record, ...]} in measurement order."""
    by = {}
    for r in records:
        by.setdefault(r["kind"], []).append(r)
    return by


def fit_profile(records, np, library, version, how):
    by = by_kind(records)
    params = {}
    over = {op: {r["bytes"]: med(r) for r in by.get("overhead", []) if r["op"] == op}
            for op in ("send", "isend", "recv")}
    # Back-to-back blocking sends measure how fast the receiver drains them once the transport's
    # buffers are full (from 512 B on shared memory: 3-4x the isend), not what one send costs
    # its caller; a send's own cost is at most the isend's.
    over["send"] = {s: min(t, over["isend"].get(s, t)) for s, t in over["send"].items()}
    src_over = f"calibrate overhead at np={np}: median per-call time, least squares per size segment"
    for name, op in (("os", "send"), ("ois", "isend"), ("or", "recv")):
        if not over[op]:
            raise CalibrationError("no overhead measurements (needs np >= 2)")
        segments = fit_piecewise(over[op])
        # From the detached limit on a send is a rendezvous: the call itself costs its constant,
        # and the copy is the link's (bw_factor below); the eager range's per-byte cost would
        # otherwise be charged again to every long isend.
        segments.append([DETACHED_LIMIT, segments[-1][1], 0.0])
        params[name] = param(segments, "[[min_bytes, s, s/byte]]",
                             src_over + f"; from {DETACHED_LIMIT} B the constant only")
    # A size whose median is more than twice its fastest trial was mostly preempted (a busy
    # host: large messages need both ranks scheduled at once); it says nothing about the link.
    pp_all = {r["bytes"]: med(r) for r in by.get("pingpong", [])}
    pp = {r["bytes"]: med(r) for r in by.get("pingpong", []) if med(r) <= 2 * min(r["samples"])}
    noisy = sorted(set(pp_all) - set(pp))
    if len(pp) < 2:
        raise CalibrationError("fewer than two ping-pong sizes had stable timings; rerun on a quieter machine")
    # Below the detached limit a blocking message costs os + link + or; from it on only the link.
    eager = {s: t - cp.piecewise_at(params["os"]["value"], s) - cp.piecewise_at(params["or"]["value"], s)
             for s, t in pp.items() if s < DETACHED_LIMIT}
    if len(eager) < 2:
        raise CalibrationError(f"fewer than two ping-pong sizes below {DETACHED_LIMIT} B had stable timings")
    alpha, beta, step = fit_link(eager, {s: 1.0 / max(pp[s], 1e-9) ** 2 for s in eager})
    left_out = f"; sizes {', '.join(map(str, noisy))} B left out (median > 2x fastest trial: preempted)" if noisy else ""
    src_pp = (f"calibrate pingpong 0 B..{DETACHED_LIMIT // 2} B at np={np} (median half round trip, many round "
              "trips, warm-up) minus os and or; least squares in relative error" + left_out)
    params["node_alpha"] = param(alpha, "s", src_pp)
    params["node_bw"] = param(1.0 / beta, "B/s", src_pp)
    lat, bw = long_message_factors({s: t for s, t in pp.items() if s >= DETACHED_LIMIT}, alpha, beta)
    src_long = (f"calibrate pingpong {DETACHED_LIMIT} B..4 MiB at np={np}: half round trip = a + b * size, "
                "least squares in relative error; ")
    lat_segments, lat_sources = [], []
    if step is not None:
        lat_segments.append([step[0], step[1]])
        lat_sources.append(
            f"calibrate pingpong at np={np}: from {step[0]} B on the eager half round trips minus os and or "
            f"fit node_alpha x {step[1]:.3g} (a latency step between the measured {step[2]} and {step[0]} B, "
            "least squares with one latency per side and a shared bandwidth)")
    if lat is not None:
        lat_segments.append([DETACHED_LIMIT, lat])
        lat_sources.append(src_long + "a as a multiple of node_alpha (the rendezvous)" + left_out)
    if lat_segments:
        params[cp.LAT_FACTOR] = param(lat_segments, "[[min_bytes, factor]]", "; ".join(lat_sources))
    if bw is not None:
        params[cp.BW_FACTOR] = param([[DETACHED_LIMIT, bw]], "[[min_bytes, factor]]",
                                     src_long + "1 / b as a fraction of node_bw" + left_out)
    params["iprobe"] = param(max(med(by["iprobe"][0]), 1e-9), "s",
                             "calibrate probe: median time of MPI_Iprobe with nothing to find")
    params["test"] = param(max(med(by["test"][0]), 1e-9), "s",
                           "calibrate probe: median time of MPI_Test on a pending request")
    if by.get("wtime"):
        params["wtime"] = param(max(med(by["wtime"][0]), 1e-9), "s",
                                "calibrate probe: median time of one MPI_Wtime call")
    if by.get("type_create"):
        params["type_create"] = param(max(med(by["type_create"][0]), 1e-9), "s",
                                      "calibrate probe: median time of MPI_Type_contiguous + MPI_Type_commit + "
                                      "MPI_Type_free of a 16-byte type (charged at each commit)")
    params["coll_selector"] = param("ompi" if library == "Open MPI" else "mpich" if library == "MPICH" else "default",
                                    "SMPI selector", f"the real library, {library} {version}")
    for kernel in cp.KERNELS:
        pts = [(r["n"], med(r)) for r in by.get("kernel", []) if r["op"] == kernel]
        if not pts:
            continue
        f = "n log2 n" if kernel == "sort" else "n"
        what = ("MPI_Reduce_local (MPI_SUM) on doubles, n in bytes" if kernel == "reduce" else "on doubles")
        params["compute_" + kernel] = param(
            joined_segments(kernel, pts), f"[[from n, s, s per unit of {f} beyond it], ...]",
            f"calibrate kernels: median time per call {what}, all {np} ranks at once, at n = "
            f"{', '.join(str(n) for n, _ in sorted(pts))}; joined by straight segments in {f}")
    # RBC's own software work: what its messages cost beyond MPI's, per message (charged by
    # core/cost at each RBC send), and a local split. main() fits the message cost again once
    # the SMPI twin has simulated MPI's side (fit_message).
    message = fit_message(by, pp_all, np)
    if message:
        params["compute_message"] = message
    immediate = fit_immediate_message(by, np)
    if immediate:
        params["compute_immediate_message"] = immediate
    collective = fit_collective_message(by, np)
    if collective:
        params["compute_collective_message"] = collective
    if by.get("pool_exchange") and by.get("pool_exchange_rbc"):
        pool, direct = by["pool_exchange"][0], by["pool_exchange_rbc"][0]
        operations = pool.get("operations", 2)
        pairs = list(zip(pool["samples"], direct["samples"]))
        params["compute_continuation"] = param(
            [max(statistics.median(a - b for a, b in pairs), 0.0) / operations, 0.0], "s: c0 + c1 * 1",
            f"calibrate rbc at np={np}: an 8-byte exchange through JQuick's RbcLayer and RbcPool (send, "
            "receive, continuation) minus the same exchange through RBC directly, trials alternating, "
            f"median of the pairwise differences, per completed operation ({operations} per exchange)")
    if by.get("rbc_split_alone") and by.get("rbc_split_alone_empty"):
        params["compute_communicator"] = param(
            [max(med(by["rbc_split_alone"][0]) - med(by["rbc_split_alone_empty"][0]), 0.0), 0.0],
            "s: c0 + c1 * 1",
            f"calibrate rbc at np={np}: one RangeComm split of the world made alone right after a "
            "barrier and kept (as programs make them, between communications), median over rounds "
            "minus the median of an empty timed interval (the clock, charged as wtime); local work, "
            "no message")
    elif by.get("rbc_split"):
        params["compute_communicator"] = param(
            [med(by["rbc_split"][0]), 0.0], "s: c0 + c1 * 1",
            f"calibrate rbc at np={np}: median time of one RangeComm split of the world, created and "
            "destroyed (local work, no message)")
    if by.get("rbc_collective"):
        params["compute_collective"] = param(
            [med(by["rbc_collective"][0]), 0.0], "s: c0 + c1 * 1",
            "calibrate rbc: median time of rbc::bcast on a communicator of one rank (the call's own "
            "bookkeeping; it sends nothing)")
    real_comm = {(r["op"], r["p"]): med(r) for r in by.get("comm", [])}
    return params, real_comm


def paired_extra(by, kind, minus=0.0):
    """[(payload bytes, median over trials of (RBC's sample - MPI's) - minus)] for the records
    `kind` and `kind`_mpi measured in alternating trials, and the envelope bytes the MPI side
    added (a list: one value where all sizes agree)."""
    rbc = {r["bytes"]: r["samples"] for r in by.get(kind, [])}
    mpi = {r["bytes"]: r for r in by.get(kind + "_mpi", [])}
    extra = [(b, max(statistics.median(x - m for x, m in zip(samples, mpi[b]["samples"])) - minus, 0.0))
             for b, samples in sorted(rbc.items()) if b in mpi and len(mpi[b]["samples"]) == len(samples)]
    wire = sorted({r["wire_bytes"] - r["bytes"] for r in mpi.values() if "wire_bytes" in r})
    return extra, wire


def fitted_line(extra, wire, what):
    c0, c1 = least_squares([float(b) for b, _ in extra], [d for _, d in extra])
    what += f" of the same bytes on the wire (payload + {wire[0]} B envelope)" if len(wire) == 1 else " of the same payload"
    what += (f", trials alternating, median of the pairwise differences at {', '.join(str(b) for b, _ in extra)} B, "
             "per message; least squares")
    return param([max(c0, 0.0), max(c1, 0.0)], "s: c0 + c1 * payload bytes", what)


def fit_immediate_message(by, np):
    """compute_immediate_message: what a message of RBC's blocking send / recv (no operation in
    flight: a plain MPI_Send and MPI_Recv behind the envelope) costs beyond MPI's blocking
    ping-pong of the same bytes on the wire, per half round trip; least squares over sizes.
    None without those samples."""
    extra, wire = paired_extra(by, "rbc_blocking_pingpong")
    if not extra:
        return None
    return fitted_line(extra, wire, f"calibrate rbc at np={np}: RBC's blocking ping-pong (rbc::send / rbc::recv with "
                                    "no operation in flight) minus MPI's blocking ping-pong, per half round trip,")


def fit_collective_message(by, np):
    """compute_collective_message: what a message of an exchanging RBC collective run at once
    costs beyond MPI's exchange of the same wire bytes: a barrier and allgathers on two ranks
    (one exchange each) minus MPI's Irecv + Isend + Waitall, less the call's own bookkeeping
    (rbc_collective, charged as compute_collective). None without those samples."""
    bookkeeping = med(by["rbc_collective"][0]) if by.get("rbc_collective") else 0.0
    extra, wire = paired_extra(by, "rbc_collective_exchange", bookkeeping)
    if not extra:
        return None
    return fitted_line(extra, wire, f"calibrate rbc at np={np}: RBC's barrier (0 B) and allgather by recursive "
                                    "doubling on two ranks, one exchange each, less a collective call's own "
                                    f"bookkeeping ({bookkeeping * 1e9:.0f} ns, rbc_collective), minus MPI's "
                                    "exchange (Irecv, Isend, Waitall)")


def fit_message(by, pp_all, np, simulated_mpi=None):
    """compute_message: what an RBC message costs beyond MPI's of the same bytes on the wire.

    Measured in an exchange where calibrate did (what sorts and collectives do), else in the
    ping-pong. The pairs carry the same bytes on the wire (payload + envelope), so the
    simulation's charge for the envelope's bytes is not counted twice. With `simulated_mpi`
    ({payload bytes: MPI's exchange as the SMPI twin simulates it}), the reference is the
    simulated MPI exchange instead of the real one: SMPI charges an exchange what it charges a
    ping-pong, and what real MPI's exchange costs beyond that is charged with RBC's messages,
    which exchange (as the creation charges are real minus simulated)."""
    pattern = "rbc_exchange" if by.get("rbc_exchange") else "rbc_pingpong"
    rbc_pp = {r["bytes"]: r["samples"] for r in by.get(pattern, [])}
    paired = {r["bytes"]: r["samples"] for r in by.get(pattern + "_mpi", [])}
    wire = sorted({r["wire_bytes"] - r["bytes"] for r in by.get(pattern + "_mpi", []) if "wire_bytes" in r})
    against_sim = bool(simulated_mpi) and pattern == "rbc_exchange"
    extra = []
    for b, samples in sorted(rbc_pp.items()):
        if b in paired and len(paired[b]) == len(samples):
            # Trials alternated with MPI's own: the median of the pairwise differences
            # is robust to load that changes between trials.
            d = statistics.median(r - m for r, m in zip(samples, paired[b]))
            if against_sim:
                if b not in simulated_mpi:
                    continue
                d += statistics.median(paired[b]) - simulated_mpi[b]
            extra.append((b, max(d, 0.0)))
        elif b in pp_all and pattern == "rbc_pingpong":
            extra.append((b, max(statistics.median(samples) - pp_all[b], 0.0)))
    if not extra:
        return None
    if len(extra) >= 2:
        c0, c1 = least_squares([float(b) for b, _ in extra], [d for _, d in extra])
    else:
        c0, c1 = extra[0][1], 0.0
    if pattern == "rbc_exchange":
        what = f"calibrate rbc at np={np}: RBC exchange (both ranks irecv, isend, wait) minus MPI's (Irecv, Isend, Waitall)"
    else:
        what = f"calibrate rbc at np={np}: RBC ping-pong (isend/irecv, wait) minus MPI's blocking ping-pong"
    what += f" of the same bytes on the wire (payload + {wire[0]} B envelope)" if len(wire) == 1 else " of the same payload"
    if against_sim:
        what += (" as the SMPI twin simulates it under this profile (real RBC minus simulated MPI: RBC's own "
                 "work plus what a real MPI exchange costs beyond SMPI's, which charges it a ping-pong's "
                 "latency); real trials alternating with MPI's real ones, median of the pairwise "
                 "differences plus MPI's real-minus-simulated exchange")
    else:
        what += ", trials alternating, median of the pairwise differences"
    what += (f" of {'exchanges' if pattern == 'rbc_exchange' else 'half round trips'} at "
             f"{', '.join(str(b) for b, _ in extra)} B, per message; least squares")
    return param([max(c0, 0.0), max(c1, 0.0)], "s: c0 + c1 * payload bytes", what)


def fit_creation(real_comm, sim_comm, np):
    """Charge = real minus what SMPI already charges, as A + B log2 p (least squares, >= 0)."""
    params = {}
    for op in ("create_group", "split", "dup", "free"):
        ps = sorted(p for (o, p) in real_comm if o == op and (o, p) in sim_comm)
        if not ps:
            continue
        extra = [max(real_comm[(op, p)] - sim_comm[(op, p)], 0.0) for p in ps]
        a, b = least_squares([math.log2(p) for p in ps], extra)
        if b < 0:
            a, b = sum(extra) / len(extra), 0.0
        params["comm_" + op] = param(
            [max(a, 0.0), b], "s: A + B log2 p (p = parent size)",
            f"calibrate comm (halves of the first p ranks, p = {', '.join(map(str, ps))}, np={np}): median "
            "real time minus the simulated time of SMPI's own creation under this profile")
    return params


# ---------------------------------------------------------------------------------------------
# Main


def make_parser():
    parser = argparse.ArgumentParser(
        prog="./janus calibrate",
        description="Measure this machine's MPI (real runs) and write a calibration profile for "
                    "--calibration (docs/calibration.md). Medians of repeated measurements; the "
                    "machine should be otherwise idle.")
    parser.add_argument("--np", type=int, default=min(os.cpu_count() or 2, 16),
                        help="ranks for the real runs (default: the cores, at most 16)")
    parser.add_argument("-o", "--output", default=os.path.join(ROOT, "results", "calibration.json"),
                        help="profile to write (default results/calibration.json)")
    parser.add_argument("--name", default=None, help="profile name (default: host name)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions (seconds)")
    parser.add_argument("--mpi", choices=MPI_FLAVORS, default="openmpi",
                        help="real MPI to build against and launch with (default openmpi; mpich: "
                             "Debian's MPICH, --config=mpich and mpiexec.mpich)")
    parser.add_argument("--launcher", help="real MPI launcher command, e.g. 'mpiexec' "
                        "(default: the --mpi library's; also JANUS_MPIRUN)")
    parser.add_argument("--program", help="calibrate program built for the real MPI "
                        "(default: //sim/calibration:calibrate_mpi, built here)")
    parser.add_argument("--measure-only", action="store_true",
                        help="only the real runs and the fits from them (no Bazel, no SMPI: a machine that "
                             "has MPI and --program only); finish the profile elsewhere with --refit")
    parser.add_argument("--refit", metavar="PROFILE",
                        help="fit again from the raw samples of an earlier profile (path or built-in) "
                             "instead of measuring; keeps its machine, library, date and samples")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per run (default 1200)")
    return parser


def main(argv=None):
    args = make_parser().parse_args(argv)
    if args.np < 2 and not args.refit:
        log("calibrate: --np must be at least 2 (ping-pong needs two ranks)")
        return 2
    if args.launcher:
        os.environ["JANUS_MPIRUN"] = args.launcher
    if args.measure_only and (args.refit or not args.program):
        log("calibrate: --measure-only needs --program (a calibrate_mpi built elsewhere) and no --refit")
        return 2
    try:
        if args.measure_only:
            return write_measured(args)
        bin_root = bazel_bin(["//sim/calibration:calibrate_smpi", "//sim/calibration:libcharge_preload.so"])
        sim_program = os.path.join(bin_root, "sim", "calibration", "libcalibrate_smpi.so")
        preload = os.path.join(bin_root, "sim", "calibration", "libcharge_preload.so")
        started = time.monotonic()
        if args.refit:
            profile, extra = refitted(args.refit, args.name), []
            args.np = profile["machine"]["np"]
        else:
            profile, extra = measured(args), ["--quick"] if args.quick else []
        params, real, real_comm = profile["parameters"], profile["samples"], profile.pop("_real_comm")
        # SMPI pass 1: the ping-pong under the fitted profile; correct the link latency by the
        # small-message residual (SMPI's own per-message costs besides os/or).
        scratch = tempfile.mkdtemp(prefix="janus-calibrate.")
        try:
            path = os.path.join(scratch, "profile.json")

            def simulate(sections):
                with open(path, "w") as f:
                    json.dump(profile, f)
                cmd = [os.path.join(ROOT, "sim", "runner"), sim_program, "--np", str(args.np),
                       "--platform", "cluster", "-p", "nodes=1", "-p", f"cores={args.np}",
                       "--calibration", path, "--heartbeat", "0", "--"] + sections + extra
                return run_measurements(cmd, dict(os.environ, JANUS_CHARGE_PRELOAD=preload),
                                        args.timeout, f"SMPI twin ({' '.join(sections)})")

            sim_pp = {r["bytes"]: med(r) for r in simulate(["pingpong"]) if r["kind"] == "pingpong"}
            real_pp = {r["bytes"]: med(r) for r in real if r["kind"] == "pingpong"}
            small = [s for s in real_pp if s <= 64 and s in sim_pp]
            if small:
                shift = statistics.median(real_pp[s] - sim_pp[s] for s in small)
                a = params["node_alpha"]
                before, a["value"] = a["value"], max(a["value"] + shift, 1e-9)
                a["source"] += f"; corrected by {shift * 1e6:+.3f} us, the simulated-vs-real ping-pong residual at <= 64 B"
                # The long messages' latency is a multiple of node_alpha: keep what it adds up to.
                for seg in params.get(cp.LAT_FACTOR, {}).get("value", []):
                    seg[1] *= before / a["value"]
            sim_exchange = {r["bytes"]: med(r) for r in simulate(["rbc"]) if r["kind"] == "rbc_exchange_mpi"}
            message = fit_message(by_kind(real), {}, args.np, sim_exchange)
            if message:
                params["compute_message"] = message
            sim_comm = {(r["op"], r["p"]): med(r) for r in simulate(["comm"]) if r["kind"] == "comm"}
            params.update(fit_creation(real_comm, sim_comm, args.np))
            profile["simulated_before_charges"] = {
                "comm": [{"op": o, "p": p, "seconds": t} for (o, p), t in sorted(sim_comm.items())],
                "mpi_exchange": [{"bytes": b, "seconds": t} for b, t in sorted(sim_exchange.items())]}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        write_profile(profile, "fitted profile", args.output, started)
        return 0
    except (CalibrationError, cp.ProfileError) as err:
        log(f"calibrate: error: {err}")
        return 1


def write_profile(profile, what, output, started, next_step=""):
    """Checks `profile`, writes it to `output` and prints its parameters."""
    cp.validate(profile, what)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")
    log(f"calibrate: wrote {output} ({time.monotonic() - started:.0f} s){next_step}")
    print(summary_table(profile))


def write_measured(args):
    """--measure-only: the profile as fitted from the real runs alone, with its raw samples, so that
    `--refit` on a machine with Bazel and SimGrid adds the SMPI twin's corrections."""
    started = time.monotonic()
    profile = measured(args)
    profile.pop("_real_comm")
    profile["how"] += "; measured only (./janus calibrate --measure-only): not yet corrected by the SMPI twin"
    write_profile(profile, "measured profile", args.output, started,
                  f"; finish it with ./janus calibrate --refit {args.output} -o PROFILE.json")
    return 0


def measured(args):
    """A profile from measurements made now on real MPI (without the SMPI twin's corrections)."""
    program = args.program or os.path.join(bazel_bin(["//sim/calibration:calibrate_mpi"], args.mpi),
                                            "sim", "calibration", "calibrate_mpi")
    library, version = mpi_library(args.mpi)
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()[0]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PMIX_MCA_gds="hash")
    real = run_measurements(default_launcher(args.np, args.mpi) + [program] + (["--quick"] if args.quick else []),
                            env, args.timeout, f"real {library} {version}, np={args.np}")
    load_after = os.getloadavg()[0]
    how = (f"real {library} {version}, np={args.np} on {cores} cores"
           f"{' (oversubscribed)' if args.np > cores else ''}; load average {load_before:.1f} before, "
           f"{load_after:.1f} after (other jobs on the machine make the medians noisier)")
    params, real_comm = fit_profile(real, args.np, library, version, how)
    return {
        "schema": cp.SCHEMA,
        "name": args.name or host_platform.node(),
        "machine": {"description": f"{host_platform.node()}: {cpu_model()}, {cores} cores",
                    "hostname": host_platform.node(), "cpu": cpu_model(), "cores": cores,
                    "np": args.np, "oversubscribed": args.np > cores},
        "mpi": {"library": library, "version": version},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "how": how,
        "platform": {"name": "cluster", "params": {"nodes": "1", "cores": str(max(args.np, 1))}},
        "parameters": params,
        "samples": real,
        "_real_comm": real_comm,
    }


def refitted(spec, name=None):
    """An earlier profile fitted again from its own raw samples (nothing measured): what a change
    to the fits or to the model does to a machine measured before it."""
    old = cp.load(spec)
    real = old.get("samples")
    np = old.get("machine", {}).get("np")
    if not real or not isinstance(np, int) or np < 2:
        raise CalibrationError(f"{spec}: --refit needs a profile made by ./janus calibrate (raw samples, machine.np)")
    mpi = old.get("mpi", {})
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    measured_how = old.get("how", "").split("; refitted from these samples on ")[0].split("; measured only (")[0]
    how = f"{measured_how}; refitted from these samples on {stamp} (./janus calibrate --refit)"
    params, real_comm = fit_profile(real, np, mpi.get("library", "unknown"), mpi.get("version", "unknown"), how)
    profile = {k: v for k, v in old.items() if not k.startswith("_") and k != "simulated_before_charges"}
    profile.update(name=name or old["name"], how=how, parameters=params, _real_comm=real_comm)
    return profile


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return host_platform.processor() or "unknown CPU"


def summary_table(profile):
    rows = [f"profile {profile['name']}: {profile['how']}", "| parameter | value | unit |", "| --- | --- | --- |"]
    for name, entry in profile["parameters"].items():
        v = entry["value"]
        text = json.dumps(v) if not isinstance(v, float) else f"{v:.4g}"
        rows.append(f"| {name} | {text} | {entry['unit']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
