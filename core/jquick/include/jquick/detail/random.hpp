#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace jquick::detail {

// SplitMix64 finaliser: a cheap, well-mixing bijection on 64-bit words.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash(std::uint64_t a, std::uint64_t b) { return mix64(a ^ mix64(b)); }
inline std::uint64_t hash(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return hash(hash(a, b), c);
}
inline std::uint64_t hash(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  return hash(hash(a, b, c), d);
}

// A small UniformRandomBitGenerator (SplitMix64 stream). Seeding it is free, so every node of
// the sample-count tree can have its own generator derived from its identity.
class SplitMix {
 public:
  using result_type = std::uint64_t;
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// Draws the sample positions that fall into [mine_lo, mine_hi) when `k` positions are drawn
// uniformly (with replacement) from [0, size). The sample counts are split down a binary tree
// over the positions with binomial draws whose generators depend only on (seed, node), so every
// PE of a group computes the same split without communication and only walks the O(log size)
// nodes that straddle its own interval, whatever the other PEs hold. Appends to `out`.
void sample_positions(std::uint64_t seed, std::int64_t size, std::int64_t k,
                      std::int64_t mine_lo, std::int64_t mine_hi, std::vector<std::int64_t>& out);

}  // namespace jquick::detail
