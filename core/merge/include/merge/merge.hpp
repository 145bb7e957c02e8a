#pragma once

// Stable distributed two-way merge (Siebert and Traeff, EuroMPI 2012).
//
//   // A and B are sorted sequences, blockwise over the PEs of comm (PE r holds the r-th block
//   // of each; any sizes, empty blocks included).
//   std::vector<double> c = merge::stable_merge(a_block, b_block, MPI_DOUBLE, comm);
//   // c is PE r's block of stable_merge(A, B): floor((m+n)/p) + [r < (m+n) mod p] elements.
//
// Algorithm: PE r co-ranks its first output position k_r (binary search over the distributed
// inputs, remote elements read one-sidedly with the synchronisation of Options::variant),
// receives the co-ranks of k_{r+1} from PE r + 1, reads A[j_r, j_r+1) and B[l_r, l_r+1) from
// their owners and merges them locally with localsort::merge (A first on ties).
//
// Contract:
// - Collective over comm: every PE calls it with the same T, type, comparator and Options
//   (output_count aside). A and B are each sorted by `less` (a strict weak order) across the
//   PEs in rank order.
// - T is trivially copyable and default constructible; `type` describes exactly one T
//   (MPI_Type_size and extent == sizeof(T)), otherwise merge::Error.
// - Stability: for elements equal under `less`, all of A's come before all of B's, and each
//   input's own order is kept.
// - Counts and offsets are 64-bit; a single PE's output may exceed 2^31 elements.
// - Communication: two RMA windows on comm (created and freed inside the call), collectives
//   on comm (MPI_Allreduce, MPI_Exscan, for irregular block sizes MPI_Allgather; fences and
//   an MPI_Allreduce per iteration in the fence variants), and one message per PE to its left
//   neighbour with tag merge::kBoundaryTag. Do not have wildcard receives pending on comm
//   during the call.
// - Reads of a PE's own block are plain memory copies in every variant.
// - A comparator that throws never leaves a PE waiting: its first exception is caught, later
//   comparisons on that PE answer false, every PE runs the call to its end, and every PE throws
//   merge::Error naming it. A comparator that may throw (not noexcept; std::less and
//   std::greater on numbers count as noexcept) costs one MPI_Allreduce at the end.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "cost/charge.hpp"
#include "localsort/guarded_less.hpp"
#include "localsort/merge.hpp"
#include "merge/corank.hpp"
#include "merge/detail/remote.hpp"
#include "merge/options.hpp"

namespace merge {

// Tag of the one point-to-point message per PE (co-ranks to the left neighbour).
constexpr int kBoundaryTag = 0x4d52;

namespace detail {

// One iteration with all of its reads issued together (fence and Rget variants). When both
// tests are needed, A[j-1], A[j] and B[l-1], B[l] are read as pairs: two gets instead of four
// (more only when a pair straddles two owners).
template <class T, class Less>
void batched_iteration(CorankSearch& search, RemoteInputs& in, const Less& less) {
  const bool first = search.has_first_test();
  const bool second = search.has_second_test();
  const std::uint64_t j = search.j(), l = search.l();
  T a[2] = {}, b[2] = {};  // a = {A[j-1], A[j]}, b = {B[l-1], B[l]}
  in.open_epoch();
  if (first && second) {
    in.get(RemoteInputs::seq_a, j - 1, 2, a);
    in.get(RemoteInputs::seq_b, l - 1, 2, b);
  } else if (first) {
    in.get(RemoteInputs::seq_a, j - 1, 1, &a[0]);
    in.get(RemoteInputs::seq_b, l, 1, &b[1]);
  } else if (second) {
    in.get(RemoteInputs::seq_b, l - 1, 1, &b[0]);
    in.get(RemoteInputs::seq_a, j, 1, &a[1]);
  }
  in.complete();
  in.close_epoch();
  if (search.done()) return;
  const bool first_holds = first && less(b[1], a[0]);
  const bool second_holds = !first_holds && second && !less(b[0], a[1]);
  search.step(first_holds, second_holds);
}

// Throws merge::Error on every PE unless A and B are sorted by `less` across the PEs: local
// order of this PE's blocks, its first elements against the elements before them (one-sided
// reads, one epoch), then one MPI_Allreduce(MIN) of the first out-of-order global index of A
// and of B. Collective.
template <class T, class Less>
void check_sorted(const T* a, std::uint64_t m_local, const T* b, std::uint64_t n_local,
                  RemoteInputs& in, MPI_Comm comm, const Less& less) {
  // Signed: MPICH 4.0.2's MPI_MIN on MPI_UINT64_T compares as signed (UINT64_MAX < 5 there).
  constexpr std::int64_t kSorted = INT64_MAX;
  const Distribution& dist = in.distribution();
  const T* blocks[2] = {a, b};
  const std::uint64_t counts[2] = {m_local, n_local};
  const std::uint64_t offsets[2] = {dist.a.offset(dist.rank), dist.b.offset(dist.rank)};
  std::int64_t first_bad[2] = {kSorted, kSorted};
  T before[2] = {};
  in.open_epoch();
  for (int s = 0; s < 2; ++s) {
    if (counts[s] > 0 && offsets[s] > 0) {
      in.get(s == 0 ? RemoteInputs::seq_a : RemoteInputs::seq_b, offsets[s] - 1, 1, &before[s]);
    }
  }
  in.complete();
  in.close_epoch();
  for (int s = 0; s < 2; ++s) {
    if (counts[s] == 0) continue;
    if (offsets[s] > 0 && less(blocks[s][0], before[s])) {
      first_bad[s] = static_cast<std::int64_t>(offsets[s]);
      continue;
    }
    for (std::uint64_t i = 1; i < counts[s]; ++i) {
      if (less(blocks[s][i], blocks[s][i - 1])) {
        first_bad[s] = static_cast<std::int64_t>(offsets[s] + i);
        break;
      }
    }
  }
  cost::charge(cost::Kernel::copy, m_local + n_local);  // one pass over the blocks
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, first_bad, 2, MPI_INT64_T, MPI_MIN, comm),
            "MPI_Allreduce of the sortedness check");
  for (int s = 0; s < 2; ++s) {
    if (first_bad[s] == kSorted) continue;
    const auto bad = static_cast<std::uint64_t>(first_bad[s]);
    const auto [owner, local] = (s == 0 ? dist.a : dist.b).locate(bad);
    throw Error(std::string("merge: input ") + (s == 0 ? "A" : "B") +
                " is not sorted by the comparator: its element at global index " +
                std::to_string(bad) + " (PE " + std::to_string(owner) + ", local index " +
                std::to_string(local) + ") is less than the element before it" +
                (local == 0 ? " (on an earlier PE)" : ""));
  }
}

