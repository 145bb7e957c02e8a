#!/bin/bash
# Builds run5.sh's programs here (needs Bazel): ./janus bundle results/bundle from HEAD, then
# collectives_mpi with other broadcast radix rules in results/ab/<variant>, the source put back
# after each. Run from the repository root with a clean core/rbc/src/bcast.hpp.
set -euo pipefail
./janus bundle results/bundle
bin="$(bazel info -c opt bazel-bin)"
rule='return bytes < 4096 \&\& p >= 8 \&\& p <= 16 ? 4 : 2;'
variant() {
  local name=$1 replacement=$2
  sed -i "s/$rule/$replacement/" core/rbc/src/bcast.hpp
  grep -q "$replacement" core/rbc/src/bcast.hpp || { git checkout core/rbc/src/bcast.hpp; exit 1; }
  bazel build -c opt //bench:collectives_mpi
  mkdir -p "results/ab/$name"
  install -m 755 "$bin/bench/collectives_mpi" "results/ab/$name/"
  git checkout core/rbc/src/bcast.hpp
}
variant binomial 'return 2;'
variant k4wide 'return bytes < 8192 \&\& p >= 3 ? 4 : 2;'
variant k8wide 'return bytes < 8192 \&\& p >= 3 ? 8 : 2;'
bazel build -c opt //bench:collectives_mpi
