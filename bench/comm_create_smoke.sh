#!/usr/bin/env bash
# Runs the communicator-creation benchmark (//bench:comm_create) once on 3 ranks with ticket
# #286's creation beside MPI's and RBC's, and checks its records: one per mode and
# implementation, times present and ordered; under SMPI the groupcomm_286 records say
# "skipped": "SMPI has no intercommunicators" and carry no times, under Open MPI they are measured.
#   comm_create_smoke.sh RUN_RANKS BACKEND PLATFORM PROGRAM
set -euo pipefail
run_ranks="$1" backend="$2" platform="$3" program="$4"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$run_ranks" --backend "$backend" --np 3 --timeout 120 --platform "$platform" "$program" \
  --warmup=0 --reps=2 --impls=groupcomm_286,mpi_create_group,rbc_icreate_list >"$out"; then
  cat "$out"
  echo "comm_create_smoke FAIL: the run failed (output above)"
  exit 1
fi
python3 - "$backend" "$out" <<'PY'
import json, sys
backend, path = sys.argv[1], sys.argv[2]
records = [json.loads(line[len("JANUS_BENCH "):]) for line in open(path)
           if line.startswith("JANUS_BENCH ")]
problems = []
expected = {(m, i) for m in ("halves", "recursive")
            for i in ("groupcomm_286", "mpi_create_group", "rbc_icreate_list")}
seen = {(r.get("variant"), r.get("implementation")) for r in records}
if len(records) != len(expected) or seen != expected:
    problems.append(f"records for {sorted(seen)}, expected {sorted(expected)}")
for r in records:
    where = f"{r.get('variant')}/{r.get('implementation')}"
    if r.get("benchmark") != "comm_create" or r.get("backend") != backend or r.get("p") != 3:
        problems.append(f"{where}: benchmark/backend/p = {r.get('benchmark')}/{r.get('backend')}/{r.get('p')}")
    if backend == "smpi" and r.get("implementation") == "groupcomm_286":
        if r.get("skipped") != "SMPI has no intercommunicators" or "median_s" in r:
            problems.append(f"{where}: expected a skipped record without times, got {r}")
        continue
    if "skipped" in r:
        problems.append(f"{where}: unexpectedly skipped")
        continue
    if r.get("repetitions") != 2:
        problems.append(f"{where}: repetitions {r.get('repetitions')}, expected 2")
    try:
        if not (0 <= r["min_s"] <= r["median_s"] <= r["max_s"]):
            problems.append(f"{where}: times out of order: {r['min_s']} {r['median_s']} {r['max_s']}")
    except (KeyError, TypeError):
        problems.append(f"{where}: missing times in {r}")
for p in problems:
    print("comm_create_smoke FAIL:", p)
print(f"comm_create_smoke: {len(records)} records, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
