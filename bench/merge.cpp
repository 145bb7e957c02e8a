// Weak scaling of the stable distributed merge (Siebert and Traeff, figures 5 and 6): every PE
// holds a sorted random block of A (--nps elements) and of B (--b-factor times as many; the
// paper used 10 and 20 million doubles), PE r's keys lying in [r, r + 1) so that A and B are
// globally sorted; --b-shift=x moves B's keys of PE r to [r + x, r + x + 1), so that output
// blocks need remote pieces (with 0 every PE's output is exactly its own blocks). For each variant: warm-up rounds, then repetitions of barrier + merge; each
// phase time is the maximum over PEs, and the record gives median/min/max over repetitions of
// the co-ranking time and of the total time, plus the medians of the other phases.
//
// Output: one line per (variant, n/p) on rank 0, prefixed "JANUS_BENCH " (bench/harness.hpp),
// in the bench driver's record schema (bench/py/records.py): the merge variant is the
// "implementation", "variant" names the input layout (its --b-shift), and median_s/min_s/max_s
// are the total time's:
//   {"benchmark":"merge","backend":"smpi",...,"p":1024,"implementation":"lock_shared",
//    "variant":"b_shift=0","n_per_pe":3000,"a_per_pe":1000,"b_per_pe":2000,"b_shift":0,
//    "repetitions":5,"median_s":..,"min_s":..,"max_s":..,
//    "corank_median_s":..,"corank_min_s":..,"corank_max_s":..,
//    "total_median_s":..,"total_min_s":..,"total_max_s":..,
//    "setup_median_s":..,"fetch_median_s":..,"merge_median_s":..,
//    "iterations_max":..,"epochs_max":..,"checked":true}
//
// Options: --variants=fence_bound,fence_allreduce,lock_shared,rget_lock_all  --nps=1000,..
//          --b-factor=2  --b-shift=0  --windows=in_place|copy  --warmup=1  --reps=5  --seed=S
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "merge/merge.hpp"

namespace {

struct Figures {
  double median = 0, min = 0, max = 0;
};

Figures summarise(const std::vector<double>& values) {
  Figures f;
  f.median = bench::median(values);
  f.min = *std::min_element(values.begin(), values.end());
  f.max = *std::max_element(values.begin(), values.end());
  return f;
}

// Sorted keys in [low, low + 1).
std::vector<double> sorted_block(std::uint64_t count, double low, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> block(count);
  for (double& x : block) x = low + unit(rng);
  std::sort(block.begin(), block.end());
  return block;
}

// Cheap global check: locally sorted, boundary to the next PE in order, count preserved.
bool check_output(const std::vector<double>& out, std::uint64_t expected_total, MPI_Comm comm) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int ok = std::is_sorted(out.begin(), out.end()) ? 1 : 0;
  double first = out.empty() ? -1.0 : out.front(), next_first = -1.0;
  MPI_Sendrecv(&first, 1, MPI_DOUBLE, rank > 0 ? rank - 1 : MPI_PROC_NULL, 1, &next_first, 1,
               MPI_DOUBLE, rank + 1 < p ? rank + 1 : MPI_PROC_NULL, 1, comm, MPI_STATUS_IGNORE);
  if (!out.empty() && next_first >= 0 && next_first < out.back()) ok = 0;
  std::uint64_t count = out.size(), total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (total != expected_total) ok = 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  return ok != 0;
}

