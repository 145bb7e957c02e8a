#!/bin/bash
# Builds run5.sh's programs here (needs Bazel): ./janus bundle results/bundle from HEAD, then
# collectives_mpi with other broadcast radix rules and the allgather's old copy in
# results/ab/<variant>, the source put back after each, and sort_mpi allgathering a whole
# input only up to gather_elements, as before 20b1d5e (whole1), or up to twice that on 4 or 8
# PEs as well, as at 20b1d5e (whole2). Run from the repository root
# with a clean core/rbc/src/bcast.hpp, core/rbc/src/collectives.cpp and
# core/jquick/include/jquick/detail/sorter.hpp.
set -euo pipefail
./janus bundle results/bundle
bin="$(bazel info -c opt bazel-bin)"
rule='return bytes < 4096 \&\& p >= 8 \&\& p <= 16 ? 4 : 2;'
# variant NAME FILE PATTERN REPLACEMENT [PROGRAM]: PROGRAM (collectives_mpi) with PATTERN
# replaced in FILE.
variant() {
  local name=$1 file=$2 pattern=$3 replacement=$4 program=${5:-collectives_mpi}
  sed -i "s/$pattern/$replacement/" "$file"
  grep -qF "$(printf '%s' "$replacement" | sed 's/\\//g')" "$file" || { git checkout "$file"; exit 1; }
  bazel build -c opt "//bench:$program"
  mkdir -p "results/ab/$name"
  install -m 755 "$bin/bench/$program" "results/ab/$name/"
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
# JQuick as before 20b1d5e: a whole input allgathered only up to gather_elements (whole1).
variant whole1 core/jquick/include/jquick/detail/sorter.hpp \
  'if (p_ >= 3 \&\& whole_is_small(n)) {' 'if (p_ >= 3 \&\& is_small(n)) {' sort_mpi
# JQuick as at 20b1d5e: up to twice gather_elements on any p, not four times on 4 or 8 (whole2).
variant whole2 core/jquick/include/jquick/detail/sorter.hpp \
  'const std::int64_t factor = p_ == 4 || p_ == 8 ? 4 : 2;' 'const std::int64_t factor = 2;' sort_mpi
bazel build -c opt //bench:collectives_mpi //bench:sort_mpi
