#include "sim/calibration/reduction_model.hpp"

#include <cstdint>
#include <limits>

namespace reduction_model {
namespace {

constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();

// One communicator-size bracket of a decision table: below `p_below` ranks, the first
// (bytes_below, algorithm) pair whose bound the message is under.
struct Bracket {
  int p_below;
  std::vector<std::pair<std::size_t, int>> by_bytes;
};

int decide(const std::vector<Bracket>& table, int p, std::size_t bytes) {
  for (const Bracket& b : table) {
    if (p >= b.p_below) continue;
    for (const auto& [below, algorithm] : b.by_bytes) {
      if (bytes < below) return algorithm;
    }
  }
  return table.back().by_bytes.back().second;
}

constexpr int kLastBracket = std::numeric_limits<int>::max();

// Open MPI's allreduce choices as SMPI's ompi selector tabulates them. 1, 2: reduce + bcast;
// 3: recursive doubling; 4: ring; 5: segmented ring; 6: Rabenseifner.
const std::vector<Bracket>& allreduce_table(bool commutative) {
  static const std::vector<Bracket> commutative_table = {
      {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {kAny, 6}}},
      {8, {{16, 4}, {8192, 3}, {kAny, 6}}},
      {16, {{8192, 3}, {kAny, 6}}},
      {32, {{64, 5}, {4096, 3}, {kAny, 6}}},
      {64, {{128, 5}, {kAny, 6}}},
      {128, {{262144, 3}, {kAny, 6}}},
      {256, {{131072, 2}, {262144, 3}, {kAny, 6}}},
      {512, {{4096, 2}, {kAny, 6}}},
      {2048, {{2048, 2}, {16384, 3}, {kAny, 6}}},
      {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {kAny, 6}}},
      {kLastBracket, {{2048, 2}, {16384, 5}, {32768, 3}, {kAny, 6}}},
  };
  static const std::vector<Bracket> other_table = {
      {4, {{131072, 3}, {kAny, 1}}},
      {8, {{kAny, 3}}},
      {16, {{1048576, 3}, {kAny, 2}}},
      {128, {{kAny, 3}}},
      {256, {{131072, 2}, {524288, 3}, {kAny, 2}}},
      {512, {{4096, 2}, {524288, 3}, {kAny, 2}}},
      {kLastBracket, {{2048, 2}, {kAny, 3}}},
  };
  return commutative ? commutative_table : other_table;
}

// Open MPI's reduce choices as SMPI's ompi selector tabulates them. 1, 7: linear; 2: chain;
// 3: pipeline; 4: binary tree; 5: binomial tree; 6: in-order binary tree.
const std::vector<Bracket>& reduce_table(bool commutative) {
  static const std::vector<Bracket> commutative_table = {
      {4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}, {kAny, 3}}},
      {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}, {kAny, 1}}},
      {16, {{8192, 4}, {kAny, 5}}},
      {32, {{4096, 4}, {kAny, 5}}},
      {256, {{kAny, 5}}},
      {512, {{8192, 5}, {16384, 6}, {kAny, 5}}},
      {2048, {{kAny, 5}}},
      {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}, {kAny, 5}}},
      {kLastBracket, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}, {kAny, 5}}},
  };
  static const std::vector<Bracket> other_table = {
      {4, {{8, 6}, {kAny, 1}}},
      {8, {{kAny, 1}}},
      {16, {{1024, 6}, {8192, 1}, {16384, 6}, {262144, 1}, {kAny, 6}}},
      {128, {{kAny, 6}}},
      {256, {{512, 6}, {1024, 1}, {kAny, 6}}},
      {kLastBracket, {{kAny, 6}}},
  };
  return commutative ? commutative_table : other_table;
}

int ceil_log2(int p) {
  int rounds = 0;
  while ((1 << rounds) < p) ++rounds;
  return rounds;
}

int pow2_floor(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// Children of `rel` (rank relative to the root) in a binomial tree over p ranks.
int binomial_children(int rel, int p) {
  int children = 0;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rel & mask) break;
    if (rel + mask < p) ++children;
  }
  return children;
}

std::vector<Term> reduce_terms(int algorithm, std::size_t bytes, int p, int rel) {
  switch (algorithm) {
    case 1:
    case 7:
      return {{rel == 0 ? static_cast<double>(p - 1) : 0.0, bytes}};
    case 2:
    case 3:
      return {{rel + 1 < p ? 1.0 : 0.0, bytes}};  // a chain: every rank but its tail combines once
    case 4:
    case 6: {
      const int children = (2 * rel + 1 < p ? 1 : 0) + (2 * rel + 2 < p ? 1 : 0);
      return {{static_cast<double>(children), bytes}};
    }
    default:
      return {{static_cast<double>(binomial_children(rel, p)), bytes}};
  }
}

std::vector<Term> allreduce_terms(int algorithm, int count, std::size_t bytes, int p, int rank, bool commutative) {
  // The rings need a block per rank; with fewer elements they double instead, as Open MPI's do.
  if ((algorithm == 4 || algorithm == 5) && count < p) algorithm = 3;
  switch (algorithm) {
    case 1:
    case 2:  // a reduce to rank 0, then a broadcast
      return reduce_terms(decide(reduce_table(commutative), p, bytes), bytes, p, rank);
    case 3:
      return {{static_cast<double>(ceil_log2(p)), bytes}};
    case 4:
    case 5:  // the reduce-scatter half of a ring: p - 1 steps of one block each
      return {{static_cast<double>(p - 1), bytes / static_cast<std::size_t>(p)}};
    default: {  // Rabenseifner: halving rounds on half, a quarter, ... of the vector
      std::vector<Term> terms;
      const int q = pow2_floor(p);
      if (q < p) terms.push_back({1.0, bytes});  // the fold of the ranks beyond q
      for (int part = 2; part <= q; part *= 2) terms.push_back({1.0, bytes / static_cast<std::size_t>(part)});
      return terms;
    }
  }
}

}  // namespace

std::vector<Term> applications(const std::string& selector, Call call, int count, std::size_t bytes, int p,
                               int rank, int root, bool commutative) {
  if (selector != "ompi" || p < 2 || count <= 0 || bytes == 0) return {};
  switch (call) {
    case Call::scan:
      return {{static_cast<double>(rank), bytes}};
    case Call::exscan:
      return {{rank > 1 ? static_cast<double>(rank - 1) : 0.0, bytes}};
    case Call::reduce:
      return reduce_terms(decide(reduce_table(commutative), p, bytes), bytes, p, (rank - root + p) % p);
    case Call::allreduce:
      return allreduce_terms(decide(allreduce_table(commutative), p, bytes), count, bytes, p, rank, commutative);
  }
  return {};
}

}  // namespace reduction_model
