// The distributed stable merge on both backends. For every scenario (key distribution x sizes x
// block layout x variant x window memory) every PE builds the same global inputs A and B
// (elements (key, source, index), compared by key only), takes its blocks, merges, and checks:
// - its output equals its slice of std::merge(A, B) (stable, A first on ties) element for
//   element, key, source and index;
// - exact balance: floor((m+n)/p) + [rank < (m+n) mod p] elements (or the caller's counts);
// - stability directly: inside its output and across the boundary to the next PE, equal keys
//   have all A-elements first and increasing indices within each source;
// - the co-ranks in Stats and the iteration count (<= iteration_bound).
// Plus bad calls (wrong datatype, inconsistent output counts) throwing merge::Error on every PE.
//
// Options: --sizes=m:n,m:n,..  --variants=a,b  --keys=name,..  --layouts=name,..
//          --quick (no caller-count runs)  --no-copy (no WindowMemory::copy runs)  --no-bad-calls
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "merge/merge.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

struct Item {
  std::uint64_t key;
  std::uint32_t source;  // 0 = A, 1 = B
  std::uint32_t index;   // position in its input
  bool operator==(const Item& o) const {
    return key == o.key && source == o.source && index == o.index;
  }
};

std::ostream& operator<<(std::ostream& out, const Item& item) {
  return out << "(" << item.key << "," << (item.source == 0 ? "A" : "B") << item.index << ")";
}

struct KeyLess {
  bool operator()(const Item& x, const Item& y) const { return x.key < y.key; }
};

struct Options {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> sizes = {
      {0, 0}, {0, 17}, {23, 0}, {1, 1}, {3, 1000}, {1000, 3}, {257, 256}, {1200, 2500}};
  std::vector<merge::Variant> variants = merge::all_variants();
  std::vector<std::string> keys = {"uniform", "few", "equal", "a_below_b", "b_below_a"};
  std::vector<std::string> layouts = {"balanced", "random", "one_pe", "uneven", "alternate"};
  bool quick = false;
  bool copy = true;
  bool bad = true;
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

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* prefix) -> std::string {
      const std::string p = prefix;
      return arg.rfind(p, 0) == 0 ? arg.substr(p.size()) : std::string();
    };
    if (!value("--sizes=").empty()) {
      options.sizes.clear();
      for (const auto& pair : split_list(value("--sizes="))) {
        const auto colon = pair.find(':');
        options.sizes.emplace_back(std::stoull(pair.substr(0, colon)),
                                   std::stoull(pair.substr(colon + 1)));
      }
    } else if (!value("--variants=").empty()) {
      options.variants.clear();
      for (const auto& name : split_list(value("--variants=")))
        options.variants.push_back(merge::parse_variant(name));
    } else if (!value("--keys=").empty()) {
      options.keys = split_list(value("--keys="));
    } else if (!value("--layouts=").empty()) {
      options.layouts = split_list(value("--layouts="));
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--no-copy") {
      options.copy = false;
    } else if (arg == "--no-bad-calls") {
      options.bad = false;
    } else {
      throw std::invalid_argument("merge_test: unknown argument " + arg);
    }
  }
  return options;
}

