// JQuick on both backends: for every distribution, size and layer the output must be globally
// sorted, an exact permutation of the input (checked byte for byte at rank 0), exactly balanced,
// and bit-identical for the same seed: on a repeated run and across the three layers.
//
// Options: --sizes=a,b,..  --layers=rbc,mpi_create_group,mpi_split[/cascaded|/alternating],..
//          (rbc:probe = RBC layer with probe-based receives)  --distributions=name,..  --seed=S  --no-special  --no-repeat  --verbose
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "inputs/inputs.hpp"
#include "jquick/jquick.hpp"
#include "rbc/rbc.hpp"
#include "testing/check.hpp"
#include "testing/gather.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

struct Item {
  std::uint64_t key;
  std::uint32_t payload;
  std::uint32_t origin;
};

struct ItemLess {
  bool operator()(const Item& a, const Item& b) const { return a.key < b.key; }
};

struct LayerChoice {
  jquick::Layer layer;
  jquick::Schedule schedule;
  jquick::Wildcard wildcard;
  std::string name;
};

struct Options {
  std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 7, 64, 1000, 10000};
  std::vector<LayerChoice> layers;
  std::vector<inputs::Distribution> distributions = inputs::all_distributions();
  std::uint64_t seed = 42;
  bool special = true;
  bool repeat = true;
  bool verbose = false;
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

// "rbc", "rbc:probe", "mpi_create_group/cascaded", "mpi_split/alternating", ...
LayerChoice parse_layer_choice(const std::string& text) {
  LayerChoice choice{jquick::Layer::rbc, jquick::Schedule::alternating, jquick::Wildcard::posted,
                     text};
  const auto slash = text.find('/');
  std::string layer = text.substr(0, slash);
  const auto colon = layer.find(':');
  if (colon != std::string::npos) {
    if (layer.substr(colon + 1) != "probe") throw std::invalid_argument("unknown layer " + text);
    choice.wildcard = jquick::Wildcard::probe;
    layer = layer.substr(0, colon);
  }
  choice.layer = jquick::parse_layer(layer);
  if (slash != std::string::npos) choice.schedule = jquick::parse_schedule(text.substr(slash + 1));
  return choice;
}

Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string> layers = {"rbc", "rbc:probe", "mpi_create_group/alternating",
                                     "mpi_split/cascaded"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* prefix) -> const char* {
      const std::size_t length = std::strlen(prefix);
      return arg.compare(0, length, prefix) == 0 ? arg.c_str() + length : nullptr;
    };
    if (const char* v = value("--sizes=")) {
      options.sizes.clear();
      for (const std::string& s : split_list(v)) options.sizes.push_back(std::stoull(s));
    } else if (const char* v = value("--layers=")) {
      layers = split_list(v);
    } else if (const char* v = value("--distributions=")) {
      options.distributions.clear();
      for (const std::string& s : split_list(v)) {
        options.distributions.push_back(inputs::parse_distribution(s));
      }
    } else if (const char* v = value("--seed=")) {
      options.seed = std::stoull(v);
    } else if (arg == "--no-special") {
      options.special = false;
    } else if (arg == "--no-repeat") {
      options.repeat = false;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  for (const std::string& l : layers) options.layers.push_back(parse_layer_choice(l));
  return options;
}

template <class T>
bool bytes_less(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) < 0;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// `keys` with every third one replaced by -0.0 or +0.0 (alternating, offset by the rank):
// equivalent keys whose bytes differ.
std::vector<double> with_signed_zeros(std::vector<double> keys, int rank) {
  for (std::size_t i = 0; i < keys.size(); i += 3) {
    keys[i] = (i / 3 + static_cast<std::size_t>(rank)) % 2 ? -0.0 : 0.0;
  }
  return keys;
}

// Tag of the test's own gathers, sent after the sort has returned.
constexpr int kGatherTag = 77;

// How many elements all ranks of `comm` hold together.
template <class T>
long long total_size(const std::vector<T>& data, MPI_Comm comm) {
  long long local = static_cast<long long>(data.size()), n = 0;
  MPI_Allreduce(&local, &n, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return n;
}

// The full check of one sort: balance (every rank), local order (every rank), global order
// across rank boundaries and exact multiset equality (rank 0, byte for byte).
template <class T, class Less>
void verify(Checker& check, const std::vector<T>& input, const std::vector<T>& output, Less less,
            MPI_Comm comm) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const long long n = total_size(input, comm);
  const long long expected = n / p + (rank < n % p ? 1 : 0);
  check.equal(static_cast<long long>(output.size()), expected, "local output size (balance)");
  check.check(std::is_sorted(output.begin(), output.end(), less), "local output is not sorted");

  std::vector<T> all_in = janus::testing::gather_at_root(input, comm, kGatherTag);
  std::vector<T> all_out = janus::testing::gather_at_root(output, comm, kGatherTag);
  if (rank == 0) {
    const auto unsorted = std::is_sorted_until(all_out.begin(), all_out.end(), less);
    check.check(unsorted == all_out.end(), "concatenated output unsorted at global index ",
                unsorted - all_out.begin());
    std::sort(all_in.begin(), all_in.end(), bytes_less<T>);
    std::sort(all_out.begin(), all_out.end(), bytes_less<T>);
    check.check(same_bytes(all_in, all_out), "output is not a permutation of the input (",
                all_in.size(), " elements in, ", all_out.size(), " out)");
  }
}

