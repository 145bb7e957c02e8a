#!/bin/sh
# Issue 17's real-MPI measurement: JQuick vs hypercube quicksort vs the lower bound (local sort
# of n/p elements + one exchange of n/p elements with the partner) on MPI, np=2, uniform
# doubles. Runs bench/sort R times (each with REPS repetitions after a warm-up), appending the
# JSON records to OUT; summarise with bench/py/np2_summary.py OUT.
#   [NPS=4096,65536,262144] [REPS=21] bench/np2_lower_bound.sh SORT_MPI_BINARY OUT [R]
set -eu
binary=$1
out=$2
rounds=${3:-5}
i=0
while [ "$i" -lt "$rounds" ]; do
  mpirun --allow-run-as-root --bind-to none -np 2 "$binary" --nps="${NPS:-4096,65536,262144}" \
    --impls=jquick_rbc,hypercube_rbc,lower_bound --reps="${REPS:-21}" 2>/dev/null |
    sed -n 's/^JANUS_BENCH //p' >>"$out"
  i=$((i + 1))
done
