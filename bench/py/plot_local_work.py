"""Plots for issue 17 (local work), with gnuplot (gnuplot-nox):
  localsort speedups: bench/localsort JSON lines -> speedup over std::sort against n
  JQuick phases:      bench/sort JSON records (JANUS_BENCH payloads) -> stacked phase bars per n/p
Usage: python3 bench/py/plot_local_work.py kernel KERNEL.jsonl OUT.png
       python3 bench/py/plot_local_work.py phases SORT.jsonl OUT.png TITLE"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def kernel(path, out):
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    series = defaultdict(dict)
    for r in rows:
        series[(r["type"], r["shape"])][r["n"]] = r["speedup"]
    tmp = tempfile.mkdtemp()
    plots = []
    for (typ, shape), points in sorted(series.items()):
        name = os.path.join(tmp, f"{typ}_{shape}.dat")
        with open(name, "w") as f:
            for n in sorted(points):
                f.write(f"{n} {points[n]}\n")
        style = {"uniform": 1, "sorted": 2, "reverse": 3, "equal": 4, "few": 5}[shape]
        color = {"double": "#1f77b4", "int64": "#d62728", "pair": "#2ca02c"}[typ]
        plots.append(f"'{name}' using 1:2 with linespoints dt {style} lc rgb '{color}' "
                     f"title '{typ} {shape}'")
    gnuplot(f"""set terminal pngcairo size 1000,600
set output '{out}'
set logscale x 2
set logscale y 2
set format x '2^{{%L}}'
set xlabel 'elements'
set ylabel 'speedup over std::sort (time ratio, same run)'
set key outside right
set grid
set title 'localsort::sort vs std::sort (2-core dev machine, shared, min over repetitions)'
plot {', '.join(plots)}, 1 with lines lc rgb 'black' title 'equal', 3 with lines lc rgb 'gray' title '3x target'
""")


PHASES = ["local_sort", "pivot_selection", "partition", "exchange_calculation", "exchange",
          "communicator_creation", "base_cases"]


def phases(path, out, title):
    records = defaultdict(list)
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r["implementation"] == "jquick_rbc":
            records[r["n_per_pe"]].append(r)
    tmp = tempfile.mkdtemp()
    name = os.path.join(tmp, "phases.dat")
    with open(name, "w") as f:
        f.write("np " + " ".join(PHASES) + "\n")
        for n in sorted(records):
            rs = records[n]
            values = []
            for phase in PHASES:
                values.append(statistics.median(r["phases"].get(phase, 0.0) for r in rs))
            total = sum(values)
            f.write(f"{n} " + " ".join(f"{100 * v / total if total else 0:.3f}" for v in values) + "\n")
    cols = ", ".join(
        (f"'{name}' using 2:xtic(1)" if i == 0 else f"'' using {i + 2}") + f" title '{p}'"
        for i, p in enumerate(PHASES))
    gnuplot(f"""set terminal pngcairo size 900,500
set output '{out}'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel 'share of the summed phase times (%)'
set xlabel 'n/p (doubles per PE)'
set key outside right
set title '{title}'
set datafile separator ' '
set key autotitle columnhead
plot {cols}
""")


if __name__ == "__main__":
    if sys.argv[1] == "kernel":
        kernel(sys.argv[2], sys.argv[3])
    else:
        phases(sys.argv[2], sys.argv[3], sys.argv[4])
