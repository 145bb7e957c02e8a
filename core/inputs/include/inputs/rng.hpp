#pragma once

#include <cstdint>

namespace inputs {

// Advances `state` by one SplitMix64 step and returns the mixed output. Used to expand a small
// seed into a full generator state and to hash seeds together.
std::uint64_t splitmix64(std::uint64_t& state);

// A xoshiro256** generator with helpers whose results depend only on the seed, never on the
// standard library (std::*_distribution algorithms differ between libstdc++ versions). Plain
// value type: each owner (a PE, a test) keeps its own, nothing is shared.
class Rng {
 public:
  // Independent streams for different (seed, stream) pairs, e.g. stream = rank.
  Rng(std::uint64_t seed, std::uint64_t stream);

  std::uint64_t next();
  // Uniform in [0, bound); bound must be > 0 (throws std::invalid_argument otherwise).
  std::uint64_t below(std::uint64_t bound);
  // Uniform in [lo, hi], both inclusive; requires lo <= hi.
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi);
  // Uniform in [0, 1) with 53 random bits.
  double unit();
  // Standard normal (mean 0, deviation 1) by the Box-Muller transform.
  double normal();

 private:
  std::uint64_t s_[4];
};

}  // namespace inputs
