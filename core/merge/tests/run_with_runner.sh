#!/usr/bin/env bash
# Runs an SMPI test program through sim/runner, which names explicit collective algorithms:
# with SMPI's default selection (what sim/run_ranks.sh uses) the allgather inside every
# MPI_Win_create takes about two minutes of wall time at 256 ranks. --rendezvous: SMPI's
# per-message cost of eager (detached) sends grows with p (docs/scale.md); the test never relies
# on send buffering.
#   run_with_runner.sh NP TIMEOUT PROGRAM_SO [PROGRAM_ARGS...]
set -euo pipefail
np="$1" limit="$2" program="$3"
shift 3
runner="${TEST_SRCDIR}/${TEST_WORKSPACE}/sim/runner"
exec "$runner" "$program" --platform cluster --np "$np" --deterministic --rendezvous --timeout "$limit" \
  --heartbeat 0 -- "$@"
