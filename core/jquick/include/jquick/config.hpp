#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace jquick {

// Thrown for bad input (mismatched datatype, NaN keys under the default comparator, a share
// that does not fit an MPI count). Every PE of the sort throws the same error, before or
// instead of any data exchange, so no PE is left waiting for another.
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& what) : std::invalid_argument("jquick: " + what) {}
};

// Which communicators the recursion runs on. Both do identical work (same pivots, same
// messages, bit-identical output for the same seed); they differ only in how groups are made.
enum class Layer {
  rbc,               // rbc::RangeComm: O(1) local splits, RBC's nonblocking collectives
  mpi_create_group,  // per level MPI_Comm_create_group over MPI_Group_range_incl
  mpi_split,         // per level MPI_Comm_split (collective over the parent group)
};

// In which order a PE that belongs to two new groups creates their MPI communicators
// (paper section VIII-B). Irrelevant for Layer::rbc, whose splits are local.
enum class Schedule {
  cascaded,     // always the left group first: creations can wait for each other in a chain
  alternating,  // left first iff (rank + level) is even, so neighbouring januses usually differ
};

// How the RBC layer receives data from unknown senders (see detail/layers.hpp).
enum class Wildcard {
  posted,  // MPI_Irecv(MPI_ANY_SOURCE) on a private communicator: a waiting PE blocks
  probe,   // rbc::probe + rbc::recv on the group's RangeComm (polls under SMPI)
};

struct Config {
  std::uint64_t seed = 0x6a616e7573ULL;
  Layer layer = Layer::rbc;
  Schedule schedule = Schedule::alternating;
  Wildcard wildcard = Wildcard::posted;  // Layer::rbc only
  // The pivot is the median of k = max(k1 log2 p', k2 n'/p', k3) samples of a group of p' PEs
  // holding n' elements; a level that samples draws 2k, so that its children inherit enough
  // (a child needs at least half its k1 term and its whole k2 and k3 terms from them).
  // k1 and k3 are the thesis' tuned values. Here every member receives all samples, so k2 is
  // 1/400 instead of the thesis' 1/50: in simulation (supermuc profile, 16 and 64 ranks, n/p
  // 4096-65536, four seeds) about 1% faster on average (docs/benchmarks.md).
  double k1 = 16.0;
  double k2 = 1.0 / 400.0;
  double k3 = 9.0;
  // Sub-problems (the whole input included) of at most this many elements on >= 3 PEs skip
  // the recursion: a merging gather of the sorted keys to the group's first PE and a scatter
  // of them down a binomial tree, after which every PE keeps exactly its share. Two tree
  // collectives instead of about log2 p' levels of four each (with an exact order, such as
  // std::less on numbers, the RBC layer may take one merging allgather where that is cheaper,
  // and a whole input on one node of up to twice this many; where it gathers, it gathers each
  // half of the group to its own root, and the two roots swap their runs. On the RBC layer a
  // sub-problem below the whole input also needs at most 1024 elements per PE, or it recurses:
  // docs/benchmarks.md). 0 turns it off. 4096: measured against 1024 and 16384 on Open MPI
  // (8 ranks) and SMPI (16, 64 ranks), docs/benchmarks.md.
  std::int64_t gather_elements = 4096;
  // Added to every global index (a test knob: exercises 64-bit index arithmetic far beyond
  // 2^32 without 2^32 elements). Results do not depend on it.
  std::int64_t index_base = 0;
  // Checks the result: every PE's output in order, in order across PE boundaries, and the
  // output a permutation of the input (a 40-bit multiset fingerprint). O(n/p) work, one
  // neighbour message and one scan-and-broadcast; throws jquick::Error on every PE if not.
  bool verify = false;
};

// Per-PE measurements (MPI_Wtime seconds; simulated time under SMPI). Taking them does not
// change what is computed. When a janus PE works on two groups at once, waiting time goes to
// the earliest phase either group is still in.
struct Stats {
  double total = 0;
  double pivot_selection = 0;        // sampling, merging gather, pivot broadcast
  double partition = 0;              // local partitioning around the pivot
  double exchange_calculation = 0;   // scan-and-broadcast of the counts, message plan
  double exchange = 0;               // data exchange until this PE's share has arrived
  double communicator_creation = 0;  // creating (and freeing) group communicators
  double base_cases = 0;             // deferred 1- and 2-PE base cases: co-ranking, exchange
                                     // of the crossing elements, merge
  double local_sort = 0;             // local sorting (localsort kernels) in the base cases
  int levels = 0;                    // distributed recursion levels this PE took part in
  int janus_levels = 0;              // of those, levels on which it worked for two groups
  int retries = 0;                   // levels repeated because the pivot was a group maximum
  int inherited_pivots = 0;          // levels whose pivot came from the parent's samples
  int split_gathers = 0;             // gathered base cases whose gather was cut between two roots
  int two_node_merges = 0;           // whole inputs merged per node and swapped between two nodes
  int sample_sorts = 0;              // whole inputs sorted by regular samples on one node
  int node_splits = 0;               // whole inputs split between nodes, each node sorting its part
  long long messages_sent = 0;       // data-exchange messages (base cases included)
  long long messages_received = 0;
  // Bytes this PE copied between its own buffers (copies to itself in the exchange, moving a
  // level's result back, reordering received pieces, base-case merges; not MPI's or the
  // sorting kernels' internal moves). Divide by n/p * sizeof(T) * (levels + 1) for bytes per
  // element per level, as bench/sort prints.
  long long bytes_copied = 0;
};

// A strict weak order for floating-point keys that also covers NaN: NaNs compare equal to each
// other and greater than every number. Pass it instead of std::less to sort inputs with NaN.
template <class T>
struct NanLastLess {
  bool operator()(const T& a, const T& b) const noexcept {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  }
};

// Every PE of a sort must pass the same Config. A digest of it travels with the sort's first
// collective (every build: every PE throws jquick::Error if the digests differ), which covers
// every field when the PEs agree on the layer. PEs that disagree on the layer (or, on a
// sub-range of an MPI communicator, on the RBC wildcard mode) never reach a common first
// collective: the checked build (//core/jquick:jquick_checked, JQUICK_CHECK_CONFIG) adds one
// MPI_Allreduce of the digest before the layer is set up, so they throw instead of hanging.
std::uint64_t config_digest(const Config& config);
// The digest reduced to 20 bits (plus 1), so that p * sum d^2 fits 64 bits up to p = 2^22.
inline long long config_check_value(const Config& config) {
  return static_cast<long long>(config_digest(config) & 0xfffff) + 1;
}
// True iff the p values whose sum is `sum` and whose sum of squares is `sum_squares` are equal.
inline bool configs_agree(long long sum, long long sum_squares, int p) {
  return static_cast<unsigned __int128>(sum_squares) * static_cast<unsigned>(p) ==
         static_cast<unsigned __int128>(sum) * static_cast<unsigned __int128>(sum);
}
// "the PEs passed different Configs ...", naming this PE's.
std::string config_mismatch_message(const Config& config);
std::string describe(const Config& config);

const char* layer_name(Layer layer);
const char* schedule_name(Schedule schedule);
// Accepts "rbc", "mpi_create_group" / "create_group", "mpi_split" / "split"; throws Error.
Layer parse_layer(const std::string& text);
Schedule parse_schedule(const std::string& text);

}  // namespace jquick
