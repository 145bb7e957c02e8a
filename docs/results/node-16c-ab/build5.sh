#!/bin/bash
# Builds run5.sh's programs here (needs Bazel): ./janus bundle results/bundle from HEAD, then
# collectives_mpi with other broadcast radix rules and the allgather's old copy in
# results/ab/<variant>, the source put back after each. Run from the repository root with a
# clean core/rbc/src/bcast.hpp and collectives.cpp.
set -euo pipefail
./janus bundle results/bundle
bin="$(bazel info -c opt bazel-bin)"
rule='return bytes < 4096 \&\& p >= 8 \&\& p <= 16 ? 4 : 2;'
# variant NAME FILE PATTERN REPLACEMENT: collectives_mpi with PATTERN replaced in FILE.
variant() {
  local name=$1 file=$2 pattern=$3 replacement=$4
  sed -i "s/$pattern/$replacement/" "$file"
  grep -q "$replacement" "$file" || { git checkout "$file"; exit 1; }
  bazel build -c opt //bench:collectives_mpi
  mkdir -p "results/ab/$name"
  install -m 755 "$bin/bench/collectives_mpi" "results/ab/$name/"
  git checkout "$file"
}
bcast=core/rbc/src/bcast.hpp
variant binomial $bcast "$rule" 'return 2;'
variant k4wide $bcast "$rule" 'return bytes < 8192 \&\& p >= 3 ? 4 : 2;'
variant k8wide $bcast "$rule" 'return bytes < 8192 \&\& p >= 3 ? 8 : 2;'
# The allgather's own copy during the first round at every size (before eaf02bb).
variant agoverlap core/rbc/src/collectives.cpp \
  'pack_after_round_ = static_cast<std::int64_t>(own_count) \* send.size > detail::kEagerBytes;' \
  'pack_after_round_ = false;'
bazel build -c opt //bench:collectives_mpi
