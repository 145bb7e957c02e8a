#pragma once

#include "engine.hpp"
#include "key.hpp"
#include "member_table.hpp"
#include "rbc/comm.hpp"
#include "sequencer.hpp"

// A communicator's state without the membership check each public accessor repeats: for the
// per-message paths, which check once (checked()) and then read several fields. Every public
// accessor costs an out-of-line call and a look at the engine; a small message reads five or
// six of them.
namespace rbc::detail {

struct CommAccess {
  // Throws, as every accessor does, unless the caller is a member and the base communicator is
  // live; then the reads below are valid.
  static void checked(const RangeComm& c) { c.require_member(); }

  static Engine& engine(const RangeComm& c) { return *c.engine_; }
  static int rank(const RangeComm& c) { return c.rank_; }
  static int size(const RangeComm& c) { return c.range_.size(); }
  static Sequencer& sequencer(const RangeComm& c) { return *c.sequencer_; }
  static const CommKey& key(const RangeComm& c) { return c.sequencer_->key(); }
  // MPI rank of member `rank` (throws rbc::Error unless 0 <= rank < size).
  static int mpi_rank(const RangeComm& c, int rank) {
    const int index = c.range_.at(rank);
    return c.table_ ? c.table_->ranks[static_cast<std::size_t>(index)] : index;
  }
};

}  // namespace rbc::detail
