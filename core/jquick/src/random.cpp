#include "jquick/detail/random.hpp"

#include <random>

namespace jquick::detail {

namespace {

void descend(std::uint64_t seed, std::int64_t lo, std::int64_t hi, std::int64_t k,
             std::int64_t mine_lo, std::int64_t mine_hi, std::vector<std::int64_t>& out) {
  if (k == 0 || hi <= mine_lo || mine_hi <= lo) return;
  if (mine_lo <= lo && hi <= mine_hi) {
    SplitMix rng(hash(seed, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi), 1));
    std::uniform_int_distribution<std::int64_t> pick(lo, hi - 1);
    for (std::int64_t i = 0; i < k; ++i) out.push_back(pick(rng));
    return;
  }
  // Partial overlap implies hi - lo >= 2.
  const std::int64_t mid = lo + (hi - lo) / 2;
  SplitMix rng(hash(seed, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi), 0));
  std::binomial_distribution<std::int64_t> split(
      k, static_cast<double>(mid - lo) / static_cast<double>(hi - lo));
  const std::int64_t left = split(rng);
  descend(seed, lo, mid, left, mine_lo, mine_hi, out);
  descend(seed, mid, hi, k - left, mine_lo, mine_hi, out);
}

}  // namespace

void sample_positions(std::uint64_t seed, std::int64_t size, std::int64_t k,
                      std::int64_t mine_lo, std::int64_t mine_hi, std::vector<std::int64_t>& out) {
  descend(seed, 0, size, k, mine_lo, mine_hi, out);
}

}  // namespace jquick::detail