// Item's MPI datatype, freed when it goes.
class ItemType {
 public:
  ItemType() {
    MPI_Type_contiguous(sizeof(Item), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~ItemType() { MPI_Type_free(&type_); }
  ItemType(const ItemType&) = delete;
  ItemType& operator=(const ItemType&) = delete;
  operator MPI_Datatype() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

std::vector<Item> items_from(const std::vector<std::uint64_t>& keys, int rank) {
  std::vector<Item> items;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    // Coarse keys: many equal keys whose payloads differ, so the order among equals shows.
    items.push_back(Item{keys[i] >> 26, static_cast<std::uint32_t>(keys[i]),
                         static_cast<std::uint32_t>(rank)});
  }
  return items;
}

jquick::Config config_for(const LayerChoice& choice, std::uint64_t seed) {
  jquick::Config config;
  config.seed = seed;
  config.layer = choice.layer;
  config.schedule = choice.schedule;
  config.wildcard = choice.wildcard;
  return config;
}

struct Totals {
  double sort_time = 0;  // sum over cases of the slowest rank's time
  int max_levels = 0;
  int cases = 0;
};

// How many times gather_elements a whole input allgathered may hold.
constexpr long long kWholeFactor = 2;

// Whether the ranks of `comm` lie on exactly two nodes (processor names) of p/2 consecutive
// ranks each, p/2 a power of two >= 2: there the RBC layer merges a whole input of up to
// kWholeFactor x gather_elements per node and swaps it between the nodes in slices.
bool on_two_nodes(MPI_Comm comm) {
  int p = 0, rank = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  const auto of = [&](int r) { return std::string(names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME); };
  const int half = p / 2;
  if (p < 4 || p % 2 != 0 || (half & (half - 1)) != 0 || of(0) == of(half)) return false;
  for (int r = 0; r < p; ++r) {
    if (of(r) != of(r < half ? 0 : half)) return false;
  }
  return true;
}

// Where the ranks of `comm` lie: all on one node, or on exactly two (on_two_nodes); how many
// consecutive ranks share a node (rbc::RangeComm::node_members) and on how many nodes they lie.
struct Nodes {
  bool one = false;
  bool two = false;
  int members = 1;
  int count = 1;
};

Nodes nodes_of(MPI_Comm comm) {
  const rbc::RangeComm all = rbc::RangeComm::from_mpi(comm);
  const int members = all.node_members();
  return {all.on_one_node(), on_two_nodes(comm), members, (all.size() + members - 1) / members};
}

// The RBC layer sorts a whole input of an exact order of up to this many elements per PE on one
// node by samples (no distributed level).
constexpr long long kSampleSortPerPe = 1 << 18;

// Whether `choice` sorts a whole input of n elements of an exact order without a distributed
// level although n is above `limit` (gather_elements): the RBC layer on >= 3 PEs, by samples
// on one node, merged per node on two nodes up to kWholeFactor x limit.
bool levels_free(const LayerChoice& choice, long long n, int p, Nodes nodes,
                 long long limit = jquick::Config().gather_elements) {
  if (choice.layer != jquick::Layer::rbc || p < 3 || n <= limit) return false;
  return (nodes.one && n <= kSampleSortPerPe * p) || (nodes.two && n <= kWholeFactor * limit);
}

// Whether `choice` sorts that whole input by samples (on one node; levels_free).
bool sorts_by_samples(const LayerChoice& choice, long long n, int p, Nodes nodes,
                      long long limit = jquick::Config().gather_elements) {
  return nodes.one && levels_free(choice, n, p, nodes, limit);
}

// Whole inputs for the paths that skip the recursion: uniform, all on one PE, on the first half,
// uneven, one key, and many duplicates.
constexpr inputs::Distribution kWholeInputs[] = {
    inputs::Distribution::kUniform, inputs::Distribution::kOnePE,  inputs::Distribution::kFirstHalf,
    inputs::Distribution::kUneven,  inputs::Distribution::kZero,   inputs::Distribution::kRandomizedDuplicates};

// The RBC layer splits a whole input of an exact order between 2 to this many nodes first; on
// two nodes only with >= 3 PEs on the second and, where both are the same size, up to
// kNodeSplitTwoNodesPerPe elements per PE.
constexpr int kNodeSplitMaxNodes = 8;
constexpr long long kNodeSplitTwoNodesPerPe = 2048;

// Whether p ranks laid out as `nodes` allow the split at all.
bool nodes_split(int p, Nodes nodes) {
  if (p < 3 || nodes.one || nodes.members < 2 || nodes.count > kNodeSplitMaxNodes) return false;
  return nodes.count > 2 || p - nodes.members >= 3;
}

// Whether `choice` splits a whole input of n elements of an exact order between the nodes first
// (each node then sorts its part alone): the RBC layer on >= 3 PEs on 2 to kNodeSplitMaxNodes
// nodes of >= 2 ranks each, beyond what the base cases take.
bool splits_by_nodes(const LayerChoice& choice, long long n, int p, Nodes nodes,
                     long long limit = jquick::Config().gather_elements) {
  if (choice.layer != jquick::Layer::rbc || n <= limit || !nodes_split(p, nodes)) return false;
  if (nodes.count == 2 && p == 2 * nodes.members && n > kNodeSplitTwoNodesPerPe * p) return false;
  return !(nodes.two && n <= kWholeFactor * limit);
}

void run_grid(Checker& check, const Options& options, std::vector<Totals>& totals) {
  const int rank = check.rank(), p = check.size();
  const Nodes nodes = nodes_of(MPI_COMM_WORLD);
  for (inputs::Distribution distribution : options.distributions) {
    for (std::uint64_t size : options.sizes) {
      inputs::Params params;
      params.seed = options.seed;
      params.rank = rank;
      params.p = p;
      params.n_per_pe = size;
      Context c(check, inputs::name(distribution), " n/p=", size);
      const std::vector<double> input = inputs::generate<double>(distribution, params);
      const long long n = total_size(input, MPI_COMM_WORLD);
      std::vector<double> reference;
      // Per layer family: the RBC layer gathers a child as one base case only up to 1024
      // elements per member (Sorter::child_is_small), the MPI layers up to gather_elements (a
      // level costs them communicators), so where the recursion runs the two may take different
      // numbers of levels; within a family they may not.
      int reference_levels[2] = {-1, -1};
      for (std::size_t l = 0; l < options.layers.size(); ++l) {
        const LayerChoice& choice = options.layers[l];
        Context cl(check, choice.name);
        const jquick::Config config = config_for(choice, options.seed);
        std::vector<double> data = input;
        const jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD,
                                                 std::less<double>(), config);
        verify(check, input, data, std::less<double>(), MPI_COMM_WORLD);
        const double phases = stats.pivot_selection + stats.partition +
                              stats.exchange_calculation + stats.exchange +
                              stats.communicator_creation + stats.base_cases;
        check.check(phases >= 0 && phases <= stats.total * (1 + 1e-9) + 1e-9,
                    "phase times ", phases, " exceed the total ", stats.total);
        if (l == 0) {
          reference = data;
        } else {
          check.check(same_bytes(reference, data), "output differs from layer ",
                      options.layers[0].name, " (same seed)");
        }
        int sampled = 0;
        MPI_Allreduce(&stats.sample_sorts, &sampled, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!splits_by_nodes(choice, n, p, nodes)) {  // else a node's own sort may
          check.equal(sampled, sorts_by_samples(choice, n, p, nodes) ? 1 : 0,
                      "PEs that sorted the whole input by samples");
        }
        int split = 0;
        MPI_Allreduce(&stats.node_splits, &split, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        check.equal(split, splits_by_nodes(choice, n, p, nodes) ? 1 : 0,
                    "PEs that split the whole input between nodes");
        if (levels_free(choice, n, p, nodes)) {
          check.equal(stats.levels, 0, "recursion levels of a whole input sorted without levels");
        } else if (splits_by_nodes(choice, n, p, nodes)) {
          // Levels of the nodes' own sorts, not the whole's.
        } else if (int& same = reference_levels[choice.layer == jquick::Layer::rbc ? 0 : 1]; same < 0) {
          same = stats.levels;
        } else {
          check.equal(stats.levels, same, "recursion levels differ across layers of one family");
        }
        if (options.repeat && l == 0) {
          std::vector<double> again = input;
          jquick::sort(again, MPI_DOUBLE, MPI_COMM_WORLD, std::less<double>(), config);
          check.check(same_bytes(data, again), "a second run with the same seed differs");
        }
        double slowest = 0;
        int levels = 0;
        MPI_Reduce(&stats.total, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&stats.levels, &levels, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          totals[l].sort_time += slowest;
          totals[l].max_levels = std::max(totals[l].max_levels, levels);
          ++totals[l].cases;
          if (options.verbose) {
            std::printf("  %-24s n/p=%-6llu %-30s %10.6f s  levels %d\n",
                        inputs::name(distribution).c_str(),
                        static_cast<unsigned long long>(size), choice.name.c_str(), slowest,
                        levels);
          }
        }
      }
    }
  }
}

void run_special(Checker& check, const Options& options) {
  const int rank = check.rank(), p = check.size();
  const MPI_Comm world = MPI_COMM_WORLD;
  const Nodes nodes = nodes_of(world);  // where the ranks lie, for the sections below
  inputs::Params params;
  params.seed = options.seed;
  params.rank = rank;
  params.p = p;
  params.n_per_pe = 300;
  const std::vector<double> uniform = inputs::generate<double>(inputs::Distribution::kUniform, params);

  {
    Context c(check, "datatype mismatch");
    std::vector<double> data = uniform;
    check.throws<jquick::Error>(
        [&] { jquick::sort(data, MPI_INT, world); }, "MPI_Type_size is 4",
        "double elements described as MPI_INT");
    check.check(same_bytes(data, uniform), "a rejected sort touched the data");
    MPI_Datatype padded;
    MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &padded);
    MPI_Type_commit(&padded);
    check.throws<jquick::Error>([&] { jquick::sort(data, padded, world); }, "extent 16",
                                "a datatype with extent != sizeof(T)");
    MPI_Type_free(&padded);
  }
  {
    Context c(check, "NaN with std::less");
    std::vector<double> data = uniform;
    if (rank == p - 1) data.push_back(std::numeric_limits<double>::quiet_NaN());
    for (const LayerChoice& choice : options.layers) {
      std::vector<double> copy = data;
      check.throws<jquick::Error>(
          [&] { jquick::sort(copy, MPI_DOUBLE, world, std::less<double>(), config_for(choice, 1)); },
          "1 NaN keys", choice.name);
    }
  }
  {
    Context c(check, "NaN with NanLastLess");
    std::vector<double> data = uniform;
    if (rank % 2 == 0) data.insert(data.begin() + rank % 7, std::numeric_limits<double>::quiet_NaN());
    if (rank == 0) data.push_back(-std::numeric_limits<double>::quiet_NaN());
    std::vector<double> out = data;
    jquick::sort(out, MPI_DOUBLE, world, jquick::NanLastLess<double>());
    verify(check, data, out, jquick::NanLastLess<double>(), world);
    long long nans_in = 0, local = 0;
    for (double x : data) local += std::isnan(x) ? 1 : 0;
    MPI_Allreduce(&local, &nans_in, 1, MPI_LONG_LONG, MPI_SUM, world);
    // The NaNs must be the last nans_in elements overall.
    long long before = 0, mine = static_cast<long long>(out.size()), n = 0;
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, world);
    if (rank == 0) before = 0;
    MPI_Allreduce(&mine, &n, 1, MPI_LONG_LONG, MPI_SUM, world);
    for (long long i = 0; i < mine; ++i) {
      const bool should_be_nan = before + i >= n - nans_in;
      if (std::isnan(out[static_cast<std::size_t>(i)]) != should_be_nan) {
        check.fail("element ", before + i, " of ", n, ": NaN placement wrong");
        break;
      }
    }
  }
  {
    Context c(check, "index base beyond 2^32");
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      std::vector<double> plain = uniform, shifted = uniform;
      jquick::Config config = config_for(choice, 7);
      const jquick::Stats a = jquick::sort(plain, MPI_DOUBLE, world, std::less<double>(), config);
      config.index_base = (std::int64_t{3} << 40) + 12345;
      const jquick::Stats b = jquick::sort(shifted, MPI_DOUBLE, world, std::less<double>(), config);
      verify(check, uniform, shifted, std::less<double>(), world);
      check.check(same_bytes(plain, shifted), "a shifted index base changed the result");
      check.equal(b.levels, a.levels, "levels with shifted index base");
    }
  }
  {
    Context c(check, "struct keys with equal keys");
    params.n_per_pe = 500;
    const std::vector<Item> items = items_from(
        inputs::generate<std::uint64_t>(inputs::Distribution::kRandomizedDuplicates, params), rank);
    params.n_per_pe = 300;
    const ItemType item_type;
    std::vector<Item> reference;
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      std::vector<Item> data = items;
      jquick::sort(data, item_type, world, ItemLess(), config_for(choice, 11));
      verify(check, items, data, ItemLess(), world);
      if (reference.empty() && !data.empty()) {
        reference = data;
      } else {
        check.check(same_bytes(reference, data), "payload order differs across layers");
      }
    }
  }
  {
    Context c(check, "int64 descending");
    const std::vector<std::int64_t> keys =
        inputs::generate<std::int64_t>(inputs::Distribution::kFewDistinct, params);
    std::vector<std::int64_t> data = keys;
    jquick::sort(data, MPI_INT64_T, world, std::greater<std::int64_t>());
    verify(check, keys, data, std::greater<std::int64_t>(), world);
  }
  {
    Context c(check, "everything on the last PE");
    std::vector<double> data;
    if (rank == p - 1) {
      for (int i = 0; i < 997; ++i) data.push_back(static_cast<double>((i * 7919) % 1000));
    }
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      std::vector<double> out = data;
      jquick::sort(out, MPI_DOUBLE, world, std::less<double>(), config_for(choice, 3));
      verify(check, data, out, std::less<double>(), world);
    }
  }
  {
    // One sample per level: the pivot is often a group's largest element, so levels are
    // repeated (the degenerate-split path) and recursions are deep.
    Context c(check, "single-sample pivots");
    int retries = 0;
    for (inputs::Distribution distribution :
         {inputs::Distribution::kUniform, inputs::Distribution::kZero,
          inputs::Distribution::kFewDistinct, inputs::Distribution::kSorted}) {
      for (std::uint64_t size : {3, 40}) {
        Context cd(check, inputs::name(distribution), " n/p=", size);
        inputs::Params small = params;
        small.n_per_pe = size;
        const std::vector<double> input = inputs::generate<double>(distribution, small);
        std::vector<double> reference;
        for (const LayerChoice& choice : options.layers) {
          jquick::Config config = config_for(choice, 9);
          config.k1 = 0;
          config.k2 = 0;
          config.k3 = 1;
          std::vector<double> data = input;
          const jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, world, std::less<double>(), config);
          verify(check, input, data, std::less<double>(), world);
          if (reference.empty()) reference = data;
          check.check(same_bytes(reference, data), choice.name, " differs");
          retries += stats.retries;
        }
      }
    }
    int total_retries = 0;
    MPI_Reduce(&retries, &total_retries, 1, MPI_INT, MPI_SUM, 0, world);
    if (rank == 0) std::printf("[jquick_test] single-sample pivots: %d repeated levels\n", total_retries);
  }
  if (p >= 6) {
    // Children on >= 3 PEs take their pivot from the parent's samples (no sampling round).
    // With all keys equal the inherited pivot must still split: its index lies in the child's
    // interval, so no level is repeated. std::greater on doubles is no exact order, so the
    // input recurses wherever the ranks lie.
    Context c(check, "inherited pivots");
    for (inputs::Distribution distribution :
         {inputs::Distribution::kUniform, inputs::Distribution::kZero}) {
      Context cd(check, inputs::name(distribution));
      inputs::Params large = params;
      large.n_per_pe = 2100;
      const std::vector<double> input = inputs::generate<double>(distribution, large);
      for (const LayerChoice& choice : options.layers) {
        Context cl(check, choice.name);
        std::vector<double> data = input;
        const jquick::Stats stats =
            jquick::sort(data, MPI_DOUBLE, world, std::greater<double>(), config_for(choice, 13));
        verify(check, input, data, std::greater<double>(), world);
        int inherited = 0, retries = 0;
        MPI_Allreduce(&stats.inherited_pivots, &inherited, 1, MPI_INT, MPI_MAX, world);
        MPI_Allreduce(&stats.retries, &retries, 1, MPI_INT, MPI_MAX, world);
        check.check(inherited > 0, "no level took its pivot from its parent's samples");
        check.equal(retries, 0, "repeated levels");
      }
    }
  }
  {
    // On two nodes (and only there) the RBC layer merges a whole input of an exact order per
    // node and swaps the runs in slices; inputs that leave a node with nothing, or all of it,
    // and equivalent keys that differ (signed zeros) must come out a sorted permutation, the
    // same in a second run.
    Context c(check, "whole input on two nodes");
    int merged = 0;
    for (inputs::Distribution distribution : {inputs::Distribution::kUniform, inputs::Distribution::kOnePE, inputs::Distribution::kFirstHalf,
                                              inputs::Distribution::kUneven}) {
      Context cd(check, inputs::name(distribution));
      inputs::Params some = params;
      some.n_per_pe = 700;
      const std::vector<double> input = with_signed_zeros(inputs::generate<double>(distribution, some), rank);
      for (const LayerChoice& choice : options.layers) {
        Context cl(check, choice.name);
        std::vector<double> a = input, b = input;
        const jquick::Stats stats = jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config_for(choice, 41));
        jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), config_for(choice, 41));
        verify(check, input, a, std::less<double>(), world);
        check.check(same_bytes(a, b), "a second run differs");
        int most = 0;
        MPI_Allreduce(&stats.two_node_merges, &most, 1, MPI_INT, MPI_MAX, world);
        if (choice.layer != jquick::Layer::rbc || !nodes.two) check.equal(most, 0, "whole inputs merged on two nodes");
        merged += most;
      }
    }
    if (nodes.two) check.check(merged > 0, "no whole input was merged on two nodes");
  }
  if (p >= 3) {
    // On one node the RBC layer sorts a whole input of an exact order past gather_elements by
    // samples: buckets by splitters, then each PE's exact share from the buckets. Inputs that
    // leave PEs empty or hold one key (one bucket takes it all), and equivalent keys that differ
    // (signed zeros), must come out a sorted permutation, the same in a second run and with
    // global indices shifted past 2^32; past kSampleSortPerPe elements per PE the input
    // recurses.
    Context c(check, "whole input sorted by samples");
    int sampled = 0;
    for (inputs::Distribution distribution : kWholeInputs) {
      Context cd(check, inputs::name(distribution));
      inputs::Params some = params;
      some.n_per_pe = 700;
      const std::vector<double> input = with_signed_zeros(inputs::generate<double>(distribution, some), rank);
      const long long n = total_size(input, world);
      for (const LayerChoice& choice : options.layers) {
        Context cl(check, choice.name);
        jquick::Config config = config_for(choice, 43);
        config.gather_elements = 100;
        std::vector<double> a = input, b = input;
        const jquick::Stats stats = jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config);
        jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), config);
        verify(check, input, a, std::less<double>(), world);
        check.check(same_bytes(a, b), "a second run differs");
        std::vector<double> shifted = input;
        config.index_base = (std::int64_t{3} << 40) + 12345;
        jquick::sort(shifted, MPI_DOUBLE, world, std::less<double>(), config);
        check.check(same_bytes(a, shifted), "a shifted index base changed the result");
        int most[2] = {0, 0}, counts[2] = {stats.sample_sorts, stats.levels};
        MPI_Allreduce(counts, most, 2, MPI_INT, MPI_MAX, world);
        const bool expected = sorts_by_samples(choice, n, p, nodes, config.gather_elements);
        if (!splits_by_nodes(choice, n, p, nodes, config.gather_elements)) {
          check.equal(most[0], expected ? 1 : 0, "whole inputs sorted by samples");
        }
        if (expected) check.equal(most[1], 0, "recursion levels of a sort by samples");
        sampled += most[0];
      }
    }
    if (p <= 8) {  // kSampleSortPerPe + 1 elements per PE: kept to a few million in all
      Context cd(check, "past kSampleSortPerPe");
      inputs::Params large = params;
      large.n_per_pe = kSampleSortPerPe + 1;
      const std::vector<double> input = inputs::generate<double>(inputs::Distribution::kUniform, large);
      std::vector<double> data = input;
      const jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, world);
      verify(check, input, data, std::less<double>(), world);
      int most = 0;
      MPI_Allreduce(&stats.sample_sorts, &most, 1, MPI_INT, MPI_MAX, world);
      const long long n = static_cast<long long>(large.n_per_pe) * p;
      if (!splits_by_nodes(parse_layer_choice("rbc"), n, p, nodes)) check.equal(most, 0, "whole inputs sorted by samples");
    }
    if (nodes.one) check.check(sampled > 0, "no whole input was sorted by samples");
  }
  if (p >= 3) {
    // On 2 to 8 nodes the RBC layer splits a whole input of an exact order between the nodes
    // first: splitters from samples, each node's part sent there, each node's own sort, and its
    // result moved into the PEs' exact shares. Inputs that leave PEs or whole nodes empty or hold
    // one key (the splitters' ties go by global index), equivalent keys that differ (signed
    // zeros) and integers in descending order must come out a sorted permutation, the same in a
    // second run and with global indices shifted past 2^32; verify must pass.
    Context c(check, "whole input split between nodes");
    int split = 0;
    for (inputs::Distribution distribution : kWholeInputs) {
      Context cd(check, inputs::name(distribution));
      // 20000: parts of more than one message (kPieceMessage), which nodes of 3 or more PEs
      // sort as they arrive.
      for (const long long per_pe : {300LL, 1500LL, 3000LL, 20000LL}) {
        Context cn(check, "n/p=", per_pe);
        inputs::Params some = params;
        some.n_per_pe = static_cast<std::uint64_t>(per_pe);
        const std::vector<double> input = with_signed_zeros(inputs::generate<double>(distribution, some), rank);
        const long long n = total_size(input, world);
        for (const LayerChoice& choice : options.layers) {
          Context cl(check, choice.name);
          jquick::Config config = config_for(choice, 47);
          config.gather_elements = 100;
          std::vector<double> a = input, b = input;
          const jquick::Stats stats = jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config);
          config.verify = true;
          jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), config);
          verify(check, input, a, std::less<double>(), world);
          check.check(same_bytes(a, b), "a second run (with verify) differs");
          std::vector<double> shifted = input;
          config.index_base = (std::int64_t{5} << 40) + 777;
          jquick::sort(shifted, MPI_DOUBLE, world, std::less<double>(), config);
          check.check(same_bytes(a, shifted), "a shifted index base changed the result");
          int least = 0, most = 0;
          MPI_Allreduce(&stats.node_splits, &least, 1, MPI_INT, MPI_MIN, world);
          MPI_Allreduce(&stats.node_splits, &most, 1, MPI_INT, MPI_MAX, world);
          const int expected = splits_by_nodes(choice, n, p, nodes, 100) ? 1 : 0;
          check.equal(least, expected, "whole inputs split between nodes (fewest PEs)");
          check.equal(most, expected, "whole inputs split between nodes (most PEs)");
          split += most;
        }
        if (distribution == inputs::Distribution::kUniform) {
          Context ci(check, "long long, std::greater");
          const std::vector<std::uint64_t> raw = inputs::generate<std::uint64_t>(distribution, some);
          std::vector<long long> keys(raw.size());
          for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<long long>(raw[i] % 97);
          jquick::Config config;
          config.gather_elements = 100;
          std::vector<long long> data = keys;
          jquick::sort(data, MPI_LONG_LONG, world, std::greater<long long>(), config);
          verify(check, keys, data, std::greater<long long>(), world);
        }
      }
    }
    {
      // Without base cases (gather_elements = 0) even a few elements per PE are split: most
      // samples repeat, and nodes may get no elements at all.
      Context cz(check, "gather_elements=0");
      for (const std::uint64_t per_pe : {1u, 7u}) {
        Context cn(check, "n/p=", per_pe);
        inputs::Params some = params;
        some.n_per_pe = per_pe;
        const std::vector<double> input = inputs::generate<double>(inputs::Distribution::kUniform, some);
        const long long n = total_size(input, world);
        jquick::Config config;
        config.gather_elements = 0;
        std::vector<double> data = input;
        const jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, world, std::less<double>(), config);
        verify(check, input, data, std::less<double>(), world);
        int least = 0;
        MPI_Allreduce(&stats.node_splits, &least, 1, MPI_INT, MPI_MIN, world);
        check.equal(least, splits_by_nodes(parse_layer_choice("rbc"), n, p, nodes, 0) ? 1 : 0,
                    "whole inputs split between nodes");
        split += least;
      }
    }
    if (nodes_split(p, nodes)) check.check(split > 0, "no whole input was split between nodes");
    // The same on a range of the world that starts on the second node and spans two or more:
    // its data travel on an MPI communicator of its own members, the nodes' sorts on it too.
    const int from = nodes.members;
    const Nodes tail_nodes{false, false, nodes.members, (p - from + nodes.members - 1) / nodes.members};
    if (!nodes.one && tail_nodes.count >= 2 && nodes_split(p - from, tail_nodes)) {
      Context cr(check, "on the ranks from the second node");
      const rbc::RangeComm tail = rbc::RangeComm::from_mpi(world).split(from, p - 1);
      MPI_Comm members;
      MPI_Comm_split(world, rank >= from ? 0 : MPI_UNDEFINED, rank, &members);
      if (rank >= from) {
        inputs::Params some = params;
        some.rank = rank - from;
        some.p = p - from;
        some.n_per_pe = 500;
        const std::vector<double> input = with_signed_zeros(inputs::generate<double>(inputs::Distribution::kUniform, some), rank);
        jquick::Config config;
        config.gather_elements = 100;
        std::vector<double> data = input;
        const jquick::Stats stats = jquick::sort(data, MPI_DOUBLE, tail, std::less<double>(), config);
        verify(check, input, data, std::less<double>(), members);
        int least = 0;
        MPI_Allreduce(&stats.node_splits, &least, 1, MPI_INT, MPI_MIN, members);
        check.equal(least, 1, "whole inputs split between nodes on the range");
        MPI_Comm_free(&members);
      }
    }
  }
  if (p >= 5) {
    // On RBC a gathered base case of an exact order on >= 3 PEs gathers to two roots, which
    // swap their runs and each merge the share of its part. Its output must be a sorted
    // permutation, signed zeros included (equivalent keys that differ), the same in a second
    // run, and some of these limits must take that path where the PEs span nodes (on one node
    // the whole input is sorted by samples instead).
    Context c(check, "gathered base case cut between two roots");
    inputs::Params some = params;
    some.n_per_pe = 200;
    const std::vector<double> input =
        with_signed_zeros(inputs::generate<double>(inputs::Distribution::kUniform, some), rank);
    const std::int64_t n = 200 * static_cast<std::int64_t>(p);
    int cut = 0;
    bool rbc_layer = false;  // an RBC sort recursed across nodes
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      for (const std::int64_t limit : {n / 2 - 1, n / 3, n / 4 - 1, n / 5, n / 6, n / 8, n / 12}) {
        Context cg(check, "gather_elements=", limit);
        for (const std::uint64_t seed : {31, 32}) {
          jquick::Config config = config_for(choice, seed);
          config.gather_elements = limit;
          std::vector<double> a = input, b = input;
          const jquick::Stats stats = jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config);
          jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), config);
          verify(check, input, a, std::less<double>(), world);
          check.check(same_bytes(a, b), "a second run differs");
          if (choice.layer != jquick::Layer::rbc) continue;
          // Split between the nodes first, no group spans two nodes.
          if (!splits_by_nodes(choice, n, p, nodes, limit)) rbc_layer = true;
          int most = 0;
          MPI_Allreduce(&stats.split_gathers, &most, 1, MPI_INT, MPI_MAX, world);
          cut += most;
        }
      }
    }
    if (rbc_layer && !nodes.one) check.check(cut > 0, "no gathered base case was cut between two roots");
    if (nodes.one) check.equal(cut, 0, "gathered base cases cut between two roots on one node");
  }
  if (p >= 5) {
    // Every child is small enough to gather by count (gather_elements = n - 1), but each holds
    // about 2000 elements per member, above the RBC layer's 1024 per member gathered: there a
    // child of >= 3 members takes a further level; the MPI layer gathers it (one level).
    Context c(check, "at most 1024 elements per member gathered");
    inputs::Params many = params;
    many.n_per_pe = 2000;
    const std::vector<Item> items =
        items_from(inputs::generate<std::uint64_t>(inputs::Distribution::kUniform, many), rank);
    const ItemType item_type;
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      jquick::Config config = config_for(choice, 33);
      config.gather_elements = 2000 * static_cast<std::int64_t>(p) - 1;
      std::vector<Item> x = items;
      const jquick::Stats stats = jquick::sort(x, item_type, world, ItemLess(), config);
      verify(check, items, x, ItemLess(), world);
      int most = 0;
      MPI_Allreduce(&stats.levels, &most, 1, MPI_INT, MPI_MAX, world);
      if (choice.layer == jquick::Layer::rbc) {
        check.check(most >= 2, "a child of more than 1024 elements per member was gathered");
      } else {
        check.equal(most, 1, "levels where every child is gathered");
      }
    }
  }
  {
    // A gathered base case sends keys only and merges the members' runs stably in rank order:
    // equivalent keys that differ (-0.0 and +0.0; equal keys with different payloads) must
    // still come out sorted, as a permutation, and the same in a second run.
    Context c(check, "gathered base case with equivalent keys");
    const std::vector<double> zeros = with_signed_zeros(uniform, rank);
    inputs::Params dup = params;
    dup.n_per_pe = 200;
    const std::vector<Item> items =
        items_from(inputs::generate<std::uint64_t>(inputs::Distribution::kRandomizedDuplicates, dup), rank);
    const ItemType item_type;
    // An exact order's gathered base case may allgather instead (the RBC layer, within a node
    // or for little data): every layer must still give the same bytes.
    std::vector<double> first_layer;
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      jquick::Config gathered = config_for(choice, 17);
      gathered.gather_elements = 1 << 20;
      std::vector<double> a = zeros, b = zeros;
      jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), gathered);
      jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), gathered);
      verify(check, zeros, a, std::less<double>(), world);
      check.check(same_bytes(a, b), "signed zeros: a second run differs");
      if (first_layer.empty()) first_layer = a;
      check.check(same_bytes(a, first_layer), "signed zeros: the layers' outputs differ");
      std::vector<Item> x = items, y = items;
      jquick::sort(x, item_type, world, ItemLess(), gathered);
      jquick::sort(y, item_type, world, ItemLess(), gathered);
      verify(check, items, x, ItemLess(), world);
      check.check(same_bytes(x, y), "equal keys: a second run differs");
    }
  }
  if (p >= 3) {
    // Just past gather_elements the RBC layer sorts a whole input of an exact order without a
    // distributed level on one node (by samples) or two (merged per node, up to twice
    // gather_elements); an order that is not exact recurses.
    Context c(check, "whole input just past gather_elements");
    inputs::Params some = params;
    some.n_per_pe = 40;
    const std::vector<double> keys = inputs::generate<double>(inputs::Distribution::kUniform, some);
    const std::vector<Item> items =
        items_from(inputs::generate<std::uint64_t>(inputs::Distribution::kUniform, some), rank);
    const ItemType item_type;
    const std::int64_t n = 40 * static_cast<std::int64_t>(p);
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      const std::int64_t most_allgathered = n / kWholeFactor;  // n: a multiple of 40 p
      for (const std::int64_t limit : {most_allgathered, most_allgathered - 1}) {
        Context cg(check, "gather_elements=", limit);
        jquick::Config config = config_for(choice, 29);
        config.gather_elements = limit;
        std::vector<double> a = keys;
        const jquick::Stats exact = jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config);
        verify(check, keys, a, std::less<double>(), world);
        std::vector<Item> x = items;
        const jquick::Stats inexact = jquick::sort(x, item_type, world, ItemLess(), config);
        verify(check, items, x, ItemLess(), world);
        int levels[2] = {exact.levels, inexact.levels}, most[2] = {0, 0};
        MPI_Allreduce(levels, most, 2, MPI_INT, MPI_MAX, world);
        if (levels_free(choice, n, p, nodes, limit)) {
          check.equal(most[0], 0, "levels of std::less, sorted without levels");
        } else if (!splits_by_nodes(choice, n, p, nodes, limit)) {
          check.check(most[0] > 0, "std::less took no distributed level");
        }
        check.check(most[1] > 0, "an order that is not exact took no distributed level");
      }
    }
  }
  {
    // Only the first half of the PEs (rounded up) hold keys: a merging allgather's members
    // hold all of them rounds before the last, when the others still have to receive them.
    Context c(check, "gathered base case, keys on the first half of the PEs");
    inputs::Params few = params;
    few.n_per_pe = 40;
    const std::vector<double> half = inputs::generate<double>(inputs::Distribution::kFirstHalf, few);
    for (const LayerChoice& choice : options.layers) {
      Context cl(check, choice.name);
      std::vector<double> a = half;
      jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config_for(choice, 23));
      verify(check, half, a, std::less<double>(), world);
    }
  }
  {
    Context c(check, "schedules agree");
    std::vector<double> a = uniform, b = uniform;
    jquick::Config config = config_for(parse_layer_choice("mpi_create_group/cascaded"), 5);
    jquick::sort(a, MPI_DOUBLE, world, std::less<double>(), config);
    config.schedule = jquick::Schedule::alternating;
    config.layer = jquick::Layer::mpi_split;
    jquick::sort(b, MPI_DOUBLE, world, std::less<double>(), config);
    check.check(same_bytes(a, b), "cascaded create_group and alternating split differ");
  }
  if (p >= 2) {
    Context c(check, "sort on an RBC sub-range 1..p-1");
    const rbc::RangeComm all = rbc::RangeComm::from_mpi(world);
    const rbc::RangeComm tail = all.split(1, p - 1);
    MPI_Comm members;
    MPI_Comm_split(world, rank >= 1 ? 0 : MPI_UNDEFINED, rank, &members);
    if (rank >= 1) {
      std::vector<double> data = uniform;
      jquick::sort(data, MPI_DOUBLE, tail);
      verify(check, uniform, data, std::less<double>(), members);
      MPI_Comm_free(&members);
    }
    jquick::Config config;
    config.layer = jquick::Layer::mpi_split;
    std::vector<double> data = uniform;
    check.throws<jquick::Error>([&] { jquick::sort(data, MPI_DOUBLE, all, std::less<double>(), config); },
                                "needs Config::layer", "RangeComm with an MPI layer");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "jquick_test", [&](Checker& check) {
    const Options options = parse_options(argc, argv);
    std::vector<Totals> totals(options.layers.size());
    const double start = MPI_Wtime();
    run_grid(check, options, totals);
    if (options.special) run_special(check, options);
    if (check.rank() == 0) {
      for (std::size_t l = 0; l < options.layers.size(); ++l) {
        std::printf("[jquick_test] p=%d layer %-28s %d cases, sum of sort times %.6f s, max levels %d\n",
                    check.size(), options.layers[l].name.c_str(), totals[l].cases,
                    totals[l].sort_time, totals[l].max_levels);
      }
      std::printf("[jquick_test] p=%d whole test %.3f s (MPI_Wtime)\n", check.size(),
                  MPI_Wtime() - start);
    }
  });
}
