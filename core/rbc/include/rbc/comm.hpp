#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "rbc/range.hpp"

namespace rbc {

namespace detail {
class Sequencer;
class Engine;
struct MemberTable;
}

// Tags users may pass to RBC point-to-point calls: 0..max_user_tag. The remaining bits of the
// 31-bit MPI tag carry the communicator's context, so equal user tags on different communicators
// (even ones overlapping in many ranks) never match each other.
inline constexpr int max_user_tag = (1 << 13) - 1;

// A communicator over a strided range of ranks of an MPI communicator.
//
// Creating one (from_mpi, split, janus_split) is O(1) time and memory and sends no message: each
// member derives the new context from the parent's context and the range. A caller outside the
// requested range gets a communicator whose is_member() is false; every operation on it throws.
// Copies are handles to the same communicator (they share its collective sequence). Splitting
// the same range twice from one parent yields the same context: do not run collectives on both
// at the same time (as with two handles of one MPI communicator).
class RangeComm {
 public:
  // Not a member of anything; is_member() is false.
  RangeComm() = default;

  // All ranks of `comm`. Local, no communication. Throws rbc::Error if the MPI library's
  // MPI_TAG_UB is below 2^31 - 1 (RBC needs the full tag space; Open MPI and SMPI provide it).
  static RangeComm from_mpi(MPI_Comm comm);

  // Members first..last (stride) of this communicator, in this communicator's ranks. Only
  // members of the new range need to call it; others get a non-member communicator.
  RangeComm split(int first, int last, int stride = 1) const;

  // The two halves of a janus split: 0..left_last and right_first..size()-1, which may overlap
  // (right_first <= left_last). The caller gets both, and is a member of one or of both.
  std::pair<RangeComm, RangeComm> janus_split(int left_last, int right_first) const;

  bool is_member() const { return rank_ >= 0; }
  int rank() const;
  int size() const;
  // The members as a range of the base numbering: ranks of mpi_comm(), or, for communicators
  // made by comm_create_group from a list of ranks, positions in that list.
  const Range& range() const;
  int first() const { return range().first(); }
  int last() const { return range().last(); }
  int stride() const { return range().stride(); }

  MPI_Comm mpi_comm() const { return mpi_comm_; }
  // Rank in mpi_comm() of member `rank` (throws if out of range).
  int mpi_rank(int rank) const;
  // Member rank of an mpi_comm() rank, or -1.
  int rank_of_mpi(int mpi_rank) const;

  // 64-bit identity, computed from the parent's identity and the range; context() is the part
  // of it that travels in MPI tags (17 bits).
  std::uint64_t id() const { return id_; }
  std::uint32_t context() const;

  // Internal: per-communicator collective sequence shared by copies.
  detail::Sequencer& sequencer() const;
  // Internal: the progress engine shared by all communicators derived from one from_mpi.
  const std::shared_ptr<detail::Engine>& engine() const;
  // Internal: a communicator over the listed ranks of mpi_comm() (in list order), derived from
  // this one, for comm_create_group. The caller must be listed.
  RangeComm from_list(std::shared_ptr<const detail::MemberTable> table, std::uint64_t id) const;

 private:
  RangeComm(MPI_Comm comm, Range range, int rank, std::uint64_t id,
            std::shared_ptr<detail::Engine> engine,
            std::shared_ptr<const detail::MemberTable> table = nullptr);
  void require_member() const;
  RangeComm child(const Range& members, std::uint64_t salt) const;

  MPI_Comm mpi_comm_ = MPI_COMM_NULL;
  Range range_{0, 0, 1};
  int rank_ = -1;
  std::uint64_t id_ = 0;
  std::shared_ptr<detail::Sequencer> sequencer_;
  std::shared_ptr<detail::Engine> engine_;
  // Set for communicators over a rank list: range_ then indexes this table.
  std::shared_ptr<const detail::MemberTable> table_;
};

}  // namespace rbc
