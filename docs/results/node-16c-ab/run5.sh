#!/bin/bash
# Device run 5 (prepared, not yet run: no device was lent after run 4): the sorts and the
# validation's real runs of node_check again (run 4's did not come back: a run returns at most
# 8 files, so everything here comes back in one archive), then a broadcast radix A/B below
# 8 KiB on 4, 8, 12 and 16 ranks, alternated in rounds: the bundle's rule (cur: 4-nomial below
# 4 KiB on 8-16 ranks), the binomial tree everywhere (binomial), and a 4-nomial (k4wide) and an
# 8-nomial tree (k8wide) below 8 KiB on every p >= 3; then the allgather's own copy after its
# first round (cur) against during it (agoverlap) on 16, 8 and 2 ranks. Between the two, JQuick
# allgathering a whole input on one node of up to twice gather_elements, four times on 4 or 8
# PEs (cur, c479963), against only up to gather_elements (whole1) and up to twice that on every
# p (whole2, 20b1d5e), where that differs, on 4, 8, 12 and 16 ranks. build5.sh
# builds the programs; the carry is results/bundle and results/ab; timeout_s about 480.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
O=${1:-/tmp/out}; W=/tmp/run5; mkdir -p "$O" "$W"
B=results/bundle
start=$SECONDS
timeout 200 bench/node_check --programs "$B" --out "$W/node" --np 16 --rounds 3 --budget 150 --steps sort,validate >"$W/node-log.txt" 2>&1
echo "node_check (sorts, validation) exit $? at $((SECONDS - start)) s"
L="mpirun --bind-to core --map-by core --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
for r in 1 2 3; do
  for p in 16 8 12 4; do
    for v in cur binomial k4wide k8wide; do
      (( SECONDS - start > 250 )) && break 3
      prog="$B/collectives_mpi"; [[ $v != cur ]] && prog=results/ab/$v/collectives_mpi
      for c in first split; do
        [[ $c == split && $p != 16 ]] && continue
        timeout 30 $L -np $p "$prog" --ops=bcast --sizes=1,16,128,512,1023 --impls=rbc,mpi --communicator=$c \
          --warmup=2 --reps=11 2>/dev/null | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$W/bcast-radix-ab.jsonl"
      done
    done
  done
  echo "radix round $r at $((SECONDS - start)) s"
done
# JQuick: inputs of 4096 < n <= 16384 on one node allgathered whole (cur) or not (whole1, and
# whole2 from 8192 on).
for r in 1 2 3; do
  for p in 4 8 16 12; do
    for v in cur whole1 whole2; do
      (( SECONDS - start > 340 )) && break 3
      prog="$B/sort_mpi"; [[ $v != cur ]] && prog=results/ab/$v/sort_mpi
      timeout 30 $L -np $p "$prog" --nps=$((8192 / p)),$((4096 / p)),$((2 * 8192 / p)) --impls=jquick_rbc,hypercube_rbc \
        --distributions=uniform --warmup=2 --reps=11 2>/dev/null | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$W/sort-whole-ab.jsonl"
    done
  done
  echo "sort round $r at $((SECONDS - start)) s"
done
# The allgather's own copy after the first round (cur, eaf02bb) against during it (agoverlap).
for r in 1 2 3; do
  for p in 16 8 2; do
    for v in cur agoverlap; do
      (( SECONDS - start > 420 )) && break 3
      prog="$B/collectives_mpi"; [[ $v != cur ]] && prog=results/ab/$v/collectives_mpi
      timeout 30 $L -np $p "$prog" --ops=allgather --sizes=8192,65536,262144,1048576 --impls=rbc,mpi \
        --warmup=2 --reps=11 2>/dev/null | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$W/allgather-ab.jsonl"
    done
  done
  echo "allgather round $r at $((SECONDS - start)) s"
done
cat "$W/node/steps.txt"
wc -l "$W"/*.jsonl "$W"/node/*.jsonl
tar czf "$O/run5.tgz" -C "$W" .
