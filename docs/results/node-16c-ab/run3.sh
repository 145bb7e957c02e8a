#!/bin/bash
# Device run 3: node_check targets with the candidate bundle (results/bundle2), then broadcast
# A/B (tree = binomial only, cur = scatter from 1 MiB, bclow = scatter from 128 KiB) and JQuick
# with gather_elements 2048 against 4096.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
D=$(cd "$(dirname "$0")" && pwd); O=${1:-/tmp/out}; mkdir -p "$O"
B="$D/../bundle2"
start=$SECONDS
timeout 150 bench/node_check --programs "$B" --out /tmp/node --np 16 --rounds 2 --targets-only --budget 110 >/tmp/node-log.txt 2>&1
cp /tmp/node-log.txt /tmp/node/log.txt; tar czf "$O/node.tgz" -C /tmp node
echo "node_check done at $((SECONDS - start)) s"
L="mpirun --bind-to core --map-by core --mca btl self,vader --mca btl_vader_single_copy_mechanism none"
for r in 1 2; do
  for p in 16 8 12 4; do
    for v in tree cur bclow; do
      prog="$D/$v/collectives_mpi"; [[ $v == cur ]] && prog="$B/collectives_mpi"
      timeout 40 $L -np $p "$prog" --ops=bcast --sizes=16384,32768,65536,131072,262144,1048576 --impls=rbc,mpi \
        --warmup=2 --reps=11 | sed -n "s/^JANUS_BENCH {/{\"prog\":\"$v\",\"round\":$r,/p" >>"$O/bcast-ab.jsonl"
    done
  done
  echo "bcast round $r at $((SECONDS - start)) s"
  for p in 16 8; do
    for g in 2048 4096; do
      timeout 40 $L -np $p "$B/sort_mpi" --nps=256,512,1024,2048,4096 --impls=jquick_rbc,hypercube_rbc \
        --distributions=uniform --warmup=2 --reps=11 --gather-elements=$g \
        | sed -n "s/^JANUS_BENCH {/{\"gather\":$g,\"round\":$r,/p" >>"$O/sort-gather.jsonl"
    done
  done
  echo "sort round $r at $((SECONDS - start)) s"
done
cat /tmp/node/summary.txt
wc -l "$O"/*.jsonl