void run(const bench::Args& args, const bench::Context& ctx) {
  const MPI_Comm world = ctx.world();
  std::vector<merge::Variant> variants;
  for (const auto& name : args.get_list("variants", {"fence_bound", "fence_allreduce",
                                                     "lock_shared", "rget_lock_all"})) {
    variants.push_back(merge::parse_variant(name));
  }
  const auto nps = args.get_int_list("nps", {1000});
  const int b_factor = args.get_int("b-factor", 2);
  const int warmup = args.get_int("warmup", 1);
  const int reps = args.get_int("reps", 5);
  const auto seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  const double b_shift = std::stod(args.get("b-shift", "0"));
  merge::Options options;
  options.windows = merge::parse_window_memory(args.get("windows", "in_place"));
  if (reps < 1 || warmup < 0 || b_factor < 0) throw std::invalid_argument("bad --reps/--warmup/--b-factor");

  for (const std::int64_t np : nps) {
    if (np < 0) throw std::invalid_argument("--nps must be >= 0");
    const auto a_count = static_cast<std::uint64_t>(np);
    const std::uint64_t b_count = a_count * static_cast<std::uint64_t>(b_factor);
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(ctx.rank()));
    const auto a = sorted_block(a_count, ctx.rank(), rng);
    const auto b = sorted_block(b_count, ctx.rank() + b_shift, rng);
    const std::uint64_t expected_total = (a_count + b_count) * static_cast<std::uint64_t>(ctx.size());

    for (merge::Variant variant : variants) {
      options.variant = variant;
      ctx.note("merge " + merge::to_string(variant) + " n/p=" + std::to_string(a_count + b_count));
      std::vector<double> corank, total, setup, fetch, merge_time;
      int iterations_max = 0, epochs_max = 0;
      bool checked = true;
      for (int round = 0; round < warmup + reps; ++round) {
        MPI_Barrier(world);
        merge::Stats stats;
        const auto out = merge::stable_merge(a, b, MPI_DOUBLE, world, std::less<double>(), options,
                                             &stats);
        double local[5] = {stats.corank, stats.total, stats.setup, stats.fetch, stats.merge};
        double worst[5];
        MPI_Reduce(local, worst, 5, MPI_DOUBLE, MPI_MAX, 0, world);
        int counts[2] = {stats.iterations, stats.epochs}, counts_max[2];
        MPI_Reduce(counts, counts_max, 2, MPI_INT, MPI_MAX, 0, world);
        if (round == 0) checked = check_output(out, expected_total, world);
        if (round < warmup) continue;
        corank.push_back(worst[0]);
        total.push_back(worst[1]);
        setup.push_back(worst[2]);
        fetch.push_back(worst[3]);
        merge_time.push_back(worst[4]);
        iterations_max = std::max(iterations_max, counts_max[0]);
        epochs_max = std::max(epochs_max, counts_max[1]);
      }
      if (ctx.rank() != 0) continue;
      const Figures c = summarise(corank), t = summarise(total);
      bench::Record record = ctx.record("merge");
      record.add("implementation", merge::to_string(variant))
          .add("variant", "b_shift=" + args.get("b-shift", "0"))
          .add("windows", merge::to_string(options.windows))
          .add("n_per_pe", static_cast<std::int64_t>(a_count + b_count))
          .add("a_per_pe", static_cast<std::int64_t>(a_count))
          .add("b_per_pe", static_cast<std::int64_t>(b_count))
          .add("b_shift", b_shift)
          .add("warmup", warmup)
          .add("repetitions", reps)
          .add("median_s", t.median)
          .add("min_s", t.min)
          .add("max_s", t.max)
          .add("corank_median_s", c.median)
          .add("corank_min_s", c.min)
          .add("corank_max_s", c.max)
          .add("total_median_s", t.median)
          .add("total_min_s", t.min)
          .add("total_max_s", t.max)
          .add("setup_median_s", bench::median(setup))
          .add("fetch_median_s", bench::median(fetch))
          .add("merge_median_s", bench::median(merge_time))
          .add("iterations_max", iterations_max)
          .add("epochs_max", epochs_max)
          .add_raw("checked", checked ? "true" : "false");
      ctx.emit(record);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
#ifndef JANUS_SMPI
  // See tests/merge_test.cpp: Open MPI 4.1 without vader's single-copy mechanism needs osc/ucx
  // for MPI_Win_create; a user's own setting wins.
  setenv("OMPI_MCA_osc", "ucx", 0);
#endif
  std::vector<std::string> options = bench::common_options();
  for (const char* own : {"variants", "nps", "b-factor", "b-shift", "windows", "seed"}) {
    options.push_back(own);
  }
  return bench::main_with_mpi(argc, argv, options, run);
}
