#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "access.hpp"
#include "bare.hpp"
#include "buffers.hpp"
#include "cost/charge.hpp"
#include "engine.hpp"
#include "operation.hpp"
#include "rbc/comm.hpp"
#include "sequencer.hpp"
#include "tags.hpp"
#include "tree.hpp"
#include "wire.hpp"

namespace rbc::detail {

// Message phases inside one collective (the low bits of its tags; at most 31).
// kAgree: the checked build's signature handshake (below), run before the collective's own steps.
enum Phase : int { kUp = 0, kDown = 1, kCount = 2, kForward = 3, kAgree = 31 };

// The checked build (RBC_CHECK_ENVELOPE) starts every collective with a handshake: each member
// sends an empty message carrying the collective's signature (kind, root, count) to its parent
// in the binomial tree rooted at rank 0, and waits for its children's, before the collective's
// own messages. The tree does not depend on the signature, so when all members start their n-th
// collective on the communicator the handshake completes whatever they called, and every edge
// compares two members' signatures at the receiver (wire.cpp): if any two members disagree, some
// parent sees a child's different signature and aborts with "rbc: mismatched collectives ...",
// naming both. This catches what the collective's own messages cannot: members that disagree on
// the root (their trees differ, so messages never meet), counts only the root would compare,
// and collectives whose messages only flow away from the odd member. Cost: one empty message
// per member and a tree's depth of latency per collective, in the checked build only.
// RBC_TEST_NO_AGREEMENT (the rbc_checked_noagree build) leaves it out, to show what it catches.
#if defined(RBC_CHECK_ENVELOPE) && !defined(RBC_TEST_NO_AGREEMENT)
inline constexpr bool kAgreeOnSignature = true;
#else
inline constexpr bool kAgreeOnSignature = false;
#endif

// A blocking collective on a rank whose engine has nothing in flight runs immediately: its state
// machine lives on the caller's stack and receives block in MPI (recv_now) as the steps post
// them; sends stay nonblocking and complete before the next step. The messages are the same as
// a request's, so members taking either path interoperate. No request, engine registration or
// wait loop: a short collective on two ranks takes 0.7-0.9x the time (docs/benchmarks.md). Safe
// because every step posts its sends before its receives, and a receive waits only for a message
// a peer's earlier step posted. The checked build always runs requests (its collectives start
// with the signature handshake, and its waits watch for stalls).
#ifdef RBC_CHECK_ENVELOPE
inline constexpr bool kImmediateCollectives = false;
#else
inline constexpr bool kImmediateCollectives = true;
#endif

inline bool runs_immediately(const RangeComm& comm) { return kImmediateCollectives && comm.engine()->idle(); }

// What a collective is, as far as its members must agree (checked in the checked build).
enum class Kind : std::uint32_t { bcast = 1, reduce, allreduce, scan, exscan, scan_and_bcast, gather, allgather, gatherm, barrier, allgatherm, allgatherm_fold };

inline std::uint64_t signature(Kind kind, int root, int count) {
  return (static_cast<std::uint64_t>(kind) << 56) | (static_cast<std::uint64_t>((root + 1) & 0xffffff) << 32) |
         static_cast<std::uint32_t>(count);
}

// Base of the collective state machines: owns the collective's sequence number and runs
// step() each time everything the previous step posted has completed.
class Collective : public Operation {
 public:
  // `root` -1 where there is none, `count` -1 where members legitimately pass different counts.
  Collective(const RangeComm& comm, Kind kind, int root, int count)
      : Operation(comm),
        sequence_(CommAccess::sequencer(comm).start()),  // Operation(comm) checked comm
        signature_(signature(kind, root, count)) {
    cost::charge(cost::Kernel::collective, 1);  // simulation only: the call's own bookkeeping
  }
  ~Collective() override { release(); }

  // Runs the collective to its end (see runs_immediately); nothing else may be in flight.
  void run_immediately() {
    immediate_ = true;
    try {
      while (!finished_) {
        step();
        wait_awaited();
        in_place_busy_ = false;
      }
    } catch (...) {
      wait_awaited();
      throw;
    }
    release();
    finished();
  }

  bool progress(bool may_test) final {
    while (awaited_complete(may_test)) {
      in_place_busy_ = false;
      if (finished_) {
        if (!released_) {
          release();
          finished();
        }
        return true;
      }
      if (kAgreeOnSignature && !agreed_) {
        agree();
        continue;
      }
      step();
    }
    return false;
  }

 protected:
  // Runs the next state: posts requests and/or local work; calls finish() in the last state.
  virtual void step() = 0;
  void finish() { finished_ = true; }
  // Runs once, when the operation has completed locally.
  virtual void finished() {}

#ifdef RBC_CHECK_ENVELOPE
  // One label for all of a collective's messages: then a rank running another collective (or
  // the same with other arguments) receives its partners' messages and names the mismatch,
  // whatever algorithm and phases each side picked. Phases are never needed for correctness:
  // two messages of one collective between the same two ranks in the same direction are sent
  // and received in the same order, and MPI keeps that order.
  Label label(Phase) const { return collective_label(sequence_, kUp); }
#else
  Label label(Phase phase) const {
    return bare_ ? bare_collective_label(sequence_, phase) : collective_label(sequence_, phase);
  }
#endif

 public:
  // Called for a blocking collective before it posts anything: on the communicator whose
  // messages travel bare (bare.hpp), its messages do too. Every member knows whether a call is
  // blocking; as in MPI, a blocking collective never matches a nonblocking one.
  void mark_blocking() { bare_ = CommAccess::sequencer(comm()).bare_base() >= 0; }

