#!/usr/bin/env bash
# Smoke test of the node flow (docs/calibration.md, "A node without Bazel") at np = 2 on this
# machine: ./janus bundle, bench/node_check with a `bazel` on PATH that fails when called (the
# node has none), then the halves finished here: ./janus calibrate --refit and ./janus validate
# --sim-only. Checks that every step ran and wrote well-formed records; never judges time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work="$(mktemp -d "${TMPDIR:-/tmp}/janus-node-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fail() { echo "node_check_smoke: FAIL: $*" >&2; exit 1; }

./janus bundle "$work/bundle"
mkdir "$work/shim"
printf '#!/bin/sh\necho "bazel called on the node side: $*" >&2\nexit 99\n' >"$work/shim/bazel"
chmod +x "$work/shim/bazel"
PATH="$work/shim:$PATH" bench/node_check --programs "$work/bundle" --out "$work/node" --np 2 --rounds 1 \
  --budget 600 --quick

node="$work/node"
grep -q . "$node/steps.txt" || fail "no steps recorded"
if grep -v ': exit 0, ' "$node/steps.txt"; then fail "a step failed or was skipped (above)"; fi
for f in sort collectives collectives-split p2p; do
  [[ -s $node/$f.jsonl ]] || fail "$f.jsonl is empty"
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$node/$f.jsonl" || fail "$f.jsonl malformed"
done
grep -q '^Target 1, ' "$node/summary.txt" || fail "summary without target 1"
grep -q '^Target 3, ' "$node/summary.txt" || fail "summary without target 3"
grep -q '^Target 3, RBC on a split ' "$node/summary.txt" || fail "summary without target 3 on a split"
python3 - "$node/collectives-split.jsonl" <<'PY' || fail "collectives-split.jsonl: not RBC on a split"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert records and all(r["communicator"] == "split" for r in records), records[:1]
PY
grep -q '^Target 4, ' "$node/summary.txt" || fail "summary without target 4"
grep -q '^host: ' "$node/machine.txt" || fail "machine.txt without the host"

# --steps: only the named steps run (a rerun of what an earlier run lost); an unknown one is refused.
bench/node_check --programs "$work/bundle" --out "$work/steps" --np 2 --rounds 1 --steps sort --quick >/dev/null
[[ -s $work/steps/sort.jsonl ]] || fail "--steps sort: no sort records"
for f in collectives.jsonl p2p.jsonl calibration-measured.json; do
  [[ ! -e $work/steps/$f ]] || fail "--steps sort also wrote $f"
done
if bench/node_check --programs "$work/bundle" --out "$work/steps" --steps sorts 2>/dev/null; then
  fail "--steps sorts (no such step) was accepted"
fi
# A rerun with the same bundle appends; records of another build in --out are refused, not
# summarised with the new ones.
bench/node_check --programs "$work/bundle" --out "$work/steps" --np 2 --rounds 1 --steps sort --quick >/dev/null
python3 - "$work/steps/sort.jsonl" "$work/mixed.jsonl" <<'PY' || fail "rerun of --steps sort"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
assert len({r["rev"] for r in records}) == 1 and len(records) % 2 == 0, len(records)
records[0]["rev"] = "0123456789ab"
open(sys.argv[2], "w").write(json.dumps(records[0]) + "\n")
PY
mkdir "$work/mixed" && mv "$work/mixed.jsonl" "$work/mixed/sort.jsonl"
if bench/node_check --programs "$work/bundle" --out "$work/mixed" --np 2 --rounds 1 --steps sort --quick \
  >/dev/null 2>"$work/mixed.err"; then
  fail "records of another build in --out were accepted"
fi
grep -q 'rev 0123456789ab' "$work/mixed.err" || fail "the refusal does not name the other rev: $(cat "$work/mixed.err")"
[[ $(wc -l <"$work/mixed/sort.jsonl") -eq 1 ]] || fail "the refused run wrote records"

./janus calibrate --refit "$node/calibration-measured.json" -o "$work/profile.json"
python3 - "$work/profile.json" <<'PY' || fail "refitted profile"
import json, sys
profile = json.load(open(sys.argv[1]))
assert "measured only" not in profile["how"], profile["how"]
assert "refitted from these samples" in profile["how"], profile["how"]
assert profile["machine"]["np"] == 2
PY
./janus validate --sim-only "$node/validate-reference-16c-np2.jsonl" --np 2 --quick --calibration "$work/profile.json" \
  --out "$work/validated"
python3 - "$work/validated" <<'PY' || fail "validation records"
import glob, json, sys
rows = [json.loads(l) for path in glob.glob(sys.argv[1] + "/validate-*.jsonl") for l in open(path)]
both = [r for r in rows if r["real_s"] and r["simulated_s"]]
assert len(both) >= 10, f"only {len(both)} points with a real and a simulated time"
assert all("from " in r["real"] and "Open MPI" in r["real"] for r in rows), rows[0]["real"]
PY
# A machine that refuses to pin ranks (an mpirun that fails on --bind-to core): the targets still
# run, unbound, and the records say so.
printf '#!/bin/sh\nfor a in "$@"; do [ "$a" = core ] && { echo "binding refused" >&2; exit 1; }; done\nexec %s "$@"\n' \
  "$(command -v mpirun)" >"$work/shim/mpirun"
chmod +x "$work/shim/mpirun"
PATH="$work/shim:$PATH" bench/node_check --programs "$work/bundle" --out "$work/unbound" --np 2 --rounds 1 \
  --targets-only --budget 600 >/dev/null
if grep -v ': exit 0, ' "$work/unbound/steps.txt"; then fail "a step failed without binding (above)"; fi
grep -q 'binding refused' "$work/unbound/bind-check.txt" || fail "bind-check.txt without mpirun's refusal"
python3 - "$work/unbound/sort.jsonl" <<'PY' || fail "unbound records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["platform_params"]["bound"] is False for r in recs)
assert all("--bind-to none" in r["platform_params"]["launcher"] for r in recs)
PY
echo "node_check_smoke: ok"
