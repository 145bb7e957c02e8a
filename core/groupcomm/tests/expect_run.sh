#!/usr/bin/env bash
# Runs sim/run_ranks.sh and checks the outcome: "pass" needs exit code 0, "fail" a nonzero exit
# code; either way the output must contain the expected text.
#   expect_run.sh pass|fail EXPECTED_TEXT RUN_RANKS_SH [RUN_RANKS_ARGS...]
set -uo pipefail
want="$1" expected="$2" runner="$3"
shift 3
output=$("$runner" "$@" 2>&1)
status=$?
echo "$output"
if [[ $want == pass && $status -ne 0 ]]; then
  echo "expect_run.sh: expected success, got exit code $status" >&2
  exit 1
fi
if [[ $want == fail && $status -eq 0 ]]; then
  echo "expect_run.sh: expected a failing run, got exit code 0" >&2
  exit 1
fi
if [[ "$output" != *"$expected"* ]]; then
  echo "expect_run.sh: exit code $status as expected, but the output lacks \"$expected\"" >&2
  exit 1
fi
echo "expect_run.sh: as expected (exit code $status)"
