#!/bin/sh
# bench/instructions on one short case: callgrind runs, the records are well-formed, and RBC's
# send + receive does work of its own outside MPI (its argument checks, even for the bare messages
# of the from_mpi handle: about 10x the loop's) where the library's loop does almost none.
set -eu
script=$1
program=$2
out=$(python3 "$script" --program "$program" --cases send_recv --iterations 20)
echo "$out"
echo "$out" | python3 -c '
import json, sys
records = [json.loads(l.split("JANUS_BENCH ", 1)[1]) for l in sys.stdin if l.startswith("JANUS_BENCH ")]
assert len(records) == 2, records
by = {r["implementation"]: r for r in records}
assert set(by) == {"rbc", "mpi"}, by
for r in records:
    assert r["benchmark"] == "instructions" and r["variant"] == "send_recv" and r["instructions_in_mpi"] > 0, r
assert by["rbc"]["instructions_outside_mpi"] > 4 * max(by["mpi"]["instructions_outside_mpi"], 1), by
print("instructions smoke test: ok")
'
