#include "inputs/rng.hpp"

#include <cmath>
#include <stdexcept>

namespace inputs {

namespace {

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  // Mix the stream through its own SplitMix64 step first so that neighbouring (seed, stream)
  // pairs such as (1, 2) and (2, 1) do not start from related states.
  std::uint64_t stream_state = stream ^ 0x6a09e667f3bcc909ULL;
  std::uint64_t state = seed ^ splitmix64(stream_state);
  for (auto& word : s_) word = splitmix64(state);
  // xoshiro must not start from the all-zero state; SplitMix64 practically never yields it,
  // but make it impossible.
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t bound) {
  if (bound == 0) throw std::invalid_argument("inputs::Rng::below: bound must be positive");
  // Multiply-and-shift with rejection of the biased low products (exact uniformity).
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
    if (static_cast<std::uint64_t>(product) >= threshold) {
      return static_cast<std::uint64_t>(product >> 64);
    }
  }
}

std::uint64_t Rng::between(std::uint64_t lo, std::uint64_t hi) {
  if (lo > hi) throw std::invalid_argument("inputs::Rng::between: lo must not exceed hi");
  const std::uint64_t span = hi - lo;
  if (span == ~std::uint64_t{0}) return next();
  return lo + below(span + 1);
}

double Rng::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  const double u1 = 1.0 - unit();  // in (0, 1], so the logarithm is finite
  const double u2 = unit();
  const double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

}  // namespace inputs