// Co-ranks of output position k with the variant's synchronisation; collective for the fence
// variants (every PE runs the same number of epochs).
template <class T, class Less>
std::pair<std::uint64_t, std::uint64_t> distributed_corank(std::uint64_t k, RemoteInputs& in,
                                                           MPI_Comm comm, const Less& less,
                                                           Stats& stats) {
  const std::uint64_t m = in.distribution().a.total(), n = in.distribution().b.total();
  CorankSearch search(k, m, n);
  switch (in.variant()) {
    case Variant::fence_bound: {
      const int bound = iteration_bound(m, n);
      for (int epoch = 0; epoch < bound; ++epoch) batched_iteration<T>(search, in, less);
      stats.epochs = bound;
      if (!search.done()) throw Error("merge: internal error: co-ranking exceeded its bound");
      break;
    }
    case Variant::fence_allreduce: {
      int active = 1;
      while (active != 0) {
        batched_iteration<T>(search, in, less);
        ++stats.epochs;
        active = search.done() ? 0 : 1;
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_LOR, comm),
                  "MPI_Allreduce of the active flags");
      }
      break;
    }
    case Variant::lock_shared: {
      // As in the paper's figure 1 with a locked GET per element: the second test's elements
      // are read only if the first test fails.
      while (!search.done()) {
        const std::uint64_t j = search.j(), l = search.l();
        T x{}, y{};
        bool first_holds = false, second_holds = false;
        if (search.has_first_test()) {
          in.get(RemoteInputs::seq_a, j - 1, 1, &x);
          in.get(RemoteInputs::seq_b, l, 1, &y);
          first_holds = less(y, x);
        }
        if (!first_holds && search.has_second_test()) {
          in.get(RemoteInputs::seq_b, l - 1, 1, &y);
          in.get(RemoteInputs::seq_a, j, 1, &x);
          second_holds = !less(y, x);
        }
        search.step(first_holds, second_holds);
      }
      stats.epochs = search.iterations();
      break;
    }
    case Variant::rget_lock_all:
      while (!search.done()) batched_iteration<T>(search, in, less);
      stats.epochs = search.iterations();
      break;
  }
  stats.iterations = search.iterations();
  return {search.j(), search.l()};
}

}  // namespace detail

