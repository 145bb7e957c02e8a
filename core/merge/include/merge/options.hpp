#pragma once

// Choices and measurements of merge::stable_merge (see merge.hpp).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace merge {

// How remote elements are read during co-ranking and the block fetch (paper section 3).
enum class Variant {
  // (3.1) Every iteration is one fence epoch on both windows; all PEs run the worst-case
  // number of epochs (iteration_bound), finished PEs run empty ones.
  fence_bound,
  // (3.2) Fence epochs as above, plus an MPI_Allreduce(LOR) of "still active" after each, so
  // the epochs stop when the last PE has its co-ranks.
  fence_allreduce,
  // (3.3) Passive target: every read is MPI_Win_lock(SHARED, NOCHECK) + MPI_Get +
  // MPI_Win_unlock; no collective, each PE finishes on its own. Reads are lazy (the second
  // test's elements are read only when the first test fails).
  lock_shared,
  // (3.4, MPI-3) One passive epoch per PE (MPI_Win_lock_all); each iteration issues all its
  // reads at once with MPI_Rget and completes them with one MPI_Waitall.
  rget_lock_all,
};

// Where the windows' memory comes from.
enum class WindowMemory {
  // MPI_Win_create over the caller's blocks (as in the paper): no copy.
  in_place,
  // MPI_Win_allocate and a copy of the blocks: for MPI libraries whose one-sided component
  // needs MPI-allocated memory (e.g. Open MPI 4.1 with vader's single-copy mechanism off and
  // no osc/ucx gives MPI_ERR_WIN for MPI_Win_create).
  copy,
};

struct Options {
  Variant variant = Variant::lock_shared;
  WindowMemory windows = WindowMemory::in_place;
  // This PE's number of output elements, or -1 for exact balance: PE i gets
  // floor((m+n)/p) + [i < (m+n) mod p]. When given, every PE gives its own count and the
  // counts must sum to m + n (otherwise every PE throws merge::Error).
  std::int64_t output_count = -1;
  // Checks that A and B are sorted by the comparator before co-ranking: each PE checks its own
  // blocks (O(m/p + n/p) comparisons) and its first element against the element before it
  // (a one-sided read of the left neighbour's last element, wherever empty blocks put it); one
  // MPI_Allreduce of two words then makes every PE throw merge::Error naming the first
  // out-of-order position if any. Without it, unsorted input gives an unsorted output or an
  // error on some PEs only. Must be the same on every PE (as all of Options).
  bool check_sorted = true;
};

// Times in seconds (MPI_Wtime, simulated under SMPI) of this PE's call.
struct Stats {
  double setup = 0;    // prefix offsets, layouts, window creation
  double corank = 0;   // co-ranking of this PE's first output position, incl. the boundary exchange
  double fetch = 0;    // reading A[j_r, j_r+1) and B[l_r, l_r+1)
  double merge = 0;    // local localsort::merge
  double total = 0;    // the whole call, window release included
  int iterations = 0;  // co-ranking iterations this PE needed
  int epochs = 0;      // co-ranking epochs it took part in (fence variants; else = iterations)
  std::uint64_t j = 0, l = 0;  // co-ranks of this PE's first output position
};

// Every error of merge::stable_merge: bad arguments (thrown on every PE of the call before any
// window exists when the condition is known everywhere) and failed MPI calls.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string to_string(Variant variant);
// "fence_bound", "fence_allreduce", "lock_shared", "rget_lock_all"; throws merge::Error otherwise.
Variant parse_variant(const std::string& name);
std::vector<Variant> all_variants();

std::string to_string(WindowMemory windows);
WindowMemory parse_window_memory(const std::string& name);

}  // namespace merge
