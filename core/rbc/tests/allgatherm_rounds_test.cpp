// rbc::allgatherm's promise to a merge function: the call allgatherm_partial_call names is the
// last, and only its result reaches the receive buffer. The merge here spoils everything outside
// this rank's share in that call; every rank must still find its share right, on every p and
// both schedules (halves: where p is odd, a level's lone rank; the fold: its ranks, below and
// above 8 KiB), also where ranks contribute nothing and a block holds all elements rounds early.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// Rank r's sorted contribution: `count(r)` values, interleaving with the other ranks'.
std::vector<long long> contribution(int r, int n) {
  std::vector<long long> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 3LL * i + r % 3;
  return v;
}

void run_scaled(Checker& check, const rbc::RangeComm& comm, const std::vector<int>& counts,
                rbc::AllgathermSchedule schedule) {
  const int p = comm.size(), me = comm.rank();
  std::vector<long long> all;
  for (int r = 0; r < p; ++r) {
    const std::vector<long long> c = contribution(r, counts[static_cast<std::size_t>(r)]);
    all.insert(all.end(), c.begin(), c.end());
  }
  std::stable_sort(all.begin(), all.end());
  const int total = static_cast<int>(all.size());
  const int partial =
      rbc::allgatherm_partial_call(p, me, total * static_cast<std::int64_t>(sizeof(long long)), schedule);
  const int w0 = static_cast<int>(static_cast<long long>(total) * me / p);
  const int w1 = static_cast<int>(static_cast<long long>(total) * (me + 1) / p);

  int calls = 0;
  const rbc::Merger merge = [&](void* first, void* middle, void* last) {
    auto* a = static_cast<long long*>(first);
    auto* b = static_cast<long long*>(middle);
    auto* e = static_cast<long long*>(last);
    std::inplace_merge(a, b, e);
    if (++calls == partial && e - a == total) {
      for (long long* x = a; x != e; ++x) {
        if (x - a < w0 || x - a >= w1) *x = -1;
      }
    }
  };
  const std::vector<long long> mine = contribution(me, counts[static_cast<std::size_t>(me)]);
  std::vector<long long> got(static_cast<std::size_t>(total), -2);
  rbc::allgatherm(mine.data(), static_cast<int>(mine.size()), got.data(), total, MPI_LONG_LONG, merge, comm,
                  schedule);
  if (partial > 0) check.equal(calls, partial, "merge calls");
  check.check(std::equal(got.begin() + w0, got.begin() + w1, all.begin() + w0), "share [", w0, ", ", w1,
              ") of ", total, " after a last merge that spoils the rest");
}

// Both schedules; short messages and long ones (beyond the 4 KiB eager limit, and beyond the
// fold's 8 KiB, where a folding rank hands its neighbour two runs).
void run_case(Checker& check, const rbc::RangeComm& comm, const std::vector<int>& counts) {
  for (const rbc::AllgathermSchedule schedule : {rbc::AllgathermSchedule::halves, rbc::AllgathermSchedule::fold}) {
    Context s(check, schedule == rbc::AllgathermSchedule::halves ? "halves" : "fold");
    for (int scale : {1, 200}) {
      std::vector<int> scaled = counts;
      for (int& n : scaled) n *= scale;
      Context c(check, "scale ", scale);
      run_scaled(check, comm, scaled, schedule);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "allgatherm_rounds_test", [](Checker& check) {
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    const int p = world.size();
    int rounds = 0;
    while ((2 << rounds) <= p) ++rounds;
    check.equal(rbc::allgatherm_partial_call(p, p - 1, 8), rounds, "the last rank's partial call");
    check.equal(rbc::allgatherm_partial_call(p, p - 1, 8, rbc::AllgathermSchedule::fold), rounds,
                "the last rank's partial call (fold)");
    // By halves, the lower half is the larger: the first rank takes ceil(log2 p) rounds.
    check.equal(rbc::allgatherm_partial_call(p, 0, 8), (1 << rounds) == p ? rounds : rounds + 1,
                "the first rank's partial call");
    check.throws<rbc::Error>([&] { rbc::allgatherm_partial_call(p, p, 8); }, "allgatherm_partial_call", "rank p of p");
    for (int q = 1; q <= p; ++q) {
      const rbc::RangeComm comm = world.split(0, q - 1);
      if (!comm.is_member()) continue;
      Context c(check, q, " ranks");
      std::vector<int> counts(static_cast<std::size_t>(q));
      for (int r = 0; r < q; ++r) counts[static_cast<std::size_t>(r)] = 5 + 3 * r;
      {
        Context e(check, "every rank contributes");
        run_case(check, comm, counts);
      }
      for (int r = 0; r < q; ++r) counts[static_cast<std::size_t>(r)] = r < (q + 1) / 2 ? 20 + r : 0;
      {
        Context e(check, "only the first half contributes");
        run_case(check, comm, counts);
      }
      for (int r = 0; r < q; ++r) counts[static_cast<std::size_t>(r)] = r == q - 1 ? 50 : 0;
      {
        Context e(check, "only the last rank contributes");
        run_case(check, comm, counts);
      }
    }
  });
}
