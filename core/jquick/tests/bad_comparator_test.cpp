// Comparators that are not strict weak orders (issue 18, class 6): the sort must stop with
// jquick::Error on every PE, or return, but never crash, hang or lose or duplicate an element.
// Also: Config::verify accepts correct results and costs no correctness elsewhere.
//
//   <=, always true, coin flips   caught by comp(x, x) on input elements: Error, data untouched
//   reflexive on most values,     caught by comp(x, x) on pivot samples (p >= 3): the group
//   but not on checked positions  gives up after its exchange; Error, output a permutation
//   irreflexive coin flips, a!=b  no check can see them: without verify, a permutation; with
//                                 verify, Error or an output in order by the comparator
//   throws on PE 0 after k calls  every PE throws jquick::Error naming the exception (none
//                                 hangs), each holding its exact share of a permutation
//
// Options: --layers=rbc,mpi_create_group,..  --sizes=1,40,300 (n/p)
// --cases=<=,always-true,coin-flips,reflexive,irreflexive,a!=b,less,throws (default all)  --timing (rank 0 prints
// each case's host and simulated seconds, and the levels and retries of sorts that returned).
// SMPI 3.32's MPI_Scan/MPI_Iscan send from every rank to every later one (P^2/2 messages), so
// the MPI layers cost minutes of host time per sort from about 256 simulated ranks on; large
// simulations run --layers=rbc (the sorter and its checks are the same code for every layer).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
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

// Sorts; whether it threw jquick::Error, with its text in `what`.
template <class Less>
bool sort_throws(std::vector<std::int64_t>& data, const jquick::Config& config, Less less, std::string& what) {
  try {
    jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, less, config);
  } catch (const jquick::Error& e) {
    what = e.what();
    return true;
  }
  return false;
}

template <class Less>
void expect_error_everywhere(Checker& check, const std::vector<std::int64_t>& original,
                             const jquick::Config& config, Less less, bool untouched) {
  std::vector<std::int64_t> data = original;
  const auto before = multiset(data);
  std::string what;
  const bool threw = sort_throws(data, config, less, what);
  check.equal(count_throwers(threw), check.size(), "PEs that threw jquick::Error");
  check.check(what.find("strict weak order") != std::string::npos, "error names the cause: ",
              what);
  if (untouched) check.check(data == original, "a rejected sort touched the data");
  check.check(multiset(data) == before, "elements lost or duplicated");
}

struct Options {
  std::vector<jquick::Layer> layers = {jquick::Layer::rbc, jquick::Layer::mpi_create_group};
  std::vector<std::int64_t> sizes = {1, 40, 300};
  std::vector<std::string> cases;  // empty: all of kCases
  bool timing = false;
  bool wants(const char* name) const {
    return cases.empty() || std::find(cases.begin(), cases.end(), name) != cases.end();
  }
};

const char* const kCases[] = {"<=", "always-true", "coin-flips", "reflexive", "irreflexive",
                              "a!=b", "less", "throws"};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--layers=", 0) == 0) {
      options.layers.clear();
      for (const std::string& l : split_list(arg.substr(9))) {
        options.layers.push_back(jquick::parse_layer(l));
      }
    } else if (arg.rfind("--sizes=", 0) == 0) {
      options.sizes.clear();
      for (const std::string& s : split_list(arg.substr(8))) options.sizes.push_back(std::stoll(s));
    } else if (arg.rfind("--cases=", 0) == 0) {
      options.cases = split_list(arg.substr(8));
      for (const std::string& c : options.cases) {
        if (std::find(std::begin(kCases), std::end(kCases), c) == std::end(kCases)) {
          throw std::invalid_argument("unknown case " + c);
        }
      }
    } else if (arg == "--timing") {
      options.timing = true;
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  return options;
}

