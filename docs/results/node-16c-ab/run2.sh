#!/bin/bash
# Device run 2: reduce/allreduce A/B (old = a885efe, new = halving reduce, low = halving from 8 KiB
# on <= 16 ranks) and JQuick's gather_elements sweep, alternated in rounds.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
D=$(cd "$(dirname "$0")" && pwd); O=${1:-/tmp/out}; mkdir -p "$O"
L="mpirun --bind-to core --map-by core --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
start=$SECONDS
for r in 1 2 3; do
  for p in 16 8 4 12; do
    for v in old new low; do
      timeout 60 $L -np $p "$D/$v/collectives_mpi" --ops=reduce,allreduce \
        --sizes=128,1024,2048,4096,8192,16384,65536,262144,1048576 --impls=rbc,mpi --warmup=2 --reps=11 \
        | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$O/coll-ab.jsonl"
    done
    echo "coll round $r p $p at $((SECONDS - start)) s"
  done
  for p in 16 8 12 4; do
    for g in 4096 16384 65536; do
      timeout 60 $L -np $p "$D/sort_mpi" --nps=256,512,1024,2048,4096,8192,16384 --impls=jquick_rbc,hypercube_rbc \
        --distributions=uniform --warmup=2 --reps=11 --gather-elements=$g \
        | sed -n "s/^JANUS_BENCH {/{\"gather\":$g,\"round\":$r,/p" >>"$O/sort-gather.jsonl"
    done
    echo "sort round $r p $p at $((SECONDS - start)) s"
  done
done
wc -l "$O"/*.jsonl
