#include "inputs/inputs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "inputs/rng.hpp"

namespace inputs {

namespace {

constexpr std::uint64_t kM = key_space;

struct Entry {
  Distribution distribution;
  const char* name;
};

constexpr Entry kEntries[] = {
    {Distribution::kUniform, "uniform"},
    {Distribution::kGaussian, "gaussian"},
    {Distribution::kZero, "zero"},
    {Distribution::kBucketSorted, "bucket-sorted"},
    {Distribution::kGGroup, "g-group"},
    {Distribution::kStaggered, "staggered"},
    {Distribution::kDeterministicDuplicates, "deterministic-duplicates"},
    {Distribution::kRandomizedDuplicates, "randomized-duplicates"},
    {Distribution::kReverseSorted, "reverse-sorted"},
    {Distribution::kMirroredTarget, "mirrored-target"},
    {Distribution::kAllToOne, "all-to-one"},
    {Distribution::kSorted, "sorted"},
    {Distribution::kFewDistinct, "few-distinct"},
    {Distribution::kOnePE, "one-pe"},
    {Distribution::kUneven, "uneven"},
    {Distribution::kFirstHalf, "first-half"},
};

// Lower case without separators, so "AllToOne", "all_to_one" and "all-to-one" compare equal.
std::string normalized(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

void validate(const Params& params) {
  if (params.p < 1) {
    throw std::invalid_argument("inputs: p must be at least 1, got " + std::to_string(params.p));
  }
  if (params.rank < 0 || params.rank >= params.p) {
    throw std::invalid_argument("inputs: rank " + std::to_string(params.rank) +
                                " is outside [0, " + std::to_string(params.p) + ")");
  }
  // Uneven gives some PEs 5N/2 keys, so leave headroom beyond n = N * p.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() / 4;
  if (params.n_per_pe > limit / static_cast<std::uint64_t>(params.p)) {
    throw std::invalid_argument("inputs: n_per_pe * p overflows 64 bits");
  }
}

std::uint64_t total(const Params& params) {
  return params.n_per_pe * static_cast<std::uint64_t>(params.p);
}

int floor_log2(std::uint64_t x) {
  int result = 0;
  while (x > 1) {
    x >>= 1;
    ++result;
  }
  return result;
}

int ceil_log2(std::uint64_t x) {
  const int f = floor_log2(x);
  return (std::uint64_t{1} << f) < x ? f + 1 : f;
}

std::uint64_t bit_reverse(std::uint64_t x, int bits) {
  std::uint64_t result = 0;
  for (int b = 0; b < bits; ++b) result |= ((x >> b) & 1) << (bits - 1 - b);
  return result;
}

int group_size_of(const Params& params) {
  if (params.group_size != 0) {
    if (params.group_size < 1 || params.p % params.group_size != 0) {
      throw std::invalid_argument("inputs: g-group size " + std::to_string(params.group_size) +
                                  " must be a positive divisor of p = " +
                                  std::to_string(params.p));
    }
    return params.group_size;
  }
  int best = 1;
  for (int g = 1; static_cast<long long>(g) * g <= params.p; ++g) {
    if (params.p % g == 0) best = g;
  }
  return best;
}

// Uneven sizes: local count = floor(N * q[rank mod 4] / 4) with q = {4, 0, 2, 10}, i.e. N, 0
// (an empty PE), N/2 and 5N/2; the four ranks of a cycle hold 4N keys together.
constexpr std::uint64_t kUnevenQuarters[4] = {4, 0, 2, 10};

std::uint64_t uneven_count(std::uint64_t n_per_pe, int rank) {
  return n_per_pe * kUnevenQuarters[rank % 4] / 4;
}

// First Half: the PEs that hold keys.
int first_half(int p) { return (p + 1) / 2; }

// `count` parts as equal as possible: part k gets count / parts + [k < count mod parts].
std::uint64_t part_size(std::uint64_t count, std::uint64_t parts, std::uint64_t k) {
  return count / parts + (k < count % parts ? 1 : 0);
}

// floor(a * b / c) without overflow.
std::uint64_t mul_div(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

// Appends keys to the output, turning the generator's integers and reals into T.
template <class T>
class Sink {
 public:
  explicit Sink(std::vector<T>& out, Rng& rng) : out_(out), rng_(rng) {}

  void key(std::uint64_t k) { out_.push_back(static_cast<T>(k)); }

  // A real key, clamped into [0, M); integer types take its floor.
  void real(double x) {
    const double top = static_cast<double>(kM);
    if (!(x >= 0.0)) x = 0.0;
    if constexpr (std::is_floating_point<T>::value) {
      if (x >= top) x = std::nextafter(top, 0.0);
      out_.push_back(static_cast<T>(x));
    } else {
      if (x >= top) x = top - 1.0;
      out_.push_back(static_cast<T>(static_cast<std::uint64_t>(std::floor(x))));
    }
  }

  // A random key from [lo, hi) (hi > lo): an integer for integer types, a real for double.
  void uniform(std::uint64_t lo, std::uint64_t hi) {
    if constexpr (std::is_floating_point<T>::value) {
      const double span = static_cast<double>(hi - lo);
      double x = static_cast<double>(lo) + rng_.unit() * span;
      if (x >= static_cast<double>(hi)) x = std::nextafter(static_cast<double>(hi), 0.0);
      out_.push_back(static_cast<T>(x));
    } else {
      key(lo + rng_.below(hi - lo));
    }
  }

 private:
  std::vector<T>& out_;
  Rng& rng_;
};

template <class T>
void fill(Distribution distribution, const Params& params, std::vector<T>& out) {
  const std::uint64_t N = params.n_per_pe;
  const std::uint64_t p = static_cast<std::uint64_t>(params.p);
  const std::uint64_t i = static_cast<std::uint64_t>(params.rank);
  const std::uint64_t n = total(params);
  const std::uint64_t w = kM / p;  // p < 2^31, so w >= 1
  // Each distribution draws from its own stream family, each rank from its own stream.
  Rng rng(params.seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(distribution) + 1)),
          i);
  Sink<T> sink(out, rng);
  out.reserve(local_count(distribution, params));

  switch (distribution) {
    case Distribution::kUniform:
      for (std::uint64_t j = 0; j < N; ++j) sink.uniform(0, kM);
      break;
    case Distribution::kGaussian: {
      const double mean = static_cast<double>(kM) / 2, deviation = static_cast<double>(kM) / 8;
      for (std::uint64_t j = 0; j < N; ++j) sink.real(mean + deviation * rng.normal());
      break;
    }
    case Distribution::kZero:
      for (std::uint64_t j = 0; j < N; ++j) sink.key(0);
      break;
    case Distribution::kBucketSorted:
      for (std::uint64_t b = 0; b < p; ++b) {
        for (std::uint64_t j = part_size(N, p, b); j > 0; --j) sink.uniform(b * w, b * w + w);
      }
      break;
    case Distribution::kGGroup: {
      // Thesis: group j = i / g sends bucket k (of g buckets) to segment (j g + p/2 + k) mod p.
      // The thesis writes the segment index shifted by one, which makes the last segment wrap
      // to an empty range; here every bucket targets one valid segment.
      const std::uint64_t g = static_cast<std::uint64_t>(group_size_of(params));
      const std::uint64_t j = i / g;
      for (std::uint64_t k = 0; k < g; ++k) {
        const std::uint64_t t = (j * g + p / 2 + k) % p;
        for (std::uint64_t c = part_size(N, g, k); c > 0; --c) sink.uniform(t * w, t * w + w);
      }
      break;
    }
    case Distribution::kStaggered: {
      // For even p this is the thesis' rule (segment 2i - p in the upper half); for odd p the
      // upper half takes the even segments 0, 2, ..., p - 1, so every segment is used once.
      const std::uint64_t half = p / 2;
      const std::uint64_t t = i < half ? 2 * i + 1 : 2 * (i - half);
      for (std::uint64_t j = 0; j < N; ++j) sink.uniform(t * w, t * w + w);
      break;
    }
    case Distribution::kDeterministicDuplicates: {
      // The first floor(p/2) PEs hold floor(log2 n), the next floor(rest/2) hold
      // floor(log2(n/2)), and so on; the last PE holds runs of N/2, N/4, ... keys with values
      // floor(log2 N), floor(log2(N/2)), ...
      std::uint64_t start = 0, remaining = p;
      int level = 0;
      bool found = false;
      while (remaining > 1) {
        const std::uint64_t half = remaining / 2;
        if (i < start + half) {
          found = true;
          break;
        }
        start += half;
        remaining -= half;
        ++level;
      }
      if (found) {
        const std::uint64_t value = floor_log2(std::max<std::uint64_t>(1, n >> level));
        for (std::uint64_t j = 0; j < N; ++j) sink.key(value);
      } else {
        std::uint64_t left = N;
        for (int chunk = 0; left > 0; ++chunk) {
          const std::uint64_t take = std::max<std::uint64_t>(1, left / 2);
          const std::uint64_t value =
              floor_log2(std::max<std::uint64_t>(1, chunk < 64 ? N >> chunk : 0));
          for (std::uint64_t c = 0; c < take; ++c) sink.key(value);
          left -= take;
        }
      }
      break;
    }
    case Distribution::kRandomizedDuplicates: {
      const std::uint64_t r = params.duplicate_range == 0 ? 32 : params.duplicate_range;
      std::vector<std::uint64_t> weights(r);
      std::uint64_t sum = 0;
      for (auto& weight : weights) {
        weight = rng.below(r);
        sum += weight;
      }
      if (sum == 0) {
        const std::uint64_t value = rng.below(r);
        for (std::uint64_t j = 0; j < N; ++j) sink.key(value);
        break;
      }
      // Run k covers [floor(N * W_k / S), floor(N * W_{k+1} / S)) for prefix sums W.
      std::uint64_t prefix = 0, begin = 0;
      for (std::uint64_t k = 0; k < r; ++k) {
        prefix += weights[k];
        const std::uint64_t end = mul_div(N, prefix, sum);
        const std::uint64_t value = rng.below(r);
        for (std::uint64_t j = begin; j < end; ++j) sink.key(value);
        begin = end;
      }
      break;
    }
    case Distribution::kReverseSorted:
      // Global index g = i N + j gets floor((n - 1 - g) M / n): strictly decreasing for n <= M.
      for (std::uint64_t j = 0; j < N; ++j) sink.key(mul_div(n - 1 - (i * N + j), kM, n));
      break;
    case Distribution::kSorted:
      for (std::uint64_t j = 0; j < N; ++j) sink.key(mul_div(i * N + j, kM, n));
      break;
    case Distribution::kMirroredTarget: {
      // 2^bits >= p segments so that bit reversal is a permutation also when p is not a power
      // of two (some segments then stay unused).
      const int bits = ceil_log2(p);
      const std::uint64_t m = bit_reverse(i, bits);
      const std::uint64_t width = kM >> bits;
      for (std::uint64_t j = 0; j < N; ++j) sink.uniform(m * width, m * width + width);
      break;
    }
    case Distribution::kAllToOne: {
      if (N == 0) break;
      // N - 1 large keys in segment p - 1 - i above p (PE 0 has the largest), then the small
      // key p - i: all p small keys belong to the first PE of the sorted output.
      const std::uint64_t width = std::max<std::uint64_t>(1, (kM - p) / p);
      const std::uint64_t lo = p + (p - 1 - i) * width;
      for (std::uint64_t j = 0; j + 1 < N; ++j) sink.uniform(lo, lo + width);
      sink.key(p - i);
      break;
    }
    case Distribution::kFewDistinct: {
      const std::uint64_t k = params.distinct_keys == 0 ? 5 : params.distinct_keys;
      const std::uint64_t spacing = std::max<std::uint64_t>(1, kM / k);
      for (std::uint64_t j = 0; j < N; ++j) sink.key(rng.below(k) * spacing);
      break;
    }
    case Distribution::kOnePE:
      if (i == 0) {
        for (std::uint64_t j = 0; j < n; ++j) sink.uniform(0, kM);
      }
      break;
    case Distribution::kUneven:
      for (std::uint64_t j = uneven_count(N, params.rank); j > 0; --j) sink.uniform(0, kM);
      break;
    case Distribution::kFirstHalf:
      if (params.rank < first_half(params.p)) {
        for (std::uint64_t j = 0; j < 2 * N; ++j) sink.uniform(0, kM);
      }
      break;
  }
}

}  // namespace

template <class T>
std::vector<T> generate(Distribution distribution, const Params& params) {
  static_assert(std::is_same<T, std::int32_t>::value || std::is_same<T, std::int64_t>::value ||
                    std::is_same<T, std::uint64_t>::value || std::is_same<T, double>::value,
                "inputs::generate supports int32, int64, uint64 and double");
  validate(params);
  if (distribution == Distribution::kGGroup) group_size_of(params);
  std::vector<T> out;
  fill(distribution, params, out);
  return out;
}

template std::vector<std::int32_t> generate<std::int32_t>(Distribution, const Params&);
template std::vector<std::int64_t> generate<std::int64_t>(Distribution, const Params&);
template std::vector<std::uint64_t> generate<std::uint64_t>(Distribution, const Params&);
template std::vector<double> generate<double>(Distribution, const Params&);

std::uint64_t local_count(Distribution distribution, const Params& params) {
  validate(params);
  switch (distribution) {
    case Distribution::kOnePE:
      return params.rank == 0 ? total(params) : 0;
    case Distribution::kUneven:
      return uneven_count(params.n_per_pe, params.rank);
    case Distribution::kFirstHalf:
      return params.rank < first_half(params.p) ? 2 * params.n_per_pe : 0;
    default:
      return params.n_per_pe;
  }
}

std::uint64_t global_count(Distribution distribution, const Params& params) {
  validate(params);
  if (distribution == Distribution::kFirstHalf) {
    return 2 * params.n_per_pe * static_cast<std::uint64_t>(first_half(params.p));
  }
  if (distribution != Distribution::kUneven) return total(params);
  const std::uint64_t N = params.n_per_pe;
  const std::uint64_t p = static_cast<std::uint64_t>(params.p);
  std::uint64_t sum = (p / 4) * (uneven_count(N, 0) + uneven_count(N, 1) + uneven_count(N, 2) +
                                 uneven_count(N, 3));
  for (std::uint64_t r = p - p % 4; r < p; ++r) sum += uneven_count(N, static_cast<int>(r));
  return sum;
}

std::string name(Distribution distribution) {
  for (const auto& entry : kEntries) {
    if (entry.distribution == distribution) return entry.name;
  }
  throw std::invalid_argument("inputs: unknown Distribution value " +
                              std::to_string(static_cast<int>(distribution)));
}

Distribution parse_distribution(const std::string& text) {
  const std::string wanted = normalized(text);
  for (const auto& entry : kEntries) {
    if (normalized(entry.name) == wanted) return entry.distribution;
  }
  std::string valid;
  for (const auto& entry : kEntries) {
    if (!valid.empty()) valid += ", ";
    valid += entry.name;
  }
  throw std::invalid_argument("inputs: unknown distribution '" + text + "'; valid names: " +
                              valid);
}

std::vector<Distribution> all_distributions() {
  std::vector<Distribution> result;
  for (const auto& entry : kEntries) result.push_back(entry.distribution);
  return result;
}

std::vector<Distribution> thesis_distributions() {
  return {Distribution::kUniform,
          Distribution::kGaussian,
          Distribution::kZero,
          Distribution::kBucketSorted,
          Distribution::kGGroup,
          Distribution::kStaggered,
          Distribution::kDeterministicDuplicates,
          Distribution::kRandomizedDuplicates,
          Distribution::kReverseSorted,
          Distribution::kMirroredTarget,
          Distribution::kAllToOne};
}

}  // namespace inputs
