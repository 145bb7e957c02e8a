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
  // How many low bits of a member's rank number it within a block on one node: a - t where the
  // base communicator's aligned blocks of 2^a ranks are each on one node, the range starts on
  // such a block and its stride is 2^t < 2^a; 0 otherwise (and for listed groups, whose ranks
  // are list positions).
  static int node_bits(const RangeComm& c) {
    const int a = c.engine_->node_bits();
    if (a == 0 || c.table_ || c.range_.first() % (1 << a) != 0) return 0;
    int t = 0;
    while ((1 << t) < c.range_.stride()) ++t;
    return (1 << t) == c.range_.stride() && t < a ? a - t : 0;
  }
  // MPI rank of member `rank` (throws rbc::Error unless 0 <= rank < size).
  static int mpi_rank(const RangeComm& c, int rank) {
    const int index = c.range_.at(rank);
    return c.table_ ? c.table_->ranks[static_cast<std::size_t>(index)] : index;
  }
};

}  // namespace rbc::detail
