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
struct CommKey;
struct CommAccess;
}

// Tags users may pass to RBC point-to-point calls: 0..max_user_tag, the range every MPI
// library guarantees. Tags travel in each message's envelope (or, for the one communicator per
// MPI communicator whose messages travel bare, in bits of the MPI tag no other communicator's
// message has), so equal tags on different communicators never match each other.
inline constexpr int max_user_tag = 32767;

// A communicator over a strided range of ranks of an MPI communicator.
//
// Creating one by split or janus_split is O(1) time and memory and sends no message: each
// member derives the new communicator's key locally (see below). A caller outside the
// requested range gets a communicator whose is_member() is false; every operation on it throws.
// Copies are handles to the same communicator (they share its collective sequence).
//
// Every from_mpi and every split makes a new communicator, isolated from all others: no message
// of one is ever received by another, whatever tags the user passes, even when they span the
// same ranks. The rule that makes this work without communication is MPI's: the members of a
// communicator create communicators over the same member set in the same order (and every
// process of an MPI communicator calls from_mpi on it in the same order).
class RangeComm {
 public:
  // Not a member of anything; is_member() is false.
  RangeComm() = default;
  RangeComm(const RangeComm&) = default;
  RangeComm& operator=(const RangeComm&) = default;
  // A moved-from RangeComm is empty, as if default-constructed: using it throws rbc::Error.
  RangeComm(RangeComm&& other) noexcept
      : mpi_comm_(std::exchange(other.mpi_comm_, MPI_COMM_NULL)),
        range_(other.range_),
        rank_(std::exchange(other.rank_, -1)),
        id_(other.id_),
        sequencer_(std::move(other.sequencer_)),
        engine_(std::move(other.engine_)),
        table_(std::move(other.table_)) {}
  RangeComm& operator=(RangeComm&& other) noexcept {
    if (this != &other) {
      mpi_comm_ = std::exchange(other.mpi_comm_, MPI_COMM_NULL);
      range_ = other.range_;
      rank_ = std::exchange(other.rank_, -1);
      id_ = other.id_;
      sequencer_ = std::move(other.sequencer_);
      engine_ = std::move(other.engine_);
      table_ = std::move(other.table_);
    }
    return *this;
  }
  ~RangeComm() = default;

  // All ranks of `comm`. Collective over `comm`: an exclusive scan of 8 bytes and an allreduce of
  // 16 (where nodes start, see node_members, and the handle's identity). The first handle made on
  // `comm` sends its point-to-point messages bare, without an envelope (README, "Isolation"). Works with any MPI
  // library (any MPI_TAG_UB from the standard's 32767 up). RBC sends on `comm` itself with tags
  // of its own: a raw MPI receive with MPI_ANY_TAG on `comm` may take RBC's messages (give such
  // traffic a communicator of its own). Freeing `comm` while RangeComms of it are in use makes
  // their next operation throw rbc::Error (class MPI_ERR_COMM).
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

  // How many consecutive members share a node, as the collectives schedule by it: 2^k where
  // mpi_comm()'s aligned blocks of 2^k' ranks each share a node (from_mpi compares neighbours'
  // MPI_Get_processor_name), this range starts on such a block and its stride is 2^(k' - k);
  // 1 otherwise, and for groups made from a list of ranks. Allreduce (commutative operations),
  // barrier and short allgathers take their rounds across nodes in an order that spreads a
  // node's messages over the nodes they go to.
  int node_members() const;
  // Whether all members are on one node: every rank of mpi_comm() is (from_mpi found one
  // processor name), or the members lie in one aligned block that node_members' blocks are made
  // of. False where nothing is known. For schedules only: results never depend on it.
  bool on_one_node() const;

  MPI_Comm mpi_comm() const { return mpi_comm_; }
  // Rank in mpi_comm() of member `rank` (throws if out of range).
  int mpi_rank(int rank) const;
  // Member rank of an mpi_comm() rank, or -1.
  int rank_of_mpi(int mpi_rank) const;

  // 64-bit digest of the communicator's exact key (for display; distinct communicators may,
  // rarely, share a digest, but never a key).
  std::uint64_t id() const { return id_; }
  // Internal: the exact key every message of this communicator carries.
  const detail::CommKey& key() const;

  // Internal: per-communicator state shared by copies (key, collective sequence).
  detail::Sequencer& sequencer() const;
  // Internal: the progress engine shared by all communicators derived from one from_mpi.
  const std::shared_ptr<detail::Engine>& engine() const;
  // Internal: a communicator over the listed ranks of mpi_comm() (in list order), derived from
  // this one, for comm_create_group. The caller must be listed.
  // `list` identifies the list (see detail::CommKey). `counted`: whether the generation counts
  // earlier creations over the list (false for a list named by its creation's tag).
  RangeComm from_list(std::shared_ptr<const detail::MemberTable> table, std::uint64_t list,
                      bool counted = true) const;
  // Internal: split for comm_create_group over a range; the tag (not the creation order) keeps
  // concurrent creations over one range apart.
  RangeComm split_tagged(int first, int last, int stride, int tag) const;

 private:
  friend struct detail::CommAccess;
  RangeComm(MPI_Comm comm, Range range, int rank, const detail::CommKey& key,
            std::shared_ptr<detail::Engine> engine,
            std::shared_ptr<const detail::MemberTable> table = nullptr);
  void require_member() const;
  RangeComm child(const Range& members, std::uint32_t tag_salt = 0) const;

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
