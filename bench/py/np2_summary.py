"""Summarise bench/np2_lower_bound.sh records. Per n/p and implementation: the median over runs
of the per-run median time, the minimum over all repetitions, and the ratios JQuick / lower bound
and JQuick / hypercube quicksort taken within each run (the same run measured all three, one
after the other), median over runs. Usage: python3 bench/py/np2_summary.py RECORDS.jsonl"""
import json
import statistics
import sys
from collections import defaultdict

IMPLS = ("jquick_rbc", "hypercube_rbc", "lower_bound")


def runs_of(path):
    """[{(n/p, implementation): record}] per bench run: a run writes each pair once, in order."""
    runs, current = [], {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if not r.get("verified", False):
            raise SystemExit(f"unverified record: {line}")
        key = (r["n_per_pe"], r["implementation"])
        if key in current:
            runs.append(current)
            current = {}
        current[key] = r
    if current:
        runs.append(current)
    return runs


def main(path):
    runs = runs_of(path)
    times = defaultdict(list)
    for run in runs:
        for key, r in run.items():
            times[key].append(r)
    print("| n/p | implementation | runs | median of medians (ms) | min (ms) | "
          "JQuick / lower bound (per run, median) | JQuick / hypercube (per run, median) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in sorted({k[0] for k in times}):
        per_run_lb = [run[(n, "jquick_rbc")]["median_s"] / run[(n, "lower_bound")]["median_s"]
                      for run in runs if (n, "jquick_rbc") in run and (n, "lower_bound") in run]
        per_run_h = [run[(n, "jquick_rbc")]["median_s"] / run[(n, "hypercube_rbc")]["median_s"]
                     for run in runs if (n, "jquick_rbc") in run and (n, "hypercube_rbc") in run]
        for impl in IMPLS:
            rs = times.get((n, impl))
            if not rs:
                continue
            med = statistics.median(r["median_s"] for r in rs)
            mn = min(r["min_s"] for r in rs)
            lb = f"{statistics.median(per_run_lb):.2f}" if impl == "jquick_rbc" and per_run_lb else ""
            h = f"{statistics.median(per_run_h):.2f}" if impl == "jquick_rbc" and per_run_h else ""
            print(f"| {n} | {impl} | {len(rs)} | {med * 1e3:.3f} | {mn * 1e3:.3f} | {lb} | {h} |")


if __name__ == "__main__":
    main(sys.argv[1])
