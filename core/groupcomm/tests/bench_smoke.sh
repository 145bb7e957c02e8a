#!/usr/bin/env bash
# Runs the comm_create_286 benchmark once on 3 ranks and checks its records: one per case and
# implementation; times present and ordered (min <= median <= max); under SMPI the
# groupcomm_286 records say "skipped" and carry no times (under Open MPI they are measured) and
# the rbc records carry host_op_s.
#   bench_smoke.sh RUN_RANKS BACKEND PLATFORM PROGRAM
set -euo pipefail
run_ranks="$1" backend="$2" platform="$3" program="$4"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$run_ranks" --backend "$backend" --np 3 --timeout 120 --platform "$platform" "$program" \
  --warmup=0 --reps=2 >"$out"
python3 - "$backend" "$out" <<'PY'
import json, sys
backend, path = sys.argv[1], sys.argv[2]
records = [json.loads(line[len("JANUS_BENCH "):]) for line in open(path)
           if line.startswith("JANUS_BENCH ")]
problems = []
expected = {(c, i) for c in ("halves", "recursive")
            for i in ("groupcomm_286", "mpi_create_group", "mpi_split", "rbc")}
seen = {(r.get("case"), r.get("implementation")) for r in records}
if len(records) != len(expected) or seen != expected:
    problems.append(f"records for {sorted(seen)}, expected {sorted(expected)}")
for r in records:
    where = f"{r.get('case')}/{r.get('implementation')}"
    if r.get("benchmark") != "comm_create_286" or r.get("backend") != backend or r.get("p") != 3:
        problems.append(f"{where}: benchmark/backend/p = {r.get('benchmark')}/{r.get('backend')}/{r.get('p')}")
    if r.get("variant") != r.get("case"):
        problems.append(f"{where}: variant {r.get('variant')} differs from case")
    skip = backend == "smpi" and r.get("implementation") == "groupcomm_286"
    if skip:
        if r.get("skipped") != "no intercommunicators in SMPI" or "median_s" in r:
            problems.append(f"{where}: expected a skipped record without times, got {r}")
        continue
    if "skipped" in r:
        problems.append(f"{where}: unexpectedly skipped")
        continue
    host = r.get("host_op_s")
    if backend == "smpi" and r.get("implementation") == "rbc":
        if not isinstance(host, (int, float)) or host < 0:
            problems.append(f"{where}: host_op_s {host!r}, expected a non-negative number")
    elif host is not None:
        problems.append(f"{where}: unexpected host_op_s {host!r}")
    if r.get("repetitions") != 2:
        problems.append(f"{where}: repetitions {r.get('repetitions')}, expected 2")
    try:
        if not (0 <= r["min_s"] <= r["median_s"] <= r["max_s"]):
            problems.append(f"{where}: times out of order: {r['min_s']} {r['median_s']} {r['max_s']}")
    except (KeyError, TypeError):
        problems.append(f"{where}: missing times in {r}")
for p in problems:
    print("bench_smoke FAIL:", p)
print(f"bench_smoke: {len(records)} records, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
