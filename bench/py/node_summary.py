#!/usr/bin/env python3
"""The ratios of issue 16's targets 1, 3 and 4 from one bench/node_check output directory.

Each ratio is taken within one round (both sides from the same run), and the table gives the
median over rounds with the range of the rounds beside it: a machine that is busy for one round
moves one ratio, not the verdict.

  python3 bench/py/node_summary.py OUT_DIR
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from report import COLLECTIVE_LIMIT, COLLECTIVES, Data, pow2_floor  # noqa: E402

JQUICK_LIMIT = 1.0
P2P_LIMITS = {8: 1.10, 65536: 1.02}


def load(path):
    if not os.path.isfile(path):
        return []
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                records.append(json.loads(line))
    return records


def by_round(records):
    """The records as report.Data, a record without a round counting as round 0."""
    return Data([dict(r, round=r.get("round", 0)) for r in records])


def cell(values, limit):
    m = statistics.median(values)
    spread = f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else ""
    return f"{m:.2f}{spread}", m <= limit


def jquick_table(records):
    """JQuick on p against hypercube quicksort on the largest power of two q <= p, same round;
    where p is not a power of two also against JQuick on q and hypercube quicksort on p itself
    (which folds p - q PEs' data in first), for what the target's pairing leaves out."""
    d = by_round([r for r in records if r.get("variant", "uniform") == "uniform"])
    points = {}
    for p in d.values("p", implementation="jquick_rbc"):
        q = pow2_floor(p)
        for n in d.values("n_per_pe", implementation="jquick_rbc", p=p):
            jquick = dict(implementation="jquick_rbc", p=p, n_per_pe=n)
            rs = d.round_ratios(jquick, dict(implementation="hypercube_rbc", p=q, n_per_pe=n))
            if rs:
                others = [d.round_ratios(jquick, dict(jquick, p=q)),
                          d.round_ratios(jquick, dict(implementation="hypercube_rbc", p=p, n_per_pe=n))] if q != p else []
                points[(p, n)] = (rs, others)
    over = {r["p"] for r in records if (r.get("platform_params") or {}).get("oversubscribed")}
    lines, met = [], 0
    for (p, n) in sorted(points):
        rs, others = points[(p, n)]
        text, ok = cell(rs, JQUICK_LIMIT)
        met += ok
        label = f"{p} (oversubscribed)" if p in over else str(p)
        extra = " | ".join(cell(o, JQUICK_LIMIT)[0] if o else "" for o in others) if others else " | "
        lines.append(f"| {label} | {pow2_floor(p)} | {n} | {text} | {'met' if ok else 'not met'} | {extra} |")
    head = [f"Target 1, JQuick / hypercube quicksort (on the largest power of two q <= p), <= {JQUICK_LIMIT}: "
            f"met at {met} of {len(points)} points; where p is not a power of two, also JQuick on p against JQuick "
            "on q and against hypercube quicksort on p itself (folding p - q PEs in)", "",
            "| p | hypercube p | n/p | ratio (rounds) | verdict | vs JQuick on q | vs hypercube on p |",
            "| ---: | ---: | ---: | --- | --- | --- | --- |"]
    return head + lines if points else ["Target 1: no sort records"]


def rbc_over_mpi(d, **at):
    return d.round_ratios(dict(implementation="rbc", **at), dict(implementation="mpi", **at))


def collectives_table(records, where=""):
    d = by_round(records)
    ratios = {}
    for op in d.values("variant"):
        for p in d.values("p", variant=op):
            for n in d.values("n", variant=op, p=p):
                rs = rbc_over_mpi(d, variant=op, p=p, n=n)
                if rs:
                    ratios[(op, p, n)] = rs
    if not ratios:
        return [f"Target 3{where}: no collectives records"]
    sizes = sorted({n for (_op, _p, n) in ratios})
    lines, met = [], 0
    for op in COLLECTIVES:
        for p in sorted({p for (o, p, _n) in ratios if o == op}, reverse=True):
            cells = []
            for n in sizes:
                if (op, p, n) not in ratios:
                    cells.append("")
                    continue
                text, ok = cell(ratios[(op, p, n)], COLLECTIVE_LIMIT)
                met += ok
                cells.append(text + ("" if ok else " *"))
            lines.append(f"| {op} | {p} | " + " | ".join(cells) + " |")
    head = [f"Target 3, RBC{where} / MPI collectives, <= {COLLECTIVE_LIMIT} (* not met): met at {met} of "
            f"{sum(len(v) > 0 for v in ratios.values())} points; columns: doubles (gather: at the root)", "",
            "| collective | p | " + " | ".join(str(n) for n in sizes) + " |",
            "| --- | ---: | " + " | ".join("---" for _ in sizes) + " |"]
    return head + lines


def p2p_table(records):
    """RBC over MPI per variant and size; where the records hold MPI at RBC's wire size
    (implementation mpi_wire, bench/p2p.cpp), the ratio of a message with an envelope split into
    the envelope's bytes (mpi_wire / mpi) and RBC's own work (enveloped / mpi_wire). Records with
    implementation rbc_enveloped (RBC on a split, whose messages carry envelopes; rbc is then the
    from_mpi handle, whose messages travel bare) add its ratio to MPI; in older records rbc
    itself carried envelopes."""
    lines = []
    d = by_round(records)
    split = bool(d.select(implementation="mpi_wire"))
    enveloped = "rbc_enveloped" if d.select(implementation="rbc_enveloped") else "rbc"
    for variant in ("pingpong", "ipingpong"):
        for n in d.values("n", variant=variant):
            rs = rbc_over_mpi(d, variant=variant, n=n)
            if not rs:
                continue
            limit = P2P_LIMITS.get(n) if variant == "pingpong" else None
            text, ok = cell(rs, limit if limit else float("inf"))
            verdict = ("met" if ok else "not met") + f" (<= {limit})" if limit else ""
            row = f"| {variant} | {n} | {text} | {verdict} |"
            if split:
                parts = []
                pairs = (("mpi_wire", "mpi"), (enveloped, "mpi_wire"))
                if enveloped != "rbc":
                    pairs = ((enveloped, "mpi"),) + pairs
                for num, den in pairs:
                    ps = d.round_ratios(dict(implementation=num, variant=variant, n=n),
                                        dict(implementation=den, variant=variant, n=n))
                    parts.append(cell(ps, float("inf"))[0] if ps else "")
                row += "".join(f" {part} |" for part in parts)
            lines.append(row)
    if not lines:
        return ["Target 4: no p2p records"]
    head = "| variant | bytes | ratio (rounds) | verdict |"
    rule = "| --- | ---: | --- | --- |"
    if split and enveloped != "rbc":
        head += " RBC on a split (envelopes) / MPI |"
        rule += " --- |"
    if split:
        head += " envelope's bytes: MPI at RBC's wire size / MPI | RBC's own work: RBC / MPI at its wire size |"
        rule += " --- | --- |"
    title = "Target 4, RBC / MPI half round trip, np = 2"
    if enveloped != "rbc":
        title += " (RBC on the from_mpi handle, whose messages travel bare)"
    return [title, "", head, rule] + lines


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    out = argv[1]
    parts = [jquick_table(load(os.path.join(out, "sort.jsonl"))),
             collectives_table(load(os.path.join(out, "collectives.jsonl"))),
             collectives_table(load(os.path.join(out, "collectives-split.jsonl")), " on a split"),
             p2p_table(load(os.path.join(out, "p2p.jsonl")))]
    steps = os.path.join(out, "steps.txt")
    if os.path.isfile(steps):
        with open(steps) as f:
            parts.append(["Steps:"] + [line.rstrip() for line in f])
    print("\n\n".join("\n".join(p) for p in parts))


if __name__ == "__main__":
    main(sys.argv)