// Sorted keys of one input. `offset` separates A's and B's ranges for the *_below_* kinds.
std::vector<std::uint64_t> make_keys(const std::string& kind, std::uint64_t count, bool is_a,
                                     std::mt19937_64& rng) {
  std::vector<std::uint64_t> keys(count);
  for (auto& key : keys) {
    if (kind == "uniform") {
      key = rng() % 1000000;
    } else if (kind == "few") {
      key = rng() % 4;
    } else if (kind == "equal") {
      key = 42;
    } else if (kind == "a_below_b") {
      key = (is_a ? 0 : 1000) + rng() % 1000;
    } else if (kind == "b_below_a") {
      key = (is_a ? 1000 : 0) + rng() % 1000;
    } else {
      throw std::invalid_argument("merge_test: unknown key distribution " + kind);
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Block sizes of `total` elements over p PEs (the same on every PE).
std::vector<std::uint64_t> make_blocks(const std::string& layout, std::uint64_t total, int p,
                                       bool is_a, std::mt19937_64& rng) {
  std::vector<std::uint64_t> blocks(static_cast<std::size_t>(p), 0);
  const auto up = static_cast<std::uint64_t>(p);
  if (layout == "balanced") {
    for (int r = 0; r < p; ++r) blocks[r] = total / up + (static_cast<std::uint64_t>(r) < total % up);
  } else if (layout == "random") {
    // Random cut points: many empty and some big blocks.
    std::vector<std::uint64_t> cuts(static_cast<std::size_t>(p - 1));
    for (auto& cut : cuts) cut = total == 0 ? 0 : rng() % (total + 1);
    std::sort(cuts.begin(), cuts.end());
    std::uint64_t previous = 0;
    for (int r = 0; r < p; ++r) {
      const std::uint64_t end = r + 1 < p ? cuts[r] : total;
      blocks[r] = end - previous;
      previous = end;
    }
  } else if (layout == "one_pe") {
    blocks[is_a ? p - 1 : 0] = total;  // A all on the last PE, B all on the first
  } else if (layout == "uneven") {
    // Block r proportional to (r + 1)^2, the remainder on PE 0.
    std::uint64_t weight_sum = 0;
    for (int r = 0; r < p; ++r) weight_sum += static_cast<std::uint64_t>(r + 1) * (r + 1);
    std::uint64_t used = 0;
    for (int r = 0; r < p; ++r) {
      blocks[r] = total * static_cast<std::uint64_t>(r + 1) * (r + 1) / weight_sum;
      used += blocks[r];
    }
    blocks[0] += total - used;
  } else if (layout == "alternate") {
    // Only every other PE (odd ones for A, even ones for B) holds elements.
    std::vector<int> holders;
    for (int r = 0; r < p; ++r) {
      if ((r % 2 == 1) == is_a) holders.push_back(r);
    }
    if (holders.empty()) holders.push_back(0);
    const auto h = static_cast<std::uint64_t>(holders.size());
    for (std::size_t i = 0; i < holders.size(); ++i)
      blocks[holders[i]] = total / h + (static_cast<std::uint64_t>(i) < total % h);
  } else {
    throw std::invalid_argument("merge_test: unknown layout " + layout);
  }
  return blocks;
}

std::uint64_t prefix(const std::vector<std::uint64_t>& blocks, int rank) {
  std::uint64_t sum = 0;
  for (int r = 0; r < rank; ++r) sum += blocks[r];
  return sum;
}

// Stability inside one sequence of outputs: equal keys -> A before B, indices increasing.
bool in_stable_order(const Item& x, const Item& y) {
  if (x.key != y.key) return x.key < y.key;
  if (x.source != y.source) return x.source < y.source;
  return x.index < y.index;
}

struct Scenario {
  std::string keys, layout;
  std::uint64_t m, n;
  merge::Variant variant;
  merge::WindowMemory windows;
  bool caller_counts;  // output distribution = the input blocks (m_r + n_r), as in the paper
};

void run_scenario(Checker& check, MPI_Datatype item_type, const Scenario& s) {
  const int rank = check.rank(), p = check.size();
  Context context(check, "keys=", s.keys, " layout=", s.layout, " m=", s.m, " n=", s.n,
                  " variant=", merge::to_string(s.variant), " windows=",
                  merge::to_string(s.windows), s.caller_counts ? " caller counts" : "");
  std::mt19937_64 rng(s.m * 1000003 + s.n * 7919 + s.keys.size() * 31 + s.layout.size());
  const auto a_keys = make_keys(s.keys, s.m, true, rng);
  const auto b_keys = make_keys(s.keys, s.n, false, rng);
  std::vector<Item> a(s.m), b(s.n);
  for (std::uint64_t i = 0; i < s.m; ++i) a[i] = {a_keys[i], 0, static_cast<std::uint32_t>(i)};
  for (std::uint64_t i = 0; i < s.n; ++i) b[i] = {b_keys[i], 1, static_cast<std::uint32_t>(i)};
  const auto a_blocks = make_blocks(s.layout, s.m, p, true, rng);
  const auto b_blocks = make_blocks(s.layout, s.n, p, false, rng);

  const std::uint64_t a_begin = prefix(a_blocks, rank), b_begin = prefix(b_blocks, rank);
  std::vector<Item> my_a(a.begin() + a_begin, a.begin() + a_begin + a_blocks[rank]);
  std::vector<Item> my_b(b.begin() + b_begin, b.begin() + b_begin + b_blocks[rank]);

  merge::Options options;
  options.variant = s.variant;
  options.windows = s.windows;
  std::uint64_t out_begin = 0, out_count = 0;
  const std::uint64_t total = s.m + s.n, up = static_cast<std::uint64_t>(p);
  const auto r = static_cast<std::uint64_t>(rank);
  if (s.caller_counts) {
    out_begin = a_begin + b_begin;
    out_count = a_blocks[rank] + b_blocks[rank];
    options.output_count = static_cast<std::int64_t>(out_count);
  } else {
    out_begin = r * (total / up) + std::min(r, total % up);
    out_count = total / up + (r < total % up ? 1 : 0);
  }

  merge::Stats stats;
  const std::vector<Item> got =
      merge::stable_merge(my_a, my_b, item_type, MPI_COMM_WORLD, KeyLess(), options, &stats);

  std::vector<Item> all(total);
  std::merge(a.begin(), a.end(), b.begin(), b.end(), all.begin(), KeyLess());
  const std::vector<Item> expected(all.begin() + out_begin, all.begin() + out_begin + out_count);
  check.equal(got.size(), expected.size(), "output size (balance)");
  check.equal_ranges(got, expected, "output vs slice of std::merge");

  bool stable = true;
  for (std::size_t i = 1; i < got.size(); ++i) stable = stable && in_stable_order(got[i - 1], got[i]);
  check.check(stable, "output not in stable order");

  // Across the boundary: my last element against the next PE's first (when both exist).
  Item last{0, 0, 0}, next_first{0, 0, 0};
  int have_last = got.empty() ? 0 : 1, next_has = 0;
  if (!got.empty()) last = got.back();
  Item first = got.empty() ? Item{0, 0, 0} : got.front();
  int have_first = got.empty() ? 0 : 1;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank + 1 < p ? rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(&first, 1, item_type, left, 7, &next_first, 1, item_type, right, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(&have_first, 1, MPI_INT, left, 8, &next_has, 1, MPI_INT, right, 8, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (have_last && next_has) {
    check.check(in_stable_order(last, next_first), "boundary to the next PE out of stable order: ",
                last, " then ", next_first);
  }

  // Co-ranks: how many of A's elements precede my first output position.
  std::uint64_t j = 0;
  for (std::uint64_t i = 0; i < out_begin; ++i) j += all[i].source == 0 ? 1 : 0;
  check.equal(stats.j, j, "co-rank j of my first position");
  check.equal(stats.l, out_begin - j, "co-rank l of my first position");
  check.check(stats.iterations >= 1 && stats.iterations <= merge::iteration_bound(s.m, s.n),
              "iterations ", stats.iterations, " outside [1, ", merge::iteration_bound(s.m, s.n), "]");
  if (s.variant == merge::Variant::fence_bound) {
    check.equal(stats.epochs, merge::iteration_bound(s.m, s.n), "fence_bound epochs");
  }
}

void bad_calls(Checker& check, MPI_Datatype item_type) {
  Context context(check, "bad calls");
  const std::vector<Item> a(3, Item{1, 0, 0}), b(2, Item{2, 1, 0});
  check.throws<merge::Error>(
      [&] { merge::stable_merge(a, b, MPI_INT, MPI_COMM_WORLD, KeyLess()); }, "datatype",
      "datatype of the wrong size");
  merge::Options options;
  options.output_count = check.rank() == 0 ? 1 : 0;  // sums to 1, not 5 p
  check.throws<merge::Error>(
      [&] { merge::stable_merge(a, b, item_type, MPI_COMM_WORLD, KeyLess(), options); },
      "sum to", "output counts not summing to m + n");
  options.output_count = check.rank() == 0 ? -1 : static_cast<std::int64_t>(5);
  if (check.size() > 1) {
    check.throws<merge::Error>(
        [&] { merge::stable_merge(a, b, item_type, MPI_COMM_WORLD, KeyLess(), options); },
        "all or on none", "output counts on some PEs only");
  }
  options.output_count = -7;
  check.throws<merge::Error>(
      [&] { merge::stable_merge(a, b, item_type, MPI_COMM_WORLD, KeyLess(), options); },
      "negative", "negative output count");
  check.throws<merge::Error>([] { merge::parse_variant("fence"); }, "unknown variant",
                             "unknown variant name");
  // Unsorted input (issue 18, class 8): every PE throws, naming the input and the position.
  for (merge::Variant variant : merge::all_variants()) {
    merge::Options checked;
    checked.variant = variant;
    const int r = check.rank(), p = check.size();
    // A locally unsorted on the last PE: keys 5, 4.
    std::vector<Item> local_a(2, Item{1, 0, 0});
    if (r == p - 1) local_a = {Item{5, 0, 0}, Item{4, 0, 1}};
    check.throws<merge::Error>(
        [&] { merge::stable_merge(local_a, b, item_type, MPI_COMM_WORLD, KeyLess(), checked); },
        "input A is not sorted", "A unsorted inside one PE's block, ", merge::to_string(variant));
    if (p > 1) {
      // B sorted inside every block but descending across PEs, with an empty block between
      // (PE 1 holds nothing): the boundary check reads across it.
      std::vector<Item> across_b;
      if (r != 1 || p == 2) across_b = {Item{static_cast<std::uint64_t>(100 - r), 1, 0}, Item{static_cast<std::uint64_t>(100 - r), 1, 1}};
      check.throws<merge::Error>(
          [&] { merge::stable_merge(a, across_b, item_type, MPI_COMM_WORLD, KeyLess(), checked); },
          "input B is not sorted", "B unsorted across PEs, ", merge::to_string(variant));
    }
  }
  // A comparator that throws on the last PE after `after` calls (issue 18): every PE throws
  // merge::Error naming it, or, where it never fired, none does; no PE is left waiting. With
  // the sortedness check off the first throw comes inside the co-ranking.
  for (merge::Variant variant : merge::all_variants()) {
    for (bool check_sorted : {true, false}) {
      for (long after : {0L, 2L}) {
        Context c(check, "comparator throws after ", after, " calls, ", merge::to_string(variant),
                  check_sorted ? "" : ", no sortedness check");
        merge::Options throwing;
        throwing.variant = variant;
        throwing.check_sorted = check_sorted;
        const bool thrower = check.rank() == check.size() - 1;
        long calls = 0;
        bool fired = false;
        auto less = [&](const Item& x, const Item& y) {
          if (thrower && calls++ >= after) {
            fired = true;
            throw std::runtime_error("boom");
          }
          return x.key < y.key;
        };
        bool threw = false;
        std::string what;
        try {
          merge::stable_merge(a, b, item_type, MPI_COMM_WORLD, less, throwing);
        } catch (const merge::Error& e) {
          threw = true;
          what = e.what();
        }
        int flags[2] = {fired ? 1 : 0, threw ? 1 : 0};
        MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check.equal(flags[1], flags[0] > 0 ? check.size() : 0, "PEs that threw merge::Error");
        if (flags[0] > 0) {
          const char* where = fired ? "threw an exception on this PE (boom)" : "threw an exception on another PE";
          check.check(what.find(where) != std::string::npos, "error names the exception: ", what);
        }
      }
    }
  }
  // The communicator is still usable after the failed calls.
  const auto c = merge::stable_merge(a, b, item_type, MPI_COMM_WORLD, KeyLess());
  check.equal(c.size(), static_cast<std::size_t>(5), "merge after the failed calls");
}

}  // namespace

int main(int argc, char** argv) {
#ifndef JANUS_SMPI
  // Open MPI 4.1 under sim/run_ranks.sh (vader without single-copy) has no one-sided component
  // for MPI_Win_create unless osc/ucx is chosen; a user's own setting wins.
  setenv("OMPI_MCA_osc", "ucx", 0);
#endif
  return janus::testing::run_test(argc, argv, "merge_test", [&](Checker& check) {
    const Options options = parse(argc, argv);
    MPI_Datatype item_type;
    MPI_Type_contiguous(sizeof(Item), MPI_BYTE, &item_type);
    MPI_Type_commit(&item_type);

    for (merge::Variant variant : options.variants) {
      for (const auto& keys : options.keys) {
        for (const auto& layout : options.layouts) {
          for (const auto& [m, n] : options.sizes) {
            run_scenario(check, item_type,
                         {keys, layout, m, n, variant, merge::WindowMemory::in_place, false});
          }
        }
      }
      // The other window memory and caller-given output counts, on a smaller grid.
      for (const auto& layout : options.layouts) {
        for (const auto& [m, n] : options.sizes) {
          if (options.copy) {
            run_scenario(check, item_type, {"few", layout, m, n, variant,
                                            merge::WindowMemory::copy, false});
          }
          if (!options.quick) {
            run_scenario(check, item_type, {"uniform", layout, m, n, variant,
                                            merge::WindowMemory::in_place, true});
          }
        }
      }
    }
    if (options.bad) bad_calls(check, item_type);
    MPI_Type_free(&item_type);
  });
}
