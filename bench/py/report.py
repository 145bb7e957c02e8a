"""bench/report: turn benchmark records (.jsonl) into plots (gnuplot, PNG + SVG) and a markdown
report that puts the measured ratios next to the paper's and the project's targets."""

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)

import records  # noqa: E402

JQUICK_PHASES = ["pivot_selection", "partition", "exchange_calculation", "exchange",
                 "communicator_creation", "base_cases"]
HYPERCUBE_PHASES = ["fold", "reshuffle", "local_sort", "pivot_selection", "partition", "exchange",
                    "merge", "comm_creation"]
COMM_CREATE_ORDER = ["rbc", "rbc_icreate_range", "rbc_icreate_list", "mpi_create_group", "mpi_split", "groupcomm_286"]
COLLECTIVES = ["bcast", "reduce", "allreduce", "scan", "exscan", "scan_and_bcast", "gather", "allgather", "barrier"]
# Issue 16: an RBC collective takes at most this multiple of the library's own on the same p and size.
COLLECTIVE_LIMIT = 1.2


# ---------------------------------------------------------------------------------------------
# Selecting data


def cost(r):
    """A record's time: the median, plus the host-measured cost of local work the simulator did
    not charge (RBC's communicator creation under deterministic SMPI runs)."""
    extra = r.get("host_op_s") if r.get("compute") == "free" else None
    return r["median_s"] + (extra or 0.0)


class Data:
    def __init__(self, recs):
        # Measured records; records of skipped measurements ("skipped": reason) apart.
        self.recs = [r for r in recs if "skipped" not in r]
        self.skips = [r for r in recs if "skipped" in r]

    def skipped(self, **want):
        """The reason the measurement matching `want` was skipped, or None."""
        found = [r for r in self.skips if all(r.get(k) == v for k, v in want.items())]
        return found[-1]["skipped"] if found else None

    def select(self, **want):
        return [r for r in self.recs if all(r.get(k) == v for k, v in want.items())]

    def median(self, **want):
        """Median time of the one record matching `want` (the last one if several), or None. Records
        of one measurement repeated in rounds (field `round`, bench/node_check) give the median over
        the rounds, each round's last record."""
        found = self.select(**want)
        if not found:
            return None
        rounds = {r["round"]: r for r in found if "round" in r}
        if len(rounds) > 1 and len(rounds) == len({r.get("round") for r in found}):
            return statistics.median(cost(r) for r in rounds.values())
        return cost(found[-1])

    def round_ratios(self, num, den):
        """Time of the records matching `num` over those matching `den` in each round (field
        `round`, bench/node_check) both sides have: ratios taken within one run."""
        a = {r["round"]: cost(r) for r in self.select(**num) if "round" in r}
        b = {r["round"]: cost(r) for r in self.select(**den) if "round" in r}
        return [a[k] / b[k] for k in a if k in b and b[k] > 0]

    def ratio(self, num, den):
        """With several rounds on both sides the median of their own ratios, otherwise the ratio of
        the two medians."""
        rs = self.round_ratios(num, den)
        if len(rs) > 1:
            return statistics.median(rs)
        return ratio(self.median(**num), self.median(**den))

    def values(self, field, **want):
        return sorted({r[field] for r in self.select(**want) if field in r})

    def series(self, x_field, **want):
        """[(x, median_s)] over the records matching `want`, sorted by x."""
        points = {}
        for r in self.select(**want):
            points[r[x_field]] = cost(r)
        return sorted(points.items())


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def sort_ratios(d, num, den, p):
    """[(n/p, time of `num` / time of `den`)] over the uniform sorting records at p."""
    out = []
    for n in d.values("n_per_pe", benchmark="sort", p=p, variant="uniform"):
        r = ratio(d.median(benchmark="sort", implementation=num, variant="uniform", p=p, n_per_pe=n),
                  d.median(benchmark="sort", implementation=den, variant="uniform", p=p, n_per_pe=n))
        if r is not None:
            out.append((n, r))
    return out


