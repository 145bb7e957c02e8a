#pragma once

// Input instances for distributed sorting: the 11 distributions of the thesis' section 8.3.3
// (after Helman et al. and Axtmann-Sanders) plus a few shapes that stress balance. Every
// instance is a pure function of (distribution, Params): no MPI, no globals, and the same
// result on every machine, so a PE can regenerate its input and a test can regenerate anyone's.
//
// Keys come from the thesis' 31-bit key space [0, 2^31) (called M below; w = floor(M / p) is the
// width of one of p equal key segments), whatever the element type, so an instance means the
// same for int32, int64, uint64 and double. Uniform and Gaussian give real (non-integer) keys
// for double. N is n_per_pe, n = N * p, i is the rank.

#include <cstdint>
#include <string>
#include <vector>

namespace inputs {

enum class Distribution {
  kUniform,                  // uniform in [0, M)
  kGaussian,                 // normal with mean M/2 and deviation M/8, clamped to [0, M)
  kZero,                     // all keys 0
  kBucketSorted,             // p local buckets in order; bucket b uniform in segment b
  kGGroup,                   // groups of g PEs, each bucket aimed at another group's segment
  kStaggered,                // PE i < floor(p/2): segment 2i+1, else segment 2(i - floor(p/2))
  kDeterministicDuplicates,  // few values, each filling whole PEs, floor(log2) of halved sizes
  kRandomizedDuplicates,     // runs of random values from [0, r)
  kReverseSorted,            // globally non-increasing in rank order, rank 0 largest
  kMirroredTarget,           // PE i uniform in segment bitreverse(i) of 2^ceil(log2 p) segments
  kAllToOne,                 // N-1 large keys per PE plus one small key p - i
  kSorted,                   // globally non-decreasing in rank order
  kFewDistinct,              // uniform over a handful of distinct keys
  kOnePE,                    // rank 0 holds all n keys (uniform), every other PE is empty
  kUneven,                   // uniform keys, local counts N, 0, N/2, 5N/2 repeating by rank
  kFirstHalf,                // uniform keys, 2N on each of the first ceil(p/2) PEs, the rest empty
};

struct Params {
  std::uint64_t seed = 0;
  int rank = 0;
  int p = 1;
  std::uint64_t n_per_pe = 0;
  // g of g-Group; 0 picks the largest divisor of p that is at most sqrt(p). Must divide p.
  int group_size = 0;
  // r of Randomized Duplicates (keys and run weights drawn from [0, r)); 0 means 32.
  std::uint64_t duplicate_range = 0;
  // Number of distinct keys of FewDistinct; 0 means 5.
  std::uint64_t distinct_keys = 0;
};

// Generates rank `params.rank`'s local input. Throws std::invalid_argument for p < 1, a rank
// outside [0, p), a g that does not divide p, or a count whose total n overflows 64 bits.
// T is one of std::int32_t, std::int64_t, std::uint64_t, double.
template <class T>
std::vector<T> generate(Distribution distribution, const Params& params);

// How many keys generate() returns on params.rank, and the total over all ranks, without
// generating them.
std::uint64_t local_count(Distribution distribution, const Params& params);
std::uint64_t global_count(Distribution distribution, const Params& params);

// Stable lower-case names ("uniform", "bucket-sorted", "g-group", "all-to-one", ...).
std::string name(Distribution distribution);
// Accepts a name in any case with '-', '_' or nothing between words ("AllToOne",
// "all_to_one" and "all-to-one" are the same); throws std::invalid_argument naming the
// unknown input and listing the valid names.
Distribution parse_distribution(const std::string& text);
// Every distribution, in declaration order.
std::vector<Distribution> all_distributions();
// The 11 distributions of the thesis' section 8.3.3.
std::vector<Distribution> thesis_distributions();

// The key space bound M = 2^31.
inline constexpr std::uint64_t key_space = std::uint64_t{1} << 31;

}  // namespace inputs
