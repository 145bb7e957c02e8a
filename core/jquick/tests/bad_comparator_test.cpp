// Comparators that are not strict weak orders (issue 18, class 6): the sort must stop with
// jquick::Error on every PE, or return, but never crash, hang or lose or duplicate an element.
// Also: Config::verify accepts correct results and costs no correctness elsewhere.
//
//   <=, always true, coin flips   caught by comp(x, x) on input elements: Error, data untouched
//   reflexive on most values,     caught by comp(x, x) on pivot samples (p >= 3): Error after
//   but not on checked positions  the sort, output a permutation of the input
//   irreflexive coin flips        no check can see it: with verify, Error or an output that is
//                                 in order by the comparator; always a permutation
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "jquick/jquick.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Global (count, sum of element hashes) over all PEs: equal before and after iff no element
// was lost or duplicated (with overwhelming probability).
std::pair<std::uint64_t, std::uint64_t> multiset(const std::vector<std::int64_t>& data) {
  std::uint64_t local[2] = {data.size(), 0};
  for (std::int64_t x : data) local[1] += mix(static_cast<std::uint64_t>(x));
  std::uint64_t global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return {global[0], global[1]};
}

// Whether every PE saw the same outcome; returns the number of PEs that threw.
int count_throwers(bool threw) {
  int mine = threw ? 1 : 0, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

std::vector<std::int64_t> input(int rank, std::int64_t n_per_pe, std::uint64_t seed) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n_per_pe));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<std::int64_t>(mix(seed * 1000003 + static_cast<std::uint64_t>(rank) * 7919 + i) >> 1);
  }
  return v;
}

template <class Less>
void expect_error_everywhere(Checker& check, const std::vector<std::int64_t>& original,
                             const jquick::Config& config, Less less, bool untouched) {
  std::vector<std::int64_t> data = original;
  const auto before = multiset(data);
  bool threw = false;
  std::string what;
  try {
    jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, less, config);
  } catch (const jquick::Error& e) {
    threw = true;
    what = e.what();
  }
  check.equal(count_throwers(threw), check.size(), "PEs that threw jquick::Error");
  check.check(what.find("strict weak order") != std::string::npos, "error names the cause: ",
              what);
  if (untouched) check.check(data == original, "a rejected sort touched the data");
  check.check(multiset(data) == before, "elements lost or duplicated");
}

void run(Checker& check) {
  const int rank = check.rank(), p = check.size();
  const std::vector<jquick::Layer> layers = {jquick::Layer::rbc, jquick::Layer::mpi_create_group};
  for (jquick::Layer layer : layers) {
    for (std::int64_t n_per_pe : {1, 40, 300}) {
      for (bool one_pe_only : {false, true}) {
        Context c(check, "layer ", jquick::layer_name(layer), " n/p ", n_per_pe,
                  one_pe_only ? " (all on PE 0)" : "");
        const std::vector<std::int64_t> original =
            (one_pe_only && rank != 0) ? std::vector<std::int64_t>()
                                       : input(rank, n_per_pe, static_cast<std::uint64_t>(n_per_pe));
        jquick::Config config;
        config.layer = layer;
        {
          Context c2(check, "<=");
          expect_error_everywhere(check, original, config,
                                  [](std::int64_t a, std::int64_t b) { return a <= b; }, true);
        }
        {
          Context c2(check, "always true");
          expect_error_everywhere(check, original, config,
                                  [](std::int64_t, std::int64_t) { return true; }, true);
        }
        {
          Context c2(check, "coin flips");
          std::mt19937_64 coin(static_cast<std::uint64_t>(rank) + 17);
          expect_error_everywhere(
              check, original, config,
              [&coin](std::int64_t, std::int64_t) { return (coin() & 1) != 0; }, true);
        }
        if (p >= 3 && !one_pe_only && n_per_pe >= 40) {
          // comp(x, x) is true for odd values only; the input's checked positions
          // (c * m / 16) hold even values, so only the pivot samples can see it.
          Context c2(check, "reflexive off the checked positions");
          std::vector<std::int64_t> sneaky = original;
          const std::size_t m = sneaky.size();
          for (std::size_t i = 0; i < m; ++i) sneaky[i] |= 1;
          for (std::size_t k = 0; k < 16; ++k) sneaky[k * m / 16] &= ~std::int64_t(1);
          expect_error_everywhere(
              check, sneaky, config,
              [](std::int64_t a, std::int64_t b) { return a < b || (a == b && (a & 1)); }, false);
        }
        {
          Context c2(check, "irreflexive coin flips with verify");
          std::vector<std::int64_t> data = original;
          const auto before = multiset(data);
          std::mt19937_64 coin(static_cast<std::uint64_t>(rank) + 99);
          auto liar = [&coin](std::int64_t a, std::int64_t b) { return a != b && (coin() & 1); };
          jquick::Config verified = config;
          verified.verify = true;
          bool threw = false;
          try {
            jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, liar, verified);
          } catch (const jquick::Error&) {
            threw = true;
          }
          const int throwers = count_throwers(threw);
          check.check(throwers == 0 || throwers == p, "only some PEs threw: ", throwers);
          check.check(multiset(data) == before, "elements lost or duplicated");
        }
        {
          Context c2(check, "verify with std::less");
          std::vector<std::int64_t> data = original;
          jquick::Config verified = config;
          verified.verify = true;
          bool threw = false;
          try {
            jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, std::less<std::int64_t>(), verified);
          } catch (const jquick::Error&) {
            threw = true;
          }
          check.equal(count_throwers(threw), 0, "PEs whose verify rejected a correct sort");
          check.check(std::is_sorted(data.begin(), data.end()), "verified output not sorted");
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "bad_comparator_test",
                                  [](Checker& check) { run(check); });
}