// Prints, on rank 0, the host and simulated seconds of the scope (--timing), and the largest
// number of levels and retries of any PE where the sort returned.
class Timer {
 public:
  Timer(const Checker& check, bool on, std::string what)
      : on_(on), rank_(check.rank()), p_(check.size()), what_(std::move(what)),
        host_(std::chrono::steady_clock::now()), sim_(MPI_Wtime()) {}
  // Collective (when timing): the sort's statistics, or none if it threw on this PE.
  void record(const jquick::Stats* stats) {
    if (!on_) return;
    int mine[2] = {stats ? stats->levels : -1, stats ? stats->retries : -1}, most[2] = {0, 0};
    MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    levels_ = most[0];
    retries_ = most[1];
  }
  ~Timer() {
    if (!on_ || rank_ != 0) return;
    const double host =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_).count();
    std::printf("[bad_comparator_test] p=%d %-58s host %8.3f s  simulated %.6f s", p_,
                what_.c_str(), host, MPI_Wtime() - sim_);
    if (levels_ >= 0) std::printf("  levels %d retries %d", levels_, retries_);
    std::printf("\n");
    std::fflush(stdout);
  }

 private:
  bool on_;
  int rank_, p_;
  std::string what_;
  std::chrono::steady_clock::time_point host_;
  double sim_;
  int levels_ = -1, retries_ = -1;
};

// A comparator no check can catch (comp(x, x) is false), once without and once with verify:
// every PE throws or none does, and no element is lost or duplicated. The timer records the
// run without verify (with verify it may throw, which hides the statistics).
template <class Less>
void expect_consistent(Checker& check, Timer& timer, const std::vector<std::int64_t>& original,
                       const jquick::Config& config, Less less) {
  const auto before = multiset(original);
  for (bool verify : {false, true}) {
    Context c(check, verify ? "with verify" : "without verify");
    std::vector<std::int64_t> data = original;
    jquick::Config chosen = config;
    chosen.verify = verify;
    bool threw = false;
    jquick::Stats stats;
    try {
      stats = jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, less, chosen);
    } catch (const jquick::Error&) {
      threw = true;
    }
    if (!verify) timer.record(threw ? nullptr : &stats);
    const int throwers = count_throwers(threw);
    check.check(throwers == 0 || throwers == check.size(), "only some PEs threw: ", throwers);
    check.check(multiset(data) == before, "elements lost or duplicated");
  }
}

// A comparator that throws on PE 0 after `after` calls (if it is called that often): every PE
// throws jquick::Error naming the exception, or, where it never fired, none does and the output
// is sorted; never a hang; always a permutation of the input in exact shares.
void expect_throw_everywhere(Checker& check, const std::vector<std::int64_t>& original,
                             const jquick::Config& config, long after) {
  std::vector<std::int64_t> data = original;
  const auto before = multiset(data);
  long calls = 0;
  bool fired = false;
  const bool thrower = check.rank() == 0;
  auto less = [&](std::int64_t a, std::int64_t b) {
    if (thrower && calls++ >= after) {
      fired = true;
      throw std::runtime_error("boom");
    }
    return a < b;
  };
  std::string what;
  const bool threw = sort_throws(data, config, less, what);
  const bool any_fired = count_throwers(fired) > 0;
  check.equal(count_throwers(threw), any_fired ? check.size() : 0, "PEs that threw jquick::Error");
  if (any_fired) {
    const char* where = fired ? "threw an exception on this PE (boom)" : "threw an exception on another PE";
    check.check(what.find(where) != std::string::npos, "error names the exception: ", what);
  } else {
    check.check(std::is_sorted(data.begin(), data.end()), "output not sorted without an exception");
  }
  check.check(multiset(data) == before, "elements lost or duplicated");
  const std::uint64_t n = before.first, p = static_cast<std::uint64_t>(check.size());
  const std::uint64_t r = static_cast<std::uint64_t>(check.rank());
  check.equal(static_cast<std::uint64_t>(data.size()), n / p + (r < n % p ? 1 : 0), "share size");
}

