"""Summarise bench/np2_lower_bound.sh records: per n/p and implementation, the median over runs
of the per-run median time and the minimum over all repetitions, and the ratios to the lower
bound and to hypercube quicksort. Usage: python3 bench/py/np2_summary.py RECORDS.jsonl"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    runs = defaultdict(list)
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if not r.get("verified", False):
            raise SystemExit(f"unverified record: {line}")
        runs[(r["n_per_pe"], r["implementation"])].append(r)
    print("| n/p | implementation | runs | median of medians (ms) | min (ms) | median / lower bound | min / lower bound min |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in sorted({k[0] for k in runs}):
        lb = runs.get((n, "lower_bound"), [])
        lb_med = statistics.median(r["median_s"] for r in lb) if lb else None
        lb_min = min(r["min_s"] for r in lb) if lb else None
        for impl in ("jquick_rbc", "hypercube_rbc", "lower_bound"):
            rs = runs.get((n, impl))
            if not rs:
                continue
            med = statistics.median(r["median_s"] for r in rs)
            mn = min(r["min_s"] for r in rs)
            print(f"| {n} | {impl} | {len(rs)} | {med * 1e3:.3f} | {mn * 1e3:.3f} | "
                  f"{med / lb_med:.2f} | {mn / lb_min:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
