#!/usr/bin/env bash
# Runs sim/run_ranks.sh with the given arguments and passes only if the run FAILS (nonzero exit)
# and its output contains the expected text: the harness must not let a broken run pass.
#   expect_failure.sh EXPECTED_TEXT RUN_RANKS_SH [RUN_RANKS_ARGS...]
set -uo pipefail
expected="$1"; runner="$2"; shift 2
output=$("$runner" "$@" 2>&1)
status=$?
echo "$output"
if [[ $status -eq 0 ]]; then
  echo "expect_failure.sh: the broken run exited with 0" >&2
  exit 1
fi
if [[ "$output" != *"$expected"* ]]; then
  echo "expect_failure.sh: exit code $status, but the output lacks \"$expected\"" >&2
  exit 1
fi
echo "expect_failure.sh: failed as expected (exit code $status)"