void run(Checker& check, const Options& options) {
  const int rank = check.rank(), p = check.size();
  for (jquick::Layer layer : options.layers) {
    for (std::int64_t n_per_pe : options.sizes) {
      for (bool one_pe_only : {false, true}) {
        Context c(check, "layer ", jquick::layer_name(layer), " n/p ", n_per_pe,
                  one_pe_only ? " (all on PE 0)" : "");
        auto label = [&](const char* what) {
          return std::string(jquick::layer_name(layer)) + " n/p " + std::to_string(n_per_pe) +
                 (one_pe_only ? " PE 0 only " : " ") + what;
        };
        const std::vector<std::int64_t> original =
            (one_pe_only && rank != 0) ? std::vector<std::int64_t>()
                                       : input(rank, n_per_pe, static_cast<std::uint64_t>(n_per_pe));
        jquick::Config config;
        config.layer = layer;
        if (options.wants("<=")) {
          Context c2(check, "<=");
          Timer timer(check, options.timing, label("<="));
          expect_error_everywhere(check, original, config,
                                  [](std::int64_t a, std::int64_t b) { return a <= b; }, true);
        }
        if (options.wants("always-true")) {
          Context c2(check, "always true");
          Timer timer(check, options.timing, label("always true"));
          expect_error_everywhere(check, original, config,
                                  [](std::int64_t, std::int64_t) { return true; }, true);
        }
        if (options.wants("coin-flips")) {
          Context c2(check, "coin flips");
          Timer timer(check, options.timing, label("coin flips"));
          std::mt19937_64 coin(static_cast<std::uint64_t>(rank) + 17);
          expect_error_everywhere(
              check, original, config,
              [&coin](std::int64_t, std::int64_t) { return (coin() & 1) != 0; }, true);
        }
        if (options.wants("reflexive") && p >= 3 && !one_pe_only && n_per_pe >= 40) {
          // comp(x, x) is true for odd values only; the input's checked positions
          // (c * m / 16) hold even values, so only the pivot samples can see it.
          Context c2(check, "reflexive off the checked positions");
          Timer timer(check, options.timing, label("reflexive off the checked positions"));
          std::vector<std::int64_t> sneaky = original;
          const std::size_t m = sneaky.size();
          for (std::size_t i = 0; i < m; ++i) sneaky[i] |= 1;
          for (std::size_t k = 0; k < 16; ++k) sneaky[k * m / 16] &= ~std::int64_t(1);
          expect_error_everywhere(
              check, sneaky, config,
              [](std::int64_t a, std::int64_t b) { return a < b || (a == b && (a & 1)); }, false);
          // A comparator that cannot throw skips the final agreement where the whole input is
          // one gathered base case: there the root's flag alone must reach every PE.
          expect_error_everywhere(
              check, sneaky, config,
              [](std::int64_t a, std::int64_t b) noexcept { return a < b || (a == b && (a & 1)); },
              false);
        }
        if (options.wants("irreflexive")) {
          Context c2(check, "irreflexive coin flips");
          Timer timer(check, options.timing, label("irreflexive coin flips"));
          std::mt19937_64 coin(static_cast<std::uint64_t>(rank) + 99);
          expect_consistent(check, timer, original, config, [&coin](std::int64_t a, std::int64_t b) {
            return a != b && (coin() & 1);
          });
        }
        if (options.wants("a!=b")) {
          // Every distinct pair is "less" both ways: the samples' order and hence the pivot are
          // arbitrary, and each partition puts the pivot's later elements first.
          Context c2(check, "a != b");
          Timer timer(check, options.timing, label("a != b"));
          expect_consistent(check, timer, original, config,
                            [](std::int64_t a, std::int64_t b) { return a != b; });
        }
        if (options.wants("throws")) {
          for (long after : {0L, 3L, 100L}) {
            Context c2(check, "throws on PE 0 after ", after, " calls");
            Timer timer(check, options.timing, label(("throws after " + std::to_string(after)).c_str()));
            expect_throw_everywhere(check, original, config, after);
          }
        }
        if (options.wants("less")) {
          Context c2(check, "verify with std::less");
          Timer timer(check, options.timing, label("verify with std::less"));
          std::vector<std::int64_t> data = original;
          jquick::Config verified = config;
          verified.verify = true;
          bool threw = false;
          jquick::Stats stats;
          try {
            stats = jquick::sort(data, MPI_INT64_T, MPI_COMM_WORLD, std::less<std::int64_t>(),
                                 verified);
          } catch (const jquick::Error&) {
            threw = true;
          }
          timer.record(threw ? nullptr : &stats);
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
                                  [&](Checker& check) { run(check, parse_options(argc, argv)); });
}
