// Hypercube quicksort on every input distribution and several n/p, on both communication
// layers. For each (distribution, n/p):
//  - the reference variant (the first of --variants) sorts 64-bit keys; rank 0 gathers input and
//    output and checks exactly that the output, concatenated in rank order, is sorted and is the
//    sorted input (so: globally sorted and a permutation);
//  - it sorts again with the same seed and must give the same local output;
//  - every other variant must give exactly the reference's local output (identical work);
//  - doubles, and records ordered by a custom descending comparator, get the same exact checks;
//  - ranks outside the power-of-two subcube end empty, and no PE holds more than twice its
//    share n/q (plus two); the actual max load / (n/q) is printed per distribution and n/p.
//
// Arguments: --sizes 0,1,7 --variants rbc,split,create-group --distributions all|name,...
//            --extra-types double,record|none --samples K --repeat 1|0
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "hypercube/hypercube.hpp"
#include "inputs/inputs.hpp"
#include "rbc/comm.hpp"
#include "testing/check.hpp"
#include "testing/gather.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

struct Config {
  std::vector<std::uint64_t> sizes = {0, 1, 7, 100, 1000};
  std::vector<std::string> variants = {"rbc", "split", "create-group"};
  std::vector<inputs::Distribution> distributions = inputs::all_distributions();
  std::uint64_t seed = 20181;
  int samples_per_pe = hypercube::Options().samples_per_pe;
  // Besides int64 (always): "double" and "record" (custom comparator on a struct).
  bool doubles = true;
  bool records = true;
  // Sort a second time with the same seed and compare.
  bool repeat = true;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

Config parse_args(int argc, char** argv) {
  Config config;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--sizes") {
      config.sizes.clear();
      for (const auto& s : split_list(value)) config.sizes.push_back(std::stoull(s));
    } else if (key == "--samples") {
      config.samples_per_pe = std::stoi(value);
    } else if (key == "--extra-types") {
      const auto types = split_list(value);
      config.doubles = std::find(types.begin(), types.end(), "double") != types.end();
      config.records = std::find(types.begin(), types.end(), "record") != types.end();
    } else if (key == "--repeat") {
      config.repeat = value != "0";
    } else if (key == "--variants") {
      config.variants = split_list(value);
    } else if (key == "--distributions") {
      if (value != "all") {
        config.distributions.clear();
        for (const auto& s : split_list(value)) {
          config.distributions.push_back(inputs::parse_distribution(s));
        }
      }
    } else {
      throw std::invalid_argument("hypercube_test: unknown argument " + key);
    }
  }
  return config;
}

// A record sorted by key only, descending: the payload says where it came from, so the exact
// multiset check also proves that no record was duplicated or lost among equal keys.
struct Record {
  std::uint32_t key;
  std::uint32_t origin_rank;
  std::uint64_t origin_index;
};

struct ByKeyDescending {
  bool operator()(const Record& a, const Record& b) const { return a.key > b.key; }
};

struct RecordFullOrder {
  bool operator()(const Record& a, const Record& b) const {
    if (a.key != b.key) return a.key < b.key;
    if (a.origin_rank != b.origin_rank) return a.origin_rank < b.origin_rank;
    return a.origin_index < b.origin_index;
  }
};

// The communicators a sort may run on, owned by main()'s body.
struct World {
  MPI_Comm mpi;
  rbc::RangeComm rbc;  // only set up if some variant needs it
  int rank;
  int p;
  int q;  // largest power of two <= p
};

template <class T, class Less>
void run_variant(const std::string& variant, std::vector<T>& data, Less less,
                 const hypercube::Options& options, const World& world,
                 hypercube::PhaseTimes* times = nullptr) {
  if (variant == "rbc") {
    hypercube::sort_rbc(data, world.rbc, options, less, times);
  } else {
    hypercube::sort_mpi(data, world.mpi, hypercube::parse_comm_creation(variant), options, less,
                        times);
  }
}

// Not a tag the sort uses.
constexpr int kGatherTag = 77;

template <class T, class Equal>
bool same_elements(const std::vector<T>& a, const std::vector<T>& b, Equal equal) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), equal);
}

// The exact checks on one sort's input and output. Returns the largest output count over all
// ranks at rank 0 (and 0 elsewhere).
template <class T, class Less, class FullLess>
long long check_sort(Checker& check, const World& world, const std::vector<T>& input,
                     const std::vector<T>& output, Less less, FullLess full_less) {
  const auto equal = [&](const T& a, const T& b) { return !full_less(a, b) && !full_less(b, a); };
  check.check(std::is_sorted(output.begin(), output.end(), less), "local output not sorted");
  if (world.rank >= world.q) {
    check.equal(output.size(), std::size_t{0}, "rank outside the power-of-two subcube holds data");
  }
  const long long count = static_cast<long long>(output.size());
  const auto counts = janus::testing::gather_at_root(std::vector<long long>{count}, world.mpi, kGatherTag);
  const auto all_in = janus::testing::gather_at_root(input, world.mpi, kGatherTag);
  const auto all_out = janus::testing::gather_at_root(output, world.mpi, kGatherTag);
  if (world.rank != 0) return 0;
  check.check(std::is_sorted(all_out.begin(), all_out.end(), less),
              "output concatenated in rank order is not sorted");
  auto sorted_in = all_in, sorted_out = all_out;
  std::sort(sorted_in.begin(), sorted_in.end(), full_less);
  std::sort(sorted_out.begin(), sorted_out.end(), full_less);
  check.check(same_elements(sorted_in, sorted_out, equal),
              "output is not a permutation of the input (", all_in.size(), " in, ",
              all_out.size(), " out)");
  return *std::max_element(counts.begin(), counts.end());
}

