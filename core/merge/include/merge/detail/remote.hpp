#pragma once

// Type-erased machinery behind merge::stable_merge: where every element lives, and one-sided
// access to the two input sequences under the synchronisation of the chosen variant.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "merge/options.hpp"

namespace merge::detail {

// The block distribution of one sequence over p PEs. Exactly balanced layouts
// (floor(total/p) + [r < total mod p]) are recognised and located in O(1) without a table;
// any other layout keeps all p + 1 prefix offsets (an MPI_Allgather).
class Layout {
 public:
  static Layout balanced(std::uint64_t total, int p);
  static Layout from_offsets(std::vector<std::uint64_t> offsets);  // p + 1 prefix sums

  std::uint64_t total() const { return total_; }
  int size() const { return p_; }
  bool is_balanced() const { return offsets_.empty(); }
  std::uint64_t offset(int rank) const;
  std::uint64_t count(int rank) const { return offset(rank + 1) - offset(rank); }
  // The PE holding global index `index` (< total) and the index inside its block.
  std::pair<int, std::uint64_t> locate(std::uint64_t index) const;

 private:
  std::uint64_t total_ = 0;
  int p_ = 1;
  std::vector<std::uint64_t> offsets_;
};

// Collective: the layouts of A and B and this PE's output range [out_begin, out_end).
struct Distribution {
  Layout a, b;
  std::uint64_t out_begin = 0, out_end = 0;
  int rank = 0, size = 1;
};
Distribution describe(std::uint64_t m_local, std::uint64_t n_local, std::int64_t output_count,
                      MPI_Comm comm);

// Checks that `type` describes exactly `element_size` bytes (size and extent); throws Error.
void check_datatype(MPI_Datatype type, std::size_t element_size);

// Throws merge::Error naming `what` if an MPI call failed.
void check_mpi(int code, const char* what);

// Two windows (A and B) and reads from them with the variant's synchronisation:
// - fence variants: open_epoch() / close_epoch() around get() calls (MPI_Get);
// - lock_shared: get() locks, reads and unlocks: the value is there when get() returns;
// - rget_lock_all: get() starts an MPI_Rget in the PE's lock_all epoch, complete() waits.
// Reads of this PE's own blocks are plain copies in every variant.
class RemoteInputs {
 public:
  enum Sequence { seq_a = 0, seq_b = 1 };

  // Collective (window creation). The blocks must stay unchanged until the object is gone.
  RemoteInputs(const void* a, const void* b, std::size_t element_size, MPI_Datatype type,
               const Distribution& dist, MPI_Comm comm, const Options& options);
  // Collective (MPI_Win_free).
  ~RemoteInputs();
  RemoteInputs(const RemoteInputs&) = delete;
  RemoteInputs& operator=(const RemoteInputs&) = delete;

  Variant variant() const { return variant_; }
  const Distribution& distribution() const { return dist_; }

  void open_epoch();
  void close_epoch();
  // Reads elements [index, index + count) of a sequence into out (any number of owners).
  void get(Sequence seq, std::uint64_t index, std::uint64_t count, void* out);
  void complete();

 private:
  void get_from_owner(Sequence seq, int owner, std::uint64_t local_index, std::uint64_t count,
                      char* out);

  Distribution dist_;
  MPI_Comm comm_;
  Variant variant_;
  std::size_t element_size_;
  MPI_Datatype type_;
  const char* local_[2];
  MPI_Win windows_[2] = {MPI_WIN_NULL, MPI_WIN_NULL};
  std::vector<MPI_Request> pending_;
  bool lock_all_open_ = false;
};

}  // namespace merge::detail