 protected:
  void send(const void* buf, int count, MPI_Datatype type, int rank, Phase phase) {
    if (immediate_ && tree_sends_) {
      send_now(comm(), engine(), buf, count, type, CommAccess::mpi_rank(comm(), rank), label(phase));
      return;
    }
    const int mpi_dest = CommAccess::mpi_rank(comm(), rank);
    const cost::Kernel charge = immediate_ ? cost::Kernel::collective_message : cost::Kernel::message;
    if (!in_place_busy_ &&
        isend_in_place(*this, comm(), engine(), in_place_wire_, buf, count, type, mpi_dest, label(phase), charge)) {
      in_place_busy_ = true;  // until the step's sends complete
      if (!immediate_) settle_send(*this);
      return;
    }
    post_send(*this, comm(), buf, count, type, mpi_dest, label(phase), signature_, charge);
  }
  // For collectives whose messages only go along the edges of a tree, away from the root or
  // towards it, and a member receives from its peers before it sends on: no peer ever waits for
  // this member's receive while this member sends to it. Run immediately, their sends may then
  // block in MPI (a standard send; no request, no pooled buffer), which needs no buffering by
  // MPI to finish. A step that sends to several children sends one after the other.
  void sends_along_tree() { tree_sends_ = true; }
  // Receives exactly `count` elements: a shorter message means the members' counts differ, and
  // the collective fails with MPI_ERR_COUNT instead of leaving part of the buffer unwritten.
  void receive(void* buf, int count, MPI_Datatype type, int rank, Phase phase) {
    const int mpi_source = CommAccess::mpi_rank(comm(), rank);
    if (immediate_) {
      // completed() sees the index a request's receive would have: its steps post their sends
      // first, so the receive's slot would come after every slot awaited so far. Nothing is
      // awaited for it (a slot of its own cost 100 instructions per receive, to fill and clear).
      std::uint64_t bytes = 0;
      const MPI_Status status = recv_now(comm(), engine(), buf, count, type, mpi_source, label(phase), &bytes);
      require_filled(engine(), bytes, TypeInfo(type).size, count, mpi_source);
      deliver(awaited().size(), status);
      return;
    }
    post_recv(*this, comm(), buf, count, type, mpi_source, label(phase), signature_, true);
  }
  // Receives at most `count` elements; completed() gets the status, which says how many came.
  void receive_at_most(void* buf, int count, MPI_Datatype type, int rank, Phase phase) {
    const int mpi_source = CommAccess::mpi_rank(comm(), rank);
    if (immediate_) {
      deliver(awaited().size(), recv_now(comm(), engine(), buf, count, type, mpi_source, label(phase)));
      return;
    }
    post_recv(*this, comm(), buf, count, type, mpi_source, label(phase), signature_);
  }

  // One round of a butterfly: sends to `rank` and receives from it. Beyond the eager size each
  // side's envelope announces the tag it receives the payload under (post_exchange). Both sides
  // pass mirrored counts, so they take the same path.
  void exchange(const void* buf, int count, const TypeInfo& info, void* rbuf, int rcount, const TypeInfo& rinfo,
                int rank, Phase phase) {
    if (static_cast<long long>(count) * info.size <= kEagerBytes &&
        static_cast<long long>(rcount) * rinfo.size <= kEagerBytes) {
      send(buf, count, info.type, rank, phase);
      receive(rbuf, rcount, rinfo.type, rank, phase);
      return;
    }
    const cost::Kernel charge = immediate_ ? cost::Kernel::collective_message : cost::Kernel::message;
    const std::size_t envelope =
        post_exchange(*this, comm(), buf, count, info.type, rbuf, rcount, rinfo.type,
                      CommAccess::mpi_rank(comm(), rank), label(phase), signature_, charge);
    // Run at once, the step's own work (a copy, say) would otherwise hold this side's payload
    // back until its end: wait for the partner's envelope, which sends it.
    if (immediate_) wait_slot(envelope);
  }

  // Posts one receive of `count` elements from each child of `tree` (their subtree results,
  // travelling up) into fresh buffers appended to `parts`.
  void receive_from_children(const BinomialTree& tree, const TypeInfo& info, int count,
                             std::vector<TypedBuffer>& parts) {
    parts.reserve(parts.size() + tree.children().size());
    for (int c : tree.children()) {
      parts.emplace_back(scratch(), info, count);
      receive(parts.back().get(), count, info.type, tree.absolute(c), kUp);
    }
  }

  ScratchPool& scratch() { return engine().scratch(); }

  int state_ = 0;

 private:
  // Posts the handshake (see kAgreeOnSignature); the collective's steps start once it completed.
  void agree() {
    agreed_ = true;
    const BinomialTree tree(comm().size(), 0, comm().rank());
    for (int c : tree.children()) receive(&agree_token_, 0, MPI_BYTE, tree.absolute(c), kAgree);
    if (!tree.is_root()) send(&agree_token_, 0, MPI_BYTE, tree.absolute(tree.parent()), kAgree);
  }

  void release() {
    if (!released_) {
      released_ = true;
      CommAccess::sequencer(comm()).finish();
    }
  }

  std::uint32_t sequence_;
  std::uint64_t signature_;
  bool finished_ = false;
  bool released_ = false;
  bool agreed_ = false;
  bool immediate_ = false;
  bool bare_ = false;
  bool tree_sends_ = false;
  // A step's first small send goes from here (isend_in_place).
  bool in_place_busy_ = false;
  alignas(std::uint64_t) char in_place_wire_[kInPlaceWireBytes];
  char agree_token_ = 0;
};

}  // namespace rbc::detail