def fmt_ratio(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    return f"{x:.2f}x"


def fmt_time(s):
    if s is None:
        return "-"
    if s == 0:
        return "0"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def fmt_p(p):
    if p and p & (p - 1) == 0 and p >= 8:
        return f"2^{p.bit_length() - 1}"
    return str(p)


def range_text(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt_ratio(lo) if abs(hi - lo) <= 0.005 * hi else f"{fmt_ratio(lo)} - {fmt_ratio(hi)}"


# ---------------------------------------------------------------------------------------------
# Plots


class Plotter:
    def __init__(self, out_dir):
        self.dir = os.path.join(out_dir, "plots")
        self.gnuplot = shutil.which("gnuplot")
        self.made = []
        self.errors = []
        # Put before every plot's name: each group of real-MPI records gets its own figures.
        self.prefix = ""
        os.makedirs(self.dir, exist_ok=True)

    def plot(self, name, title, xlabel, ylabel, lines, logx=True, logy=True, hline=None):
        """lines: [(label, [(x, y), ...])]. Writes <name>.png and <name>.svg; returns the PNG's
        path relative to the output directory, or None."""
        lines = [(label, pts) for label, pts in lines if pts]
        if not lines or self.gnuplot is None:
            return None
        name = self.prefix + name
        dat = os.path.join(self.dir, name + ".dat")
        with open(dat, "w") as f:
            for label, pts in lines:
                f.write(f"# {label}\n")
                for x, y in pts:
                    f.write(f"{x} {y!r}\n")
                f.write("\n\n")
        plots = []
        for i, (label, _) in enumerate(lines):
            safe = label.replace('"', "'")
            plots.append(f'"{dat}" index {i} using 1:2 with linespoints lw 2 pt {i % 8 + 1} title "{safe}"')
        if hline is not None:
            plots.append(f'{hline} with lines dt 2 lc rgb "gray" title "ratio {hline:g}"')
        script = [
            f'set title "{title}"', f'set xlabel "{xlabel}"', f'set ylabel "{ylabel}"',
            "set key outside right top", "set grid",
        ]
        if logx:
            script.append("set logscale x 2")
            script.append('set format x "2^%L"')
        if logy:
            script.append("set logscale y 10")
        body = "plot " + ", ".join(plots)
        ok = True
        for term, ext in (("pngcairo size 900,540 font ',10'", "png"), ("svg size 900,540", "svg")):
            out = os.path.join(self.dir, f"{name}.{ext}")
            text = "\n".join([f"set terminal {term} noenhanced", f'set output "{out}"'] + script + [body, "unset output"])
            result = subprocess.run([self.gnuplot], input=text, capture_output=True, text=True)
            if result.returncode != 0:
                self.errors.append(f"{name}.{ext}: {result.stderr.strip()[:300]}")
                ok = False
        if not ok:
            return None
        self.made.append(name)
        return os.path.join("plots", name + ".png")


# ---------------------------------------------------------------------------------------------
# The report


def targets_table(d, sim_p_note):
    """Rows: (what, target, paper/thesis, measured, status)."""
    rows = []

    # 1. Communicator creation.
    for mode in ("halves", "recursive"):
        cells, statuses = [], []
        for impl in ("mpi_create_group", "mpi_split"):
            ps = [p for p in d.values("p", benchmark="comm_create", variant=mode, implementation=impl)
                  if d.median(benchmark="comm_create", variant=mode, implementation="rbc", p=p) is not None]
            if not ps:
                cells.append(f"{impl}: no data")
                statuses.append(None)
                continue
            p = max(ps)
            r = ratio(d.median(benchmark="comm_create", variant=mode, implementation=impl, p=p),
                      d.median(benchmark="comm_create", variant=mode, implementation="rbc", p=p))
            cells.append(f"vs {impl}: {fmt_ratio(r)} (p={fmt_p(p)})")
            statuses.append(r is not None and r >= 1e4)
        rows.append((f"RBC split vs MPI creation ({mode})", ">= 10^4x vs both at 2^15",
                     ">400x (paper), >10^4x (thesis) vs create_group", "; ".join(cells),
                     _status(statuses)))

    # 2. Split + single broadcast.
    ps = d.values("p", benchmark="split_bcast", k=1, implementation="rbc")
    if ps:
        p = max(ps)
        cells, vals = [], []
        for impl in ("mpi_create_group", "mpi_split"):
            rs = [ratio(d.median(benchmark="split_bcast", k=1, n=n, implementation=impl, p=p),
                        d.median(benchmark="split_bcast", k=1, n=n, implementation="rbc", p=p))
                  for n in d.values("n", benchmark="split_bcast", k=1, p=p) if n <= 1024]
            rs = [r for r in rs if r is not None]
            if rs:
                cells.append(f"{impl}: {range_text(rs)}")
                vals += rs
        rows.append(("split + 1 broadcast, MPI / RBC, n <= 2^10", ">= 40x at 2^15", "42x - 202x",
                     (", ".join(cells) or "no data") + f" (p={fmt_p(p)})",
                     _status([min(vals) >= 40] if vals else [None])))
    else:
        rows.append(("split + 1 broadcast, MPI / RBC, n <= 2^10", ">= 40x at 2^15", "42x - 202x", "no data", "not run"))

    # 3. JQuick on RBC vs on MPI communicators.
    ps = d.values("p", benchmark="sort", implementation="jquick_rbc", variant="uniform")
    ps = [p for p in ps if d.select(benchmark="sort", implementation="jquick_mpi_create_group", variant="uniform", p=p)]
    if ps:
        p = max(ps)
        rs = [r for n, r in sort_ratios(d, "jquick_mpi_create_group", "jquick_rbc", p) if n <= 1024]
        rows.append(("JQuick MPI comms / JQuick RBC, n/p <= 2^10 (uniform)", ">= 15x at 2^15",
                     "15x (Intel MPI) - 1282x (IBM MPI)", f"{range_text(rs)} (p={fmt_p(p)})",
                     _status([min(rs) >= 15] if rs else [None])))
    else:
        rows.append(("JQuick MPI comms / JQuick RBC, n/p <= 2^10", ">= 15x at 2^15", "15x - 1282x", "no data", "not run"))

    # 4. Collectives, small messages: the runs on the from_mpi handle (a split's have tables of
    # their own in the collectives section).
    cells, vals = [], []
    handle = collectives_on(d, "first")
    for op in COLLECTIVES:
        ps = [p for p in handle.values("p", variant=op, n=1, implementation="rbc")
              if handle.median(variant=op, n=1, implementation="mpi", p=p) is not None]
        if not ps:
            continue
        p = max(ps)
        r = ratio(handle.median(variant=op, n=1, implementation="rbc", p=p),
                  handle.median(variant=op, n=1, implementation="mpi", p=p))
        if r is not None:
            cells.append(f"{op} {fmt_ratio(r)} (p={fmt_p(p)})")
            vals.append(r)
    rows.append(("RBC collective / MPI, n = 1 double", "<= 1.2x of SMPI's algorithm", "1.06x - 1.6x (SuperMUC vendor MPI)",
                 "; ".join(cells) or "no data", _status([max(vals) <= 1.2] if vals else [None])))

    # 5. Stretch: JQuick vs hypercube quicksort, paired as the target says (hypercube quicksort on
    # the largest power of two <= p, as in the table "JQuick / hypercube per (p, n/p)"; not
    # hypercube quicksort folding extra PEs in), at the largest p and at every p measured: the
    # goal is "any n/p", not only the largest machine.
    vs = jquick_vs_hypercube(d)
    everywhere = [(p_, n, r) for p_, n, _, _, _, r, *_ in vs]
    if everywhere:
        p = max(p_ for p_, _, _ in everywhere)
        pairs = [(n, r) for p_, n, r in everywhere if p_ == p]
        worst = max(pairs, key=lambda t: t[1])
        text = (f"JQuick / hypercube {range_text([r for _, r in pairs])}; worst {fmt_ratio(worst[1])} at n/p={worst[0]}"
                f" (p={fmt_p(p)})")
        if len(everywhere) > len(pairs):
            best = min(everywhere, key=lambda t: t[2])
            bad = max(everywhere, key=lambda t: t[2])
            met = sum(1 for _, _, r in everywhere if r <= 1.0)
            text += (f"; over all {len(everywhere)} (p, n/p), hypercube on the largest power of two <= p: met at {met},"
                     f" {fmt_ratio(best[2])} (p={fmt_p(best[0])}, n/p={best[1]})"
                     f" - {fmt_ratio(bad[2])} (p={fmt_p(bad[0])}, n/p={bad[1]})")
        same_p = [row[8] for row in vs if row[8] is not None]
        if same_p:
            text += (f"; where p is not a power of two, against hypercube quicksort on p itself (folding p - q PEs in): "
                     f"met at {sum(1 for r in same_p if r <= 1.0)} of {len(same_p)}, {range_text(same_p)}")
        flags = [max(r for _, _, r in everywhere) <= 1.0]
        rows.append(("stretch: JQuick (RBC) time / hypercube quicksort time, any n/p", "<= 1.0x at every n/p",
                     "thesis: hypercube 3-4x faster (small n/p), 1.4-1.7x (large)", text, _status(flags)))
    else:
        rows.append(("stretch: JQuick / hypercube quicksort", "<= 1.0x at every n/p", "hypercube 3-4x / 1.4-1.7x faster",
                     "no data", "not run"))
    return rows


# The paper's published ratios at 2^15 ranks (section VIII, figs. 7 and 8), per machine and the
# calibration profile that models it: (low, high) with high None for "more than low". The paper
# made MPI communicators with each library's faster call: MPI_Comm_create_group on Intel MPI,
# MPI_Comm_split on IBM MPI (whose create_group is orders of magnitude slower); "creation" names
# the split_bcast implementation and the JQuick layer that do the same.
PAPER_RATIOS = {
    "supermuc": ("SuperMUC, Intel MPI", {
        "creation": ("create_group", "mpi_create_group", "jquick_mpi_create_group"),
        "fig7": (42.5, 81.8),
        "fig8_np1": (3.5, 3.5),
    }),
    "juqueen": ("JUQUEEN, IBM MPI", {
        "creation": ("split", "mpi_split", "jquick_mpi_split"),
        "fig7": (69.4, 202.0),
        "fig8_np1": (16.9, 16.9),
        "fig8_small": (1282.0, None),
    }),
}
PAPER_P = 32768


def paper_verdict(value, low, high):
    """Inside the published range, within 2x of it, or outside."""
    if value is None:
        return "no data"
    top = high if high is not None else float("inf")
    if low <= value <= top:
        return "inside"
    if low / 2 <= value <= top * 2:
        return "within 2x"
    return "outside"


def paper_range_text(low, high):
    if high is None:
        return f"> {low:g}x"
    return f"{low:g}x" if low == high else f"{low:g}x - {high:g}x"


def paper_figures(d):
    """Rows comparing simulated ratios with the paper's figs. 7 and 8, per calibration profile
    that models one of the paper's machines; each names the p it was measured at."""
    rows = []
    for profile, (machine, published) in PAPER_RATIOS.items():
        cal = Data(d.select(calibration=profile))
        call, split_impl, jquick_impl = published["creation"]
        # Fig. 7: one split + one broadcast of n <= 2^10 doubles, MPI creation + MPI_Bcast / RBC.
        what = f"fig. 7: split + 1 bcast, MPI {call} / RBC, n <= 2^10"
        low, high = published["fig7"]
        ps = [p for p in cal.values("p", benchmark="split_bcast", k=1, implementation="rbc")
              if cal.select(benchmark="split_bcast", k=1, implementation=split_impl, p=p)]
        if ps:
            p = max(ps)
            rs = [ratio(cal.median(benchmark="split_bcast", k=1, n=n, implementation=split_impl, p=p),
                        cal.median(benchmark="split_bcast", k=1, n=n, implementation="rbc", p=p))
                  for n in cal.values("n", benchmark="split_bcast", k=1, p=p) if n <= 1024]
            rs = [r for r in rs if r is not None]
            verdicts = sorted({paper_verdict(r, low, high) for r in rs})
            rows.append([what, machine, paper_range_text(low, high), profile, fmt_p(p), range_text(rs),
                         ", ".join(verdicts) + ("" if p == PAPER_P else " (not at 2^15)")])
        else:
            rows.append([what, machine, paper_range_text(low, high), profile, "-", "not simulated", "no data"])
        # Fig. 8: JQuick on MPI communicators / JQuick on RBC.
        ps = [p for p in cal.values("p", benchmark="sort", implementation="jquick_rbc", variant="uniform")
              if cal.select(benchmark="sort", implementation=jquick_impl, variant="uniform", p=p)]
        pairs = sort_ratios(cal, jquick_impl, "jquick_rbc", max(ps)) if ps else []
        for key, label, pick in (("fig8_np1", "n/p = 1", lambda n: n == 1),
                                 ("fig8_small", "1 < n/p <= 2^10", lambda n: 1 < n <= 1024)):
            if key not in published:
                continue
            low, high = published[key]
            rs = [r for n, r in pairs if pick(n)]
            what = f"fig. 8: JQuick {call} / RBC, {label}"
            if rs:
                p = max(ps)
                verdicts = sorted({paper_verdict(r, low, high) for r in rs})
                rows.append([what, machine, paper_range_text(low, high), profile, fmt_p(p), range_text(rs),
                             ", ".join(verdicts) + ("" if p == PAPER_P else " (not at 2^15)")])
            else:
                rows.append([what, machine, paper_range_text(low, high), profile, "-", "not simulated", "no data"])
    return rows


def _status(flags):
    if not flags or all(f is None for f in flags):
        return "no data"
    return "met" if all(f for f in flags if f is not None) and None not in flags else (
        "partly met" if any(f for f in flags if f) else "not met")


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def library_name(r):
    """Short name of the MPI library of a real-MPI record, e.g. "Open MPI v4.1.4", "MPICH 4.0.2".
    Records written before the library was recorded all came from Open MPI."""
    text = r.get("mpi_library")
    if not text:
        return "Open MPI"
    if text.startswith("MPICH Version:"):
        return "MPICH " + text.split(":", 1)[1].strip()
    return text.split(",")[0].strip()


def sim_groups(recs):
    """Simulated records by (platform, calibration), in order of appearance: a table keyed by p and
    size holds one platform's numbers, so runs on different platforms or profiles are reported
    apart."""
    groups = {}
    for r in recs:
        if r["backend"] == "smpi":
            groups.setdefault((r["platform"], calibration_of(r)), []).append(r)
    return groups


def calibration_of(r):
    """The profile a simulated record used ("" uncalibrated); records written by hand name it
    `calibration_profile`."""
    return r.get("calibration") or r.get("calibration_profile") or ""


def file_safe(text):
    """`text` with every character but letters and digits replaced by '_' (a plot file prefix)."""
    return "".join(c if c.isalnum() else "_" for c in text)


def sim_label(platform, calibration):
    return f"{platform} platform, " + (f"calibration {calibration}" if calibration else "uncalibrated")


def real_mpi_groups(recs):
    """Real-MPI records by (platform, MPI library), in order of appearance: runs of different
    libraries or machines are reported apart."""
    groups = {}
    for r in recs:
        if r["backend"] == "mpi":
            groups.setdefault((r["platform"], library_name(r)), []).append(r)
    return groups


def describe_platforms(recs):
    seen = {}
    for r in recs:
        pp = r.get("platform_params") or {}
        key = (r["backend"], r["platform"], library_name(r) if r["backend"] == "mpi" else "")
        if key in seen:
            continue
        if r["backend"] == "smpi":
            text = (f"{r['platform']}: topology {pp.get('topology', '?')}, {pp.get('cores_per_node', '?')} cores/node, "
                    f"alpha {fmt_time(pp.get('alpha_per_hop_s'))} per hop, "
                    f"beta {pp.get('beta_s_per_byte', 0):.3g} s/byte, node alpha {fmt_time(pp.get('node_alpha_s'))}")
        elif "host_cores" in pp:
            text = (f"{r['platform']}: {library_name(r)} on one machine ({pp.get('host_cores', '?')} cores"
                    f"{', oversubscribed' if pp.get('oversubscribed') else ''})")
        else:
            shape = ", ".join(f"{k} {v}" for k, v in pp.items() if k not in ("name", "launcher"))
            text = (f"{r['platform']}: {library_name(r)}, started by `{r.get('launcher', pp.get('launcher', '?'))}`"
                    f"{' (' + shape + ')' if shape else ''}")
        seen[key] = text
    return [f"- {t}" for t in seen.values()]


def section_comm_create(d, plot, draw):
    out = []
    if not d.select(benchmark="comm_create"):
        return out
    out.append("## Communicator creation (paper fig. 5 and section VI, MPI ticket #286)\n")
    out.append("Time to create the communicators of one split into halves, and of a recursive split down to "
               "single PEs (log2 p levels). `rbc`: RangeComm::split; `rbc_icreate_range`: "
               "rbc::icomm_create_group over the half as a range + wait (context derived locally, paper VI); "
               "`rbc_icreate_list`: the same members as a rank list in descending order (not a range: the "
               "first member picks the identity and a nonblocking binomial broadcast spreads it, O(alpha log l)); "
               "`mpi_create_group`: MPI_Group_range_incl + MPI_Comm_create_group; `mpi_split`: MPI_Comm_split; "
               "`groupcomm_286`: ticket #286's recursive MPI_Intercomm_create + MPI_Intercomm_merge over the "
               "members (core/groupcomm). MPI times include MPI_Group_range_incl; freeing is not timed. "
               "In simulated runs the local RBC creations' time is the simulated time (~0: no messages) plus "
               "`host_op_s`, their local CPU cost measured on this host (fastest of 20 calls, slowest PE). SMPI "
               "models MPI's messages but not the MPI library's own local work, so MPI's side is a lower bound.\n")
    reasons = sorted({(r["implementation"], r["skipped"]) for r in d.skips if r["benchmark"] == "comm_create"})
    for impl, why in reasons:
        out.append(f"`{impl}`: skipped: {why}.\n")
    for mode in ("halves", "recursive"):
        impls = sorted(set(d.values("implementation", benchmark="comm_create", variant=mode)) |
                       {r["implementation"] for r in d.skips if r["benchmark"] == "comm_create" and r["variant"] == mode},
                       key=lambda i: (COMM_CREATE_ORDER.index(i) if i in COMM_CREATE_ORDER else len(COMM_CREATE_ORDER), i))
        if draw:
            img = plot.plot(f"fig5_comm_create_{mode}", f"communicator creation ({mode})", "p", "time [s]",
                            [(i, d.series("p", benchmark="comm_create", variant=mode, implementation=i)) for i in impls])
            if img:
                out.append(f"![communicator creation, {mode}]({img})\n")
        rows = []
        for p in d.values("p", benchmark="comm_create", variant=mode):
            rbc = d.median(benchmark="comm_create", variant=mode, implementation="rbc", p=p)
            row = [fmt_p(p)]
            for i in impls:
                why = d.skipped(benchmark="comm_create", variant=mode, implementation=i, p=p)
                row.append("skipped" if why else fmt_time(d.median(benchmark="comm_create", variant=mode,
                                                                  implementation=i, p=p)))
            row += [fmt_ratio(ratio(d.median(benchmark="comm_create", variant=mode, implementation=i, p=p), rbc))
                    for i in impls if i != "rbc"]
            rows.append(row)
        header = ["p"] + impls + [f"{i} / rbc" for i in impls if i != "rbc"]
        out.append(f"**{mode}**\n\n" + md_table(header, rows) + "\n")
    return out


def section_overlap(d, plot, draw):
    out = []
    if not d.select(benchmark="overlap"):
        return out
    out.append("## Overlapping communicators (paper fig. 6)\n")
    out.append("Groups of 4 PEs, neighbours sharing one PE. Cascaded: a shared PE creates its left group first "
               "(a chain through all groups); alternating: even groups first (constant depth).\n")
    impls = d.values("implementation", benchmark="overlap")
    if draw:
        img = plot.plot("fig6_overlap", "overlapping groups of 4", "p", "time [s]",
                        [(i, d.series("p", benchmark="overlap", implementation=i)) for i in impls])
        if img:
            out.append(f"![overlapping communicators]({img})\n")
    rows = []
    for p in d.values("p", benchmark="overlap"):
        rbc = d.median(benchmark="overlap", implementation="rbc", p=p)
        rows.append([fmt_p(p)] + [fmt_time(d.median(benchmark="overlap", implementation=i, p=p)) for i in impls]
                    + [fmt_ratio(ratio(d.median(benchmark="overlap", implementation=i, p=p), rbc)) for i in impls if i != "rbc"])
    out.append(md_table(["p"] + impls + [f"{i} / rbc" for i in impls if i != "rbc"], rows) + "\n")
    return out


def on_communicator(r):
    """The communicator a collectives record's run had RBC on: "split" (bench collectives
    --communicator=split) or "first", the from_mpi handle (older records have no field)."""
    return r.get("communicator") or "first"


def collectives_on(d, comm):
    """The collectives records of the runs with RBC on `comm` ("first" or "split")."""
    return Data([r for r in d.select(benchmark="collectives") if on_communicator(r) == comm])


def section_collectives(d, plot, draw):
    out = []
    if not d.select(benchmark="collectives"):
        return out
    # The figures and the algorithm list: the runs on the from_mpi handle.
    handle = collectives_on(d, "first")
    out.append("## Collectives, RBC vs MPI (paper figs. 4 and 9)\n")
    algs = {}
    for r in handle.select(benchmark="collectives", implementation="mpi"):
        algs[r["variant"]] = r.get("algorithm", "?")
    out.append("MPI algorithms used: " + ", ".join(f"{op}: `{a}`" for op, a in sorted(algs.items())) + ". "
               "Sizes are doubles per PE (gather: doubles arriving at the root). Ratio = RBC time / MPI time "
               "(below 1: RBC faster).\n")
    ops = [op for op in COLLECTIVES if d.select(benchmark="collectives", variant=op)]
    if draw:
        img = plot.plot("fig4_collectives_over_p", "RBC / MPI time, 1 double", "p", "RBC time / MPI time",
                        [(op, [(p, ratio(handle.median(benchmark="collectives", variant=op, n=1, implementation="rbc", p=p),
                                         handle.median(benchmark="collectives", variant=op, n=1, implementation="mpi", p=p)))
                               for p in handle.values("p", benchmark="collectives", variant=op, n=1)
                               if handle.median(benchmark="collectives", variant=op, n=1, implementation="mpi", p=p)])
                         for op in ops], logy=False, hline=1.0)
        if img:
            out.append(f"![collectives over p]({img})\n")
    # Message-size sweep at the p with the most sizes.
    best_p, best_count = None, 0
    for p in handle.values("p", benchmark="collectives"):
        count = len(handle.values("n", benchmark="collectives", p=p))
        if count > best_count:
            best_p, best_count = p, count
    if draw and best_p and best_count > 2:
        img = plot.plot("fig9_collectives_over_size", f"RBC / MPI time, p = {best_p}", "message size [doubles]",
                        "RBC time / MPI time",
                        [(op, [(n, ratio(handle.median(benchmark="collectives", variant=op, n=n, implementation="rbc", p=best_p),
                                         handle.median(benchmark="collectives", variant=op, n=n, implementation="mpi", p=best_p)))
                               for n in handle.values("n", benchmark="collectives", variant=op, p=best_p)
                               if handle.median(benchmark="collectives", variant=op, n=n, implementation="mpi", p=best_p)])
                         for op in ops], logy=False, hline=1.0)
        if img:
            out.append(f"![collectives over message size]({img})\n")
    out.append(f"Issue 16's target: every RBC collective takes at most {COLLECTIVE_LIMIT}x the library's own, "
               "8 B to 8 MiB. One table per backend and MPI library; each ratio compares two medians from the same run.\n")
    def where(r):
        if r["backend"] == "mpi":
            return library_name(r)
        return sim_label(r["platform"], calibration_of(r))
    # One table per library and communicator: runs with RBC on a split apart.
    for backend, platform, library, comm in sorted({(r["backend"], r["platform"], where(r), on_communicator(r))
                                                     for r in d.select(benchmark="collectives")}):
        rows = []
        met = total = 0
        at = dict(benchmark="collectives", backend=backend, platform=platform)
        sub = collectives_on(d, comm)
        for op in ops:
            for p in sub.values("p", variant=op, **at):
                for n in sub.values("n", variant=op, p=p, **at):
                    want = dict(variant=op, n=n, p=p, **at)
                    rbc = sub.median(implementation="rbc", **want)
                    mpi = sub.median(implementation="mpi", **want)
                    r = sub.ratio(dict(implementation="rbc", **want), dict(implementation="mpi", **want))
                    verdict = ""
                    if r is not None:
                        total += 1
                        met += r <= COLLECTIVE_LIMIT
                        verdict = "met" if r <= COLLECTIVE_LIMIT else "not met"
                    # The last record's, as for the times: later files replace earlier records.
                    algorithm = ([x.get("algorithm", "") for x in sub.select(implementation="rbc", **want)] or [""])[-1]
                    algorithm = algorithm[len("rbc "):] if algorithm.startswith("rbc ") else algorithm
                    rows.append([op, fmt_p(p), n, algorithm, fmt_time(rbc), fmt_time(mpi), fmt_ratio(r), verdict])
        if comm == "split":
            out.append(f"### {backend}: {library}, RBC on a split\n")
            out.append("RBC on a split over all ranks, whose messages carry the communicator's exact key in an "
                       "envelope, as every communicator but the `from_mpi` handle's (`--communicator=split`); the "
                       "library's own on the world, in the same runs.\n")
        else:
            out.append(f"### {backend}: {library}\n")
        out.append(f"Target met at {met} of {total} points.\n")
        out.append(md_table(["collective", "p", "n", "rbc algorithm", "rbc", "mpi", "rbc / mpi",
                             f"<= {COLLECTIVE_LIMIT}x"], rows) + "\n")
    return out


def section_p2p(d, plot, draw):
    """Ping-pong RBC vs MPI: what RBC's isolation (an envelope with the communicator's exact key
    on every message, core/rbc/src/wire.hpp) costs over the library's own send and receive."""
    out = []
    if not d.select(benchmark="p2p"):
        return out
    out.append("## Point-to-point: the cost of RBC's isolation\n")
    enveloped = "rbc_enveloped" if d.select(benchmark="p2p", implementation="rbc_enveloped") else "rbc"
    if enveloped == "rbc":
        out.append("Half a ping-pong round trip between ranks 0 and 1, RBC (`rbc::send`/`rbc::recv`, every "
                   "message carries its communicator's exact key in an envelope) vs the MPI library's "
                   "`MPI_Send`/`MPI_Recv`. Issue 16's target: RBC adds at most 10% (8 B) and 2% (64 KiB) to the "
                   "library's ping-pong.\n")
    else:
        out.append("Half a ping-pong round trip between ranks 0 and 1, RBC (`rbc::send`/`rbc::recv`) vs the MPI "
                   "library's `MPI_Send`/`MPI_Recv`. `rbc` runs on the program's `from_mpi` handle, whose user "
                   "messages travel bare (their tags alone say whose they are); `rbc on a split` on a split over "
                   "all ranks, whose messages, as every other communicator's, carry the communicator's exact key in "
                   "an envelope. Issue 16's target: RBC adds at most 10% (8 B) and 2% (64 KiB) to the library's "
                   "ping-pong.\n")
    def points(variant):
        """(p, bytes, rbc, mpi, rbc / mpi) of one variant."""
        for p in d.values("p", benchmark="p2p", variant=variant):
            for n in d.values("n", benchmark="p2p", variant=variant, p=p):
                want = dict(benchmark="p2p", variant=variant, n=n, p=p)
                rbc = d.median(implementation="rbc", **want)
                mpi = d.median(implementation="mpi", **want)
                yield p, n, rbc, mpi, d.ratio(dict(implementation="rbc", **want), dict(implementation="mpi", **want))

    split = bool(d.select(benchmark="p2p", implementation="mpi_wire"))

    def parts(variant, p, n):
        """RBC on a split, MPI at its wire size, and its ratio split into the envelope's bytes and RBC's work."""
        want = dict(benchmark="p2p", variant=variant, n=n, p=p)
        cells = []
        if enveloped != "rbc":
            cells.append(fmt_ratio(d.ratio(dict(implementation=enveloped, **want), dict(implementation="mpi", **want))))
        if not split:
            return cells
        wire = d.median(implementation="mpi_wire", **want)
        return cells + [fmt_time(wire),
                        fmt_ratio(d.ratio(dict(implementation="mpi_wire", **want), dict(implementation="mpi", **want))),
                        fmt_ratio(d.ratio(dict(implementation=enveloped, **want),
                                          dict(implementation="mpi_wire", **want)))]

    extra = ["rbc on a split / mpi"] if enveloped != "rbc" else []
    if split:
        extra += ["mpi at rbc's wire size", "envelope's bytes (wire / mpi)",
                  "rbc's own work (" + ("split" if enveloped != "rbc" else "rbc") + " / wire)"]
    rows = []
    for p, n, rbc, mpi, r in points("pingpong"):
        limit = 1.10 if n <= 8 else 1.02 if n >= 65536 else None
        verdict = "" if r is None or limit is None else ("met" if r <= limit else "not met")
        rows.append([fmt_p(p), n, fmt_time(rbc), fmt_time(mpi), fmt_ratio(r), verdict] + parts("pingpong", p, n))
    out.append(md_table(["p", "bytes", "rbc", "mpi", "rbc / mpi", "target"] + extra, rows) + "\n")
    if split:
        out.append("MPI alone with messages as large as RBC's (`mpi_wire`: the payload and RBC's envelope) splits "
                   "the ratio into what the envelope's bytes cost in the library and what RBC's own work costs. "
                   "A library may send the smallest messages faster than larger ones (Open MPI 4.1: up to 8 "
                   "bytes), a path a message that carries an envelope cannot take.\n")
    rows = [[fmt_p(p), n, fmt_time(rbc), fmt_time(mpi), fmt_ratio(r)] + parts("ipingpong", p, n)
            for p, n, rbc, mpi, r in points("ipingpong")]
    if rows:
        out.append("The same round trips through requests (`rbc::irecv` + `rbc::isend`, each waited, against "
                   "`MPI_Irecv` + `MPI_Isend` + `MPI_Wait`): what a request and its wait add. No target.\n")
        out.append(md_table(["p", "bytes", "rbc", "mpi", "rbc / mpi"] + extra, rows) + "\n")
    impls = [i for i in ("rbc", "mpi_late_payload", "mpi_preposted", "mpi_announced")
             if d.select(benchmark="p2p", variant="exchange", implementation=i)]
    rows = []
    for p in d.values("p", benchmark="p2p", variant="exchange"):
        for n in d.values("n", benchmark="p2p", variant="exchange", p=p):
            want = dict(benchmark="p2p", variant="exchange", n=n, p=p)
            mpi = d.median(implementation="mpi", **want)
            row = [fmt_p(p), n, fmt_time(mpi)]
            for i in impls:
                row += [fmt_time(d.median(implementation=i, **want)),
                        fmt_ratio(d.ratio(dict(implementation=i, **want), dict(implementation="mpi", **want)))]
            rows.append(row)
    if rows:
        out.append("Both ranks exchanging at once (a collective's butterfly round), one exchange; beside RBC, MPI "
                   "alone sending what RBC sends above 4 KiB (an envelope, then the payload) with the payload's "
                   "receive posted once the envelope is in (`mpi_late_payload`, as RBC must) or at once "
                   "(`mpi_preposted`), or posted at once with the payload sent once the partner's envelope "
                   "is in (`mpi_announced`). No target.\n")
        out.append(md_table(["p", "bytes", "mpi"] + [x for i in impls for x in (i, f"{i} / mpi")], rows) + "\n")
    return out


def section_split_bcast(d, plot, draw):
    out = []
    if not d.select(benchmark="split_bcast"):
        return out
    out.append("## Split, then k broadcasts (paper fig. 7)\n")
    out.append("Each half of the PEs is made a communicator and broadcasts n doubles k times; timed together. "
               "Ratio = MPI time / RBC time (above 1: RBC faster).\n")
    impls = [i for i in d.values("implementation", benchmark="split_bcast") if i != "rbc"]
    ks = d.values("k", benchmark="split_bcast")
    if draw:
        lines = []
        for impl in impls:
            for k in ks:
                pts = []
                for p in d.values("p", benchmark="split_bcast", k=k, n=1):
                    r = ratio(d.median(benchmark="split_bcast", k=k, n=1, implementation=impl, p=p),
                              d.median(benchmark="split_bcast", k=k, n=1, implementation="rbc", p=p))
                    if r is not None:
                        pts.append((p, r))
                lines.append((f"{impl}, k={k}", pts))
        img = plot.plot("fig7_split_bcast", "split + k broadcasts of 1 double: MPI / RBC", "p", "MPI time / RBC time", lines)
        if img:
            out.append(f"![split and broadcast]({img})\n")
    rows = []
    for k in ks:
        for p in d.values("p", benchmark="split_bcast", k=k):
            for n in d.values("n", benchmark="split_bcast", k=k, p=p):
                rbc = d.median(benchmark="split_bcast", k=k, n=n, implementation="rbc", p=p)
                row = [k, fmt_p(p), n, fmt_time(rbc)]
                for impl in impls:
                    m = d.median(benchmark="split_bcast", k=k, n=n, implementation=impl, p=p)
                    row += [fmt_time(m), fmt_ratio(ratio(m, rbc))]
                rows.append(row)
    header = ["k", "p", "n", "rbc"] + [x for impl in impls for x in (impl, f"{impl} / rbc")]
    out.append(md_table(header, rows) + "\n")
    return out


def pow2_floor(p):
    """The largest power of two <= p (hypercube quicksort's partner for p ranks)."""
    q = 1
    while q * 2 <= p:
        q *= 2
    return q


def jquick_vs_hypercube(d):
    """Rows (p, n/p, JQuick time, hypercube's p, hypercube time, ratio, oversubscribed, JQuick /
    JQuick on q, JQuick / hypercube on p) over the uniform sorting records: JQuick (RBC) at p
    against hypercube quicksort (RBC) at q, the largest power of two <= p (the target's pairing).
    Where p is not a power of two, the last two say what the pairing leaves out: JQuick on q
    (what p itself costs JQuick: more data, ranks, and often nodes) and hypercube quicksort on p
    itself, which folds the other p - q PEs' data into q first (what a user with p ranks would
    run); None where not measured."""
    rows = []
    for p in d.values("p", benchmark="sort", implementation="jquick_rbc", variant="uniform"):
        q = pow2_floor(p)
        for n in d.values("n_per_pe", benchmark="sort", implementation="jquick_rbc", variant="uniform", p=p):
            jw = dict(benchmark="sort", implementation="jquick_rbc", variant="uniform", p=p, n_per_pe=n)
            hw = dict(benchmark="sort", implementation="hypercube_rbc", variant="uniform", p=q, n_per_pe=n)
            r = d.ratio(jw, hw)  # None where either side was not measured
            if r is None:
                continue
            over = any((x.get("platform_params") or {}).get("oversubscribed")
                       for x in d.select(benchmark="sort", implementation="jquick_rbc", variant="uniform", p=p, n_per_pe=n))
            vs_jquick_q = d.ratio(jw, dict(jw, p=q)) if q != p else None
            vs_hypercube_p = d.ratio(jw, dict(hw, p=p)) if q != p else None
            j, h = d.median(**jw), d.median(**hw)
            rows.append((p, n, j, q, h, r, over, vs_jquick_q, vs_hypercube_p))
    return rows


# Issue 17: JQuick at most this many times its lower bound (the local sort of n/p elements plus one
# exchange of n/p elements with a partner, bench/sort's `lower_bound`) from this n/p on.
LOWER_BOUND_LIMIT = 1.3
LOWER_BOUND_FROM = 4096


def jquick_vs_lower_bound(d):
    """Rows (backend, p, n/p, JQuick time, lower bound, ratio, hypercube time, JQuick / hypercube)
    wherever bench/sort measured `lower_bound` beside jquick_rbc (uniform doubles)."""
    rows = []
    for backend in d.values("backend", benchmark="sort", implementation="lower_bound", variant="uniform"):
        for p in d.values("p", benchmark="sort", implementation="lower_bound", variant="uniform", backend=backend):
            for n in d.values("n_per_pe", benchmark="sort", implementation="lower_bound", variant="uniform",
                              backend=backend, p=p):
                key = dict(benchmark="sort", variant="uniform", backend=backend, p=p, n_per_pe=n)
                lb = d.median(implementation="lower_bound", **key)
                j = d.median(implementation="jquick_rbc", **key)
                h = d.median(implementation="hypercube_rbc", **key)
                if ratio(j, lb) is None:
                    continue
                rows.append((backend, p, n, j, lb, ratio(j, lb), h, ratio(j, h)))
    return rows


def lower_bound_table(d):
    rows = jquick_vs_lower_bound(d)
    if not rows:
        return []
    table = []
    for backend, p, n, j, lb, r, h, rh in rows:
        if n < LOWER_BOUND_FROM:
            verdict = "(below the target's n/p)"
        else:
            verdict = "met" if r <= LOWER_BOUND_LIMIT else "not met"
            if rh is not None:
                verdict += "; <= hypercube" if rh <= 1.0 else "; slower than hypercube"
        table.append([backend, fmt_p(p), n, fmt_time(j), fmt_time(lb), fmt_ratio(r), fmt_time(h),
                      fmt_ratio(rh), verdict])
    return [f"JQuick against its lower bound (issue 17: JQuick / lower bound <= {LOWER_BOUND_LIMIT}x for "
            f"n/p >= {LOWER_BOUND_FROM}, and JQuick <= hypercube quicksort; uniform doubles; lower bound = "
            "local sort of n/p elements plus one exchange of n/p elements with a partner, same run):\n\n" +
            md_table(["backend", "p", "n/p", "jquick_rbc", "lower bound", "JQuick / lower bound",
                      "hypercube_rbc", "JQuick / hypercube", "verdict"], table) + "\n"]


def section_sort(d, plot, draw):
    out = []
    if not d.select(benchmark="sort"):
        return out
    out.append("## Sorting: JQuick on RBC vs on MPI communicators vs hypercube quicksort (paper fig. 8)\n")
    out.append("Doubles; time = max over PEs, median of repetitions. Simulated runs charge host CPU time "
               "(local sorting and partitioning) 1:1 on one modelled core. `verified` = the output was "
               "globally sorted with no element lost.\n")
    impls = d.values("implementation", benchmark="sort")
    ps = d.values("p", benchmark="sort", variant="uniform")
    if draw and ps:
        # The figure's p is the one with the most measurements (a sweep over n/p with every
        # implementation), not the largest, where only a point or two may have been affordable.
        p = max(ps, key=lambda q: (len(d.select(benchmark="sort", variant="uniform", p=q)), q))
        img = plot.plot("fig8_sort_time", f"sorting uniform doubles, p = {p}", "n/p", "time [s]",
                        [(i, d.series("n_per_pe", benchmark="sort", variant="uniform", implementation=i, p=p)) for i in impls])
        if img:
            out.append(f"![sorting time]({img})\n")
        lines = []
        for other in impls:
            if other == "jquick_rbc":
                continue
            for q in ps:
                lines.append((f"{other} / jquick_rbc, p = {fmt_p(q)}", sort_ratios(d, other, "jquick_rbc", q)))
        img = plot.plot("fig8_sort_ratio", "time relative to JQuick on RBC (uniform)", "n/p",
                        "time / JQuick-RBC time", lines, hline=1.0)
        if img:
            out.append(f"![sorting ratios]({img})\n")
    rows = []
    for dist in d.values("variant", benchmark="sort"):
        for p in d.values("p", benchmark="sort", variant=dist):
            for n in d.values("n_per_pe", benchmark="sort", variant=dist, p=p):
                base = d.median(benchmark="sort", variant=dist, implementation="jquick_rbc", p=p, n_per_pe=n)
                row = [dist, fmt_p(p), n]
                ok = True
                for impl in impls:
                    sel = d.select(benchmark="sort", variant=dist, implementation=impl, p=p, n_per_pe=n)
                    m = d.median(benchmark="sort", variant=dist, implementation=impl, p=p, n_per_pe=n)
                    ok = ok and all(r.get("verified", True) for r in sel)
                    row += [fmt_time(m) + ("" if impl == "jquick_rbc" else f" ({fmt_ratio(ratio(m, base))})")]
                row.append("yes" if ok else "NO")
                rows.append(row)
    out.append("Times (in brackets: relative to jquick_rbc).\n\n" +
               md_table(["distribution", "p", "n/p"] + impls + ["verified"], rows) + "\n")
    # Issue 16, target 1: JQuick / hypercube <= 1.0 at every n/p.
    vs = jquick_vs_hypercube(d)
    if vs:
        met = sum(1 for row in vs if row[5] <= 1.0)
        npot = any(row[3] != row[0] for row in vs)
        columns = ["p", "n/p", "jquick_rbc", "hypercube p", "hypercube_rbc", "JQuick / hypercube", "verdict"]
        if npot:
            columns += ["JQuick / JQuick on q", "JQuick / hypercube on p"]
        table = []
        for p, n, j, q, h, r, o, jq, hp in vs:
            row = [fmt_p(p) + (" (oversubscribed)" if o else ""), n, fmt_time(j), fmt_p(q), fmt_time(h), fmt_ratio(r),
                   "met (<= 1.0)" if r <= 1.0 else "not met"]
            if npot:
                row += [fmt_ratio(jq) if jq is not None else "", fmt_ratio(hp) if hp is not None else ""]
            table.append(row)
        note = ""
        if npot:
            note = ("Where p is not a power of two q, the last two columns say what the pairing leaves out: JQuick on q "
                    "(what p itself costs JQuick: more data, more ranks, often one more node) and hypercube quicksort "
                    "on p itself, which first folds the other p - q PEs' data into q (what a user with p ranks "
                    "would run).\n\n")
        out.append("JQuick / hypercube per (p, n/p) (uniform; target <= 1.0 at every n/p; hypercube quicksort "
                   "measured on the largest power of two q <= p; met at "
                   f"{met} of {len(vs)} points):\n\n" + note + md_table(columns, table) + "\n")
    out += lower_bound_table(d)
    # Phase breakdown at the largest p, a small and a large n/p.
    if ps:
        p = max(ps)
        nps = d.values("n_per_pe", benchmark="sort", variant="uniform", p=p)
        picks = sorted({n for n in (nps[0], 1024 if 1024 in nps else None, nps[-1]) if n is not None})
        rows = []
        for n in picks:
            for impl in impls:
                sel = d.select(benchmark="sort", variant="uniform", implementation=impl, p=p, n_per_pe=n)
                if not sel:
                    continue
                phases = sel[-1].get("phases", {})
                rows.append([n, impl, fmt_time(sel[-1]["median_s"]),
                             ", ".join(f"{k} {fmt_time(v)}" for k, v in phases.items() if v and v > 1e-9)])
        out.append(f"Phase breakdown (uniform, p = {p}; per phase: max over PEs, median over repetitions; "
                   "phases of a PE can overlap when a janus PE serves two groups):\n\n" +
                   md_table(["n/p", "implementation", "total", "phases"], rows) + "\n")
    return out


MERGE_VARIANTS = ["fence_bound", "fence_allreduce", "lock_shared", "rget_lock_all"]
# Siebert and Traeff on Blue Gene/P (docs/merge.md, /work/shared/seeds/stable-parallel-merge.txt).
MERGE_PAPER_LOCK_VS_FENCE = 29.0
MERGE_PAPER_P = 8192
MERGE_PAPER_EFFICIENCY = 0.8


def _merge_cases(d):
    """(layout, n_per_pe) pairs of the merge records, most measured rank counts first."""
    cases = {(r["variant"], r["n_per_pe"]) for r in d.select(benchmark="merge")}
    return sorted(cases, key=lambda c: (-len(d.values("p", benchmark="merge", variant=c[0], n_per_pe=c[1])), c))


def _merge_field(d, field, **want):
    found = d.select(benchmark="merge", **want)
    return found[-1].get(field) if found else None


def merge_efficiency(d, impl, layout, n, p):
    """Weak-scaling parallel efficiency of `impl`'s total time at p: T(p0) / T(p), p0 the
    smallest p measured for the same layout and n/p (1 at p0 itself)."""
    ps = d.values("p", benchmark="merge", variant=layout, n_per_pe=n, implementation=impl)
    if not ps:
        return None
    base = _merge_field(d, "total_median_s", variant=layout, n_per_pe=n, implementation=impl, p=ps[0])
    here = _merge_field(d, "total_median_s", variant=layout, n_per_pe=n, implementation=impl, p=p)
    return ratio(base, here)


def merge_targets(d):
    """Targets-table rows for the stable merge (simulated runs)."""
    cases = _merge_cases(d)
    if not cases:
        return [("merge: fence / lock co-ranking time", "> 1x at every p, growing with p",
                 f"{MERGE_PAPER_LOCK_VS_FENCE:g}x at {MERGE_PAPER_P:,} procs (Blue Gene/P)", "no data", "not run"),
                ("merge: weak-scaling efficiency (total)", f">= {MERGE_PAPER_EFFICIENCY:.0%}",
                 f"about {MERGE_PAPER_EFFICIENCY:.0%} (Blue Gene/P)", "no data", "not run")]
    layout, n = cases[0]
    ps = [p for p in d.values("p", benchmark="merge", variant=layout, n_per_pe=n)
          if _merge_field(d, "corank_median_s", variant=layout, n_per_pe=n, implementation="lock_shared", p=p)
          and _merge_field(d, "corank_median_s", variant=layout, n_per_pe=n, implementation="fence_bound", p=p)]
    rows = []
    if ps:
        rs = [(p, ratio(_merge_field(d, "corank_median_s", variant=layout, n_per_pe=n, implementation="fence_bound", p=p),
                        _merge_field(d, "corank_median_s", variant=layout, n_per_pe=n, implementation="lock_shared", p=p)))
              for p in ps]
        text = ", ".join(f"{fmt_ratio(r)} (p={fmt_p(p)})" for p, r in rs) + f"; n/p = {n}, {layout}"
        rows.append(("merge: fence_bound / lock_shared co-ranking time", "> 1x at every p, growing with p",
                     f"{MERGE_PAPER_LOCK_VS_FENCE:g}x at {MERGE_PAPER_P:,} procs (Blue Gene/P)", text,
                     _status([all(r is not None and r > 1 for _, r in rs) and
                              all(b[1] >= a[1] for a, b in zip(rs, rs[1:]))])))
    else:
        rows.append(("merge: fence_bound / lock_shared co-ranking time", "> 1x at every p", "29x at 8,192", "no data",
                     "no data"))
    cells, flags = [], []
    for impl in MERGE_VARIANTS:
        ips = d.values("p", benchmark="merge", variant=layout, n_per_pe=n, implementation=impl)
        if len(ips) < 2:
            continue
        e = merge_efficiency(d, impl, layout, n, ips[-1])
        cells.append(f"{impl} {e:.0%} (p={fmt_p(ips[-1])})")
        flags.append(e >= MERGE_PAPER_EFFICIENCY)
    if cells:
        ips = d.values("p", benchmark="merge", variant=layout, n_per_pe=n)
        rows.append(("merge: weak-scaling efficiency T(p0)/T(p) of the total time", f">= {MERGE_PAPER_EFFICIENCY:.0%}",
                     f"about {MERGE_PAPER_EFFICIENCY:.0%} overall (Blue Gene/P, up to 8,192+ procs)",
                     "; ".join(cells) + f"; p0={fmt_p(ips[0])}, n/p = {n}", _status(flags)))
    return rows


def section_merge(d, plot, draw):
    out = []
    if not d.select(benchmark="merge"):
        return out
    out.append("## Stable merge: weak scaling (Siebert and Traeff)\n")
    out.append("Every PE holds a sorted block of A (n/p / 3 doubles) and of B (twice as many), globally sorted in "
               "rank order (bench/merge.cpp, docs/merge.md). Per variant: co-ranking time (the "
               "distributed binary search for each PE's output start) and total time of `merge::stable_merge`, "
               "each the maximum over PEs, median over repetitions. Variants: `fence_bound` (fence epochs, fixed "
               "iteration bound), `fence_allreduce` (fence + allreduce termination), `lock_shared` (passive-target "
               "shared locks), `rget_lock_all` (ours: one lock_all epoch, MPI_Rget pairs). Efficiency = "
               "T(p0) / T(p) of the total time, p0 the smallest p measured (on a platform with 16 ranks per node, p0 = 16 "
               "is one node: the efficiency then includes the step from shared memory to the network). Simulated runs do not charge host "
               "computation (the local merge shows as ~0): the times are communication and synchronisation. "
               f"Paper (Blue Gene/P): lock variant {MERGE_PAPER_LOCK_VS_FENCE:g}x faster than fence at "
               f"{MERGE_PAPER_P:,} processes, about {MERGE_PAPER_EFFICIENCY:.0%} parallel efficiency.\n")
    impls = [i for i in MERGE_VARIANTS if d.select(benchmark="merge", implementation=i)]
    impls += [i for i in d.values("implementation", benchmark="merge") if i not in impls]
    for layout, n in _merge_cases(d):
        ps = d.values("p", benchmark="merge", variant=layout, n_per_pe=n)
        want = dict(variant=layout, n_per_pe=n)
        if draw and len(ps) > 1:
            tag = f"{layout}_{n}".replace("=", "").replace(".", "_")
            lines = []
            for i in impls:
                for what, field in (("co-rank", "corank_median_s"), ("total", "total_median_s")):
                    pts = [(p, _merge_field(d, field, implementation=i, p=p, **want)) for p in ps]
                    lines.append((f"{i} {what}", [(p, v) for p, v in pts if v]))
            img = plot.plot(f"merge_weak_scaling_{tag}", f"stable merge, n/p = {n}, {layout}", "p", "time [s]", lines)
            if img:
                out.append(f"![merge weak scaling]({img})\n")
            img = plot.plot(f"merge_efficiency_{tag}", f"stable merge weak-scaling efficiency, n/p = {n}", "p",
                            "T(p0) / T(p)",
                            [(i, [(p, merge_efficiency(d, i, layout, n, p)) for p in ps
                                  if merge_efficiency(d, i, layout, n, p) is not None]) for i in impls],
                            logy=False, hline=MERGE_PAPER_EFFICIENCY)
            if img:
                out.append(f"![merge efficiency]({img})\n")
        rows = []
        for p in ps:
            row = [fmt_p(p), _merge_field(d, "iterations_max", p=p, **want)]
            for i in impls:
                c = _merge_field(d, "corank_median_s", implementation=i, p=p, **want)
                t = _merge_field(d, "total_median_s", implementation=i, p=p, **want)
                e = merge_efficiency(d, i, layout, n, p)
                row.append(f"{fmt_time(c)} / {fmt_time(t)}" + (f" ({e:.0%})" if e is not None else ""))
            fence = _merge_field(d, "corank_median_s", implementation="fence_bound", p=p, **want)
            lock = _merge_field(d, "corank_median_s", implementation="lock_shared", p=p, **want)
            row.append(fmt_ratio(ratio(fence, lock)))
            checked = all(r.get("checked", False) for r in d.select(benchmark="merge", p=p, **want))
            row.append("yes" if checked else "NO")
            rows.append(row)
        header = ["p", "iterations"] + [f"{i}: co-rank / total (eff.)" for i in impls] + [
            "fence_bound / lock_shared co-rank", "checked"]
        out.append(f"**n/p = {n}, {layout}**\n\n" + md_table(header, rows) + "\n")
    return out


def excluded(rec, exclude):
    """Whether `rec` matches one of the FIELD=VALUE pairs in `exclude` (values compared as text)."""
    return any(field in rec and str(rec[field]) == value for field, value in exclude)


def generate(paths, out_dir, failures=None, snapshot=None, exclude=()):
    recs = [r for r in records.load(paths) if not excluded(r, exclude)]
    for r in recs:
        if r["backend"] == "smpi" and calibration_of(r):
            r["calibration"] = calibration_of(r)
    os.makedirs(out_dir, exist_ok=True)
    plot = Plotter(out_dir)
    sim = Data([r for r in recs if r["backend"] == "smpi"])
    revs = sorted({r["rev"] for r in recs})
    modes = sorted({r.get("mode", "?") for r in recs})
    lines = [
        "# Janus benchmark report", "",
        f"Generated {datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')} by `bench/report` from "
        f"{', '.join(os.path.basename(p) for p in paths)} ({len(recs)} records; revision(s) {', '.join(revs)}; "
        f"mode(s) {', '.join(modes)})" + "".join(f"; left out: {f} = {v}" for f, v in exclude) + ".", "",
        "Every time is the maximum over PEs of one operation, the median over repetitions after warm-up "
        "(min and max are in the .jsonl). Simulated runs (SMPI) report simulated seconds; real-MPI runs "
        "(Open MPI, MPICH, a cluster's MPI) report wall seconds.", "",
        "Platforms:", *describe_platforms(recs), "",
    ]
    groups = sim_groups(recs)
    if sim.recs:
        lines += ["## Targets vs measured (simulated runs)", ""]
        for (platform, calibration), group in groups.items():
            data = Data(group)
            if not data.recs:
                continue
            ps = sorted({r["p"] for r in data.recs})
            if len(groups) > 1:
                lines += [f"### {sim_label(platform, calibration)}", ""]
            lines += [f"Largest simulated p in these records: {fmt_p(max(ps))}. Ratios are ratios of medians, taken "
                      "at the largest p where both sides were measured (given with each value). A target stated "
                      "for 2^15 ranks is only really checked by records at 2^15.", "",
                      md_table(["what", "target", "paper / thesis", "measured", "status"],
                               targets_table(data, None) + merge_targets(data)), ""]
        lines += ["## The paper's figures 7 and 8 beside the calibrated simulation", "",
                  "The paper's ratios were measured at 2^15 ranks on SuperMUC (Intel MPI) and JUQUEEN (IBM MPI); "
                  "the simulated ones come from records made with the calibration profile that models each "
                  "machine (docs/calibration.md), at the largest p simulated with it. Verdict: inside the "
                  "published range, within 2x of it, or outside.", "",
                  md_table(["figure", "machine (paper)", "paper", "profile", "simulated p", "simulated", "verdict"],
                           paper_figures(sim)), ""]
    # Simulated runs (a part per platform and profile where there are several), then each real
    # MPI on each machine. A real-MPI group measured at three or more rank counts, none
    # oversubscribed (a cluster run), gets the figures over p too, named after its platform and
    # library.
    if len(groups) > 1:
        parts = []
        for (platform, calibration), group in groups.items():
            label = sim_label(platform, calibration)
            parts.append((f"Simulated (SMPI): {label}", Data(group),
                          (f"SMPI, {label}", file_safe(f"sim_{platform}_{calibration}_")), True))
    else:
        parts = [("Simulated (SMPI)", sim, None, True)]
    for (platform, library), group in real_mpi_groups(recs).items():
        data = Data(group)
        title = f"{library} on {platform}"
        cores = {(r.get("platform_params") or {}).get("host_cores") for r in group}
        if len(cores) == 1 and isinstance(next(iter(cores)), int):
            title += f" ({next(iter(cores))} cores)"
        scaling = len({r["p"] for r in data.recs}) >= 3 and not any(
            (r.get("platform_params") or {}).get("oversubscribed") for r in data.recs)
        parts.append((title, data, (library, file_safe(f"{platform}_{library}_")), scaling))
    for title, data, named, draw in parts:
        if not data.recs:
            continue
        lines += [f"# {title}", ""]
        plot.prefix = named[1] if named else ""
        for section in (section_comm_create, section_overlap, section_p2p, section_collectives, section_split_bcast,
                        section_sort,
                        section_merge):
            part = section(data, plot, draw)
            if part and named:
                part[0] = part[0].replace("## ", f"## {named[0]}: ", 1)
            lines += part
    plot.prefix = ""
    if failures:
        lines += ["# Failed runs", "", *[f"- `{f['job']}`: {f['error']}" for f in failures], ""]
    if plot.gnuplot is None:
        lines += ["(gnuplot not found: no plots were drawn; `./janus setup` installs gnuplot-nox.)", ""]
    for err in plot.errors:
        lines.append(f"- plot error: {err}")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"bench: report {path} ({len(plot.made)} plots in {plot.dir})", file=sys.stderr)
    if snapshot:
        os.makedirs(os.path.join(snapshot, "plots"), exist_ok=True)
        shutil.copy(path, os.path.join(snapshot, "report.md"))
        for name in plot.made:
            for ext in ("png", "svg"):
                shutil.copy(os.path.join(plot.dir, f"{name}.{ext}"), os.path.join(snapshot, "plots"))
        print(f"bench: snapshot copied to {snapshot}", file=sys.stderr)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench/report", description="Plots and a markdown report from benchmark records.")
    parser.add_argument("records", nargs="+", help=".jsonl files written by bench/run")
    parser.add_argument("--out", default=None, help="output directory (default: that of the first file)")
    parser.add_argument("--snapshot", help="also copy report.md and the plots here (e.g. docs/results)")
    parser.add_argument("--exclude", action="append", default=[], metavar="FIELD=VALUE",
                        help="leave out records whose FIELD is VALUE (repeatable), e.g. the 'build' "
                             "a file measured before a change")
    args = parser.parse_args(argv)
    exclude = []
    for item in args.exclude:
        field, sep, value = item.partition("=")
        if not sep or not field:
            parser.error(f"--exclude wants FIELD=VALUE, not '{item}'")
        exclude.append((field, value))
    try:
        generate(args.records, args.out or os.path.dirname(os.path.abspath(args.records[0])), snapshot=args.snapshot,
                 exclude=exclude)
    except (OSError, ValueError) as err:
        print(f"bench/report: error: {err}", file=sys.stderr)
        return 2
    return 0