void run_case(Checker& check, const World& world, const Config& config,
              inputs::Distribution distribution, std::uint64_t n_per_pe, double& load_ratio) {
  inputs::Params params;
  params.seed = config.seed;
  params.rank = world.rank;
  params.p = world.p;
  params.n_per_pe = n_per_pe;
  hypercube::Options options;
  options.seed = config.seed + n_per_pe;
  options.samples_per_pe = config.samples_per_pe;
  const auto less = std::less<std::int64_t>();
  const auto& reference = config.variants.front();

  // 64-bit keys: the exact check on the reference, determinism, identical work on the others.
  const auto input = inputs::generate<std::int64_t>(distribution, params);
  auto output = input;
  hypercube::PhaseTimes times;
  {
    Context c(check, "variant ", reference, " int64");
    run_variant(reference, output, less, options, world, &times);
    const long long max_load = check_sort(check, world, input, output, less, less);
    if (world.rank == 0) {
      const double n = static_cast<double>(inputs::global_count(distribution, params));
      load_ratio = n > 0 ? max_load / (n / world.q) : 0;
      // Balance is approximate by design; this only rules out gross failures (a PE holding
      // twice its share plus two, e.g. everything stuck on one PE).
      const auto share = static_cast<long long>(std::ceil(n / world.q));
      check.check(max_load <= 2 * share + 2, "max load ", max_load,
                  " exceeds 2 * ceil(n/q) + 2 = ", 2 * share + 2);
    }
    check.equal(times.levels, world.rank < world.q ? __builtin_ctz(world.q) : 0, "levels");
    check.check(times.total >= 0 && times.exchange >= 0 && times.total >= times.exchange,
                "phase times");
    if (config.repeat) {
      auto again = input;
      run_variant(reference, again, less, options, world);
      check.check(again == output, "a second run with the same seed gave a different result");
    }
  }
  for (std::size_t v = 1; v < config.variants.size(); ++v) {
    Context c(check, "variant ", config.variants[v], " int64");
    auto other = input;
    run_variant(config.variants[v], other, less, options, world);
    check.check(other == output, "output differs from variant ", reference);
  }

  // Doubles (real keys for Uniform and Gaussian).
  if (config.doubles) {
    Context c(check, "variant ", reference, " double");
    const auto in = inputs::generate<double>(distribution, params);
    auto out = in;
    run_variant(reference, out, std::less<double>(), options, world);
    check_sort(check, world, in, out, std::less<double>(), std::less<double>());
  }

  // Records with a custom comparator, on the last variant.
  if (config.records) {
    const auto& variant = config.variants.back();
    Context c(check, "variant ", variant, " records by descending key");
    const auto keys = inputs::generate<std::uint64_t>(distribution, params);
    std::vector<Record> in;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      in.push_back({static_cast<std::uint32_t>(keys[k]), static_cast<std::uint32_t>(world.rank),
                    k});
    }
    auto out = in;
    run_variant(variant, out, ByKeyDescending(), options, world);
    check_sort(check, world, in, out, ByKeyDescending(), RecordFullOrder());
  }
}

void check_errors(Checker& check, const World& world, const Config& config) {
  std::vector<int> data = {3, 1, 2};
  hypercube::Options bad;
  bad.samples_per_pe = 0;
  for (const auto& variant : config.variants) {
    check.throws<std::invalid_argument>(
        [&] { run_variant(variant, data, std::less<int>(), bad, world); }, "samples_per_pe",
        "samples_per_pe = 0 on ", variant);
  }
  check.throws<std::invalid_argument>(
      [&] { hypercube::sort_mpi(data, MPI_COMM_NULL, hypercube::MpiCommCreation::kSplit); },
      "MPI_COMM_NULL", "null communicator");
  check.throws<std::invalid_argument>([] { hypercube::parse_comm_creation("splitt"); }, "splitt",
                                      "unknown creation name");
  check.equal(hypercube::name(hypercube::parse_comm_creation("create-group")),
              std::string("create-group"), "creation names round trip");
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "hypercube_test", [&](Checker& check) {
    const Config config = parse_args(argc, argv);
    World world{MPI_COMM_WORLD, {}, 0, 0, 1};
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.p);
    while (world.q <= world.p / 2) world.q *= 2;
    if (std::find(config.variants.begin(), config.variants.end(), "rbc") !=
        config.variants.end()) {
      world.rbc = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    }
    check_errors(check, world, config);
    for (auto distribution : config.distributions) {
      std::string ratios;
      for (auto n_per_pe : config.sizes) {
        Context c(check, inputs::name(distribution), " n/p=", n_per_pe);
        double load_ratio = 0;
        run_case(check, world, config, distribution, n_per_pe, load_ratio);
        char text[64];
        std::snprintf(text, sizeof text, " %llu:%.2f", static_cast<unsigned long long>(n_per_pe),
                      load_ratio);
        ratios += text;
      }
      if (world.rank == 0) {
        std::printf("hypercube_test p=%d %-24s max load / (n/q) by n/p:%s\n", world.p,
                    inputs::name(distribution).c_str(), ratios.c_str());
      }
    }
  });
}
