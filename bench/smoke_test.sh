#!/usr/bin/env bash
# Smoke test of the benchmark pipeline: every benchmark program runs once at tiny p on both
# backends through bench/run --smoke, and the records must be well-formed and complete. Times are
# never judged.
#   smoke_test.sh DRIVER PROGRAM...   (PROGRAM: the built benchmark binaries, all in one directory)
set -euo pipefail

driver="$1"; shift
programs_dir="$(dirname "$1")"
out="${TEST_TMPDIR:-$(mktemp -d)}/bench-out"

"$driver" --smoke --programs "$programs_dir" --out "$out" --rev smoke --heartbeat 0

python3 - "$out/bench-smoke.jsonl" "$out/report.md" <<'PY'
import json, sys
path, report = sys.argv[1], sys.argv[2]
recs = [json.loads(line) for line in open(path) if line.strip()]
want = {(b, k) for b in ("comm_create", "overlap", "collectives", "split_bcast", "sort") for k in ("smpi", "mpi")}
have = {(r["benchmark"], r["backend"]) for r in recs}
missing = sorted(want - have)
assert not missing, f"no records for {missing}"
for r in recs:
    for key in ("benchmark", "backend", "platform", "platform_params", "implementation", "p", "variant",
                "repetitions", "median_s", "min_s", "max_s", "rev"):
        assert key in r, f"record lacks {key}: {r}"
    assert r["rev"] == "smoke", r
    assert r["min_s"] <= r["median_s"] <= r["max_s"], r
    if r["backend"] == "smpi":
        assert r["platform_params"], f"simulated record without platform parameters: {r}"
    if r["benchmark"] == "sort":
        assert r["verified"] is True, f"sort output check failed: {r}"
        assert r["phases"], r
    if r["benchmark"] == "collectives" and r["implementation"] == "mpi":
        assert r["algorithm"] and r["algorithm"] != "library default", f"MPI algorithm not recorded: {r}"
impls = {(r["benchmark"], r["implementation"]) for r in recs}
for need in [("comm_create", "rbc"), ("comm_create", "mpi_create_group"), ("comm_create", "mpi_split"),
             ("overlap", "mpi_create_group_cascaded"), ("overlap", "mpi_create_group_alternating"),
             ("collectives", "rbc"), ("collectives", "mpi"), ("split_bcast", "rbc"),
             ("sort", "jquick_rbc"), ("sort", "jquick_mpi_create_group"), ("sort", "hypercube_rbc")]:
    assert need in impls, f"no records for {need}"
text = open(report).read()
assert "Targets vs measured" in text, "report lacks the targets table"
print(f"smoke: {len(recs)} well-formed records from {len(have)} program/backend pairs; report written")
PY