// Merges this PE's blocks a[0, m_local) of A and b[0, n_local) of B into its block of the stable
// merge; see the contract above. `stats`, if given, receives this PE's phase times.
template <class T, class Less = std::less<T>>
std::vector<T> stable_merge(const T* a, std::uint64_t m_local, const T* b, std::uint64_t n_local,
                            MPI_Datatype type, MPI_Comm comm, Less less = Less(),
                            const Options& options = Options(), Stats* stats = nullptr) {
  static_assert(std::is_trivially_copyable<T>::value, "merge: T must be trivially copyable");
  Stats local;
  const double start = MPI_Wtime();
  detail::check_datatype(type, sizeof(T));
  if ((m_local > 0 && a == nullptr) || (n_local > 0 && b == nullptr)) {
    throw Error("merge: a non-empty block was given as a null pointer");
  }
  const detail::Distribution dist = detail::describe(m_local, n_local, options.output_count, comm);
  const std::uint64_t m = dist.a.total(), n = dist.b.total();
  constexpr bool kMayThrow = !localsort::kCannotThrow<Less, T>;
  localsort::ComparatorFault fault;
  const auto safe = localsort::make_safe_less<T>(std::move(less), &fault);
  bool inconsistent = false;  // co-ranks that disagree with the right neighbour's
  constexpr const char* kInconsistent = "merge: the co-ranks are inconsistent; are A and B sorted by the comparator?";
  std::vector<T> out;
  {
    detail::RemoteInputs in(a, b, sizeof(T), type, dist, comm, options);
    if (options.check_sorted) detail::check_sorted<T>(a, m_local, b, n_local, in, comm, safe);
    const double corank_start = MPI_Wtime();
    local.setup = corank_start - start;

    const auto first = detail::distributed_corank<T>(dist.out_begin, in, comm, safe, local);
    local.j = first.first;
    local.l = first.second;
    // The co-ranks of this PE's end are those of the next PE's start.
    std::uint64_t mine[2] = {first.first, first.second};
    std::uint64_t next[2] = {m, n};
    const int left = dist.rank > 0 ? dist.rank - 1 : MPI_PROC_NULL;
    const int right = dist.rank + 1 < dist.size ? dist.rank + 1 : MPI_PROC_NULL;
    detail::check_mpi(MPI_Sendrecv(mine, 2, MPI_UINT64_T, left, kBoundaryTag, next, 2,
                                   MPI_UINT64_T, right, kBoundaryTag, comm, MPI_STATUS_IGNORE),
                      "MPI_Sendrecv of co-ranks");
    const double fetch_start = MPI_Wtime();
    local.corank = fetch_start - corank_start;

    if (next[0] < mine[0] || next[1] < mine[1] ||
        (next[0] - mine[0]) + (next[1] - mine[1]) != dist.out_end - dist.out_begin) {
      // After a comparator threw on some PE its co-ranks may disagree with its neighbours':
      // every PE still takes part in the fetch epoch (collective in the fence variants).
      if (!kMayThrow) throw Error(kInconsistent);
      inconsistent = true;
      next[0] = mine[0];
      next[1] = mine[1];
    }
    std::vector<T> a_part(next[0] - mine[0]), b_part(next[1] - mine[1]);
    in.open_epoch();
    in.get(detail::RemoteInputs::seq_a, mine[0], a_part.size(), a_part.data());
    in.get(detail::RemoteInputs::seq_b, mine[1], b_part.size(), b_part.data());
    in.complete();
    in.close_epoch();
    const double merge_start = MPI_Wtime();
    local.fetch = merge_start - fetch_start;

    out.resize(a_part.size() + b_part.size());
    localsort::merge(a_part.data(), a_part.size(), b_part.data(), b_part.size(), out.data(), safe);
    cost::charge(cost::Kernel::merge, out.size());
    local.merge = MPI_Wtime() - merge_start;
  }  // windows freed (collective): no PE returns while another may still read its blocks
  if constexpr (kMayThrow) {
    int flags[2] = {fault.thrown ? 1 : 0, inconsistent ? 1 : 0};
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, comm),
                      "MPI_Allreduce of the comparator flags");
    if (flags[0] != 0) {
      throw Error("merge: " + fault.describe() +
                  "; every PE ran the merge to its end comparing nothing after that, so no output is returned");
    }
    if (flags[1] != 0) throw Error(kInconsistent);
  }
  local.total = MPI_Wtime() - start;
  if (stats != nullptr) *stats = local;
  return out;
}

template <class T, class Less = std::less<T>>
std::vector<T> stable_merge(const std::vector<T>& a, const std::vector<T>& b, MPI_Datatype type,
                            MPI_Comm comm, Less less = Less(), const Options& options = Options(),
                            Stats* stats = nullptr) {
  return stable_merge(a.data(), a.size(), b.data(), b.size(), type, comm, less, options, stats);
}

}  // namespace merge
