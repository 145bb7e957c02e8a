#!/bin/bash
# Device run 4: node_check (targets, calibration, validation) with the bundle of bc187ee
# (results/bundle), then a broadcast A/B: the bundle's scatter from 512 KiB (cur) against
# scatter from 256 KiB (bc256, results/ab/bc256) on 8, 12 and 16 ranks, alternated in rounds.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
O=${1:-/tmp/out}; mkdir -p "$O"
B=results/bundle
start=$SECONDS
timeout 360 bench/node_check --programs "$B" --out "$O/node" --np 16 --rounds 3 --budget 320 >"$O/node-log.txt" 2>&1
echo "node_check exit $? at $((SECONDS - start)) s"
L="mpirun --bind-to core --map-by core --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
for r in 1 2 3 4; do
  for p in 16 8 12; do
    for v in cur bc256; do
      (( SECONDS - start > 430 )) && break 3
      prog="$B/collectives_mpi"; [[ $v == bc256 ]] && prog=results/ab/bc256/collectives_mpi
      timeout 30 $L -np $p "$prog" --ops=bcast --sizes=16384,32768,65536,131072,1048576 --impls=rbc,mpi \
        --warmup=2 --reps=11 | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$O/bcast-ab.jsonl"
    done
  done
  echo "bcast round $r at $((SECONDS - start)) s"
done
cat "$O/node/steps.txt"
wc -l "$O"/*.jsonl "$O"/node/*.jsonl
