#!/usr/bin/env bash
# Runs sim/run_ranks.sh with the given arguments and passes only if the output LACKS the given
# text, whatever the exit code (the run may succeed silently, hang or deadlock): shows that a
# build without a check does not catch what the check catches.
#   expect_undetected.sh TEXT RUN_RANKS_SH [RUN_RANKS_ARGS...]
set -uo pipefail
text="$1"; runner="$2"; shift 2
output=$("$runner" "$@" 2>&1)
status=$?
echo "$output"
if [[ "$output" == *"$text"* ]]; then
  echo "expect_undetected.sh: the output contains \"$text\" (exit code $status)" >&2
  exit 1
fi
echo "expect_undetected.sh: not detected, as expected without the check (exit code $status)"
