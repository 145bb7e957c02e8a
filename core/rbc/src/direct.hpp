#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>

#include "access.hpp"
#include "bare.hpp"
#include "buffers.hpp"
#include "collective.hpp"
#include "cost/charge.hpp"
#include "engine.hpp"
#include "mpi_error.hpp"
#include "rbc/comm.hpp"
#include "sequencer.hpp"
#include "tags.hpp"
#include "wire.hpp"

namespace rbc::detail {

// A blocking collective run directly: on a rank whose engine has nothing in flight, a short
// collective's state machine, operation object and wire bookkeeping cost more than its messages
// (700-2,300 instructions per call on two ranks against MPI's own 900-2,700 in all). Run directly,
// the collective sends and receives the messages its state machine would, under the same labels,
// in the same order, so that a member that runs the state machine (its engine was busy) exchanges
// them with one that runs directly. On the communicator whose messages travel bare (bare.hpp)
// these are MPI_Send, MPI_Recv and MPI_Sendrecv; on any other the envelope goes with them
// (send_now, recv_now, sendrecv_now), as in the state machine run at once. Safe for the reason
// runs_immediately is: a blocking send goes only along a tree edge or to a partner whose same
// round receives it, and a receive waits only for a message a peer's earlier step sent.
class Direct {
 public:
  explicit Direct(const RangeComm& comm)
      : comm_(comm),
        engine_(live_engine(comm)),
        sequencer_(CommAccess::sequencer(comm)),
        sequence_(sequencer_.start()),
        bare_(sequencer_.bare_base() >= 0) {
    cost::charge(cost::Kernel::collective, 1);  // simulation only, as Collective's
  }
  ~Direct() { sequencer_.finish(); }
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  // The bytes up to which a collective runs directly: a short one's time is mostly per-call work.
  // Longer ones keep their state machines, which overlap copies with messages (on two ranks of the
  // 2-core VM, run directly, an allgather of 64 KiB per rank took 1.5x the state machine's time
  // and a reduce of 512 KiB 1.25x; up to 8 KiB per rank neither was slower; docs/benchmarks.md,
  // "Short blocking collectives run directly").
  static constexpr long long kMaxBytes = 16384;

  // Whether `comm`'s blocking collective of `type` whose vector (or, for gathers, whole block)
  // has `bytes` runs directly on this rank now. Where messages carry envelopes, every message
  // must fit in place with its envelope (sendrecv_now): a predefined type, kNowInPlaceBytes.
  static bool applies(const RangeComm& comm, MPI_Datatype type, long long bytes) {
    if (bytes > kMaxBytes || !runs_immediately(comm)) return false;
    return CommAccess::sequencer(comm).bare_base() >= 0 || (bytes <= kNowInPlaceBytes && predefined_size(type) > 0);
  }

  void send(const void* buf, int count, MPI_Datatype type, int mpi_dest, Phase phase) {
    if (!bare_) {
      send_now(comm_, engine_, buf, count, type, mpi_dest, label(phase));
      return;
    }
    check_mpi(MPI_Send(buf, count, type, mpi_dest, tag(phase), engine_.comm()), "MPI_Send");
  }
  void receive(void* buf, int count, MPI_Datatype type, int mpi_source, Phase phase) {
    if (!bare_) {
      if (mpi_source == MPI_PROC_NULL) return;
      std::uint64_t bytes = 0;
      recv_now(comm_, engine_, buf, count, type, mpi_source, label(phase), &bytes);
      require_filled(engine_, bytes, predefined_size(type), count, mpi_source);
      return;
    }
    MPI_Status status;
    received(MPI_Recv(buf, count, type, mpi_source, tag(phase), engine_.comm(), &status), status, count, type,
             mpi_source, phase);
  }
  // Sends to `mpi_dest` and receives from `mpi_source` (either may be MPI_PROC_NULL) at once: a
  // butterfly round's exchange with one partner, or a shift.
  void sendrecv(const void* buf, int count, int mpi_dest, void* rbuf, int rcount, int mpi_source, MPI_Datatype type,
                Phase phase) {
    if (!bare_) {
      if (mpi_source == MPI_PROC_NULL) {
        send(buf, count, type, mpi_dest, phase);
        return;
      }
      std::uint64_t bytes = 0;
      sendrecv_now(comm_, engine_, buf, count, mpi_dest, rbuf, rcount, mpi_source, type, label(phase), &bytes);
      require_filled(engine_, bytes, predefined_size(type), rcount, mpi_source);
      return;
    }
    MPI_Status status;
    const int t = tag(phase);
    received(MPI_Sendrecv(buf, count, type, mpi_dest, t, rbuf, rcount, type, mpi_source, t, engine_.comm(), &status),
             status, rcount, type, mpi_source, phase);
  }
  void exchange(const void* buf, int count, void* rbuf, int rcount, MPI_Datatype type, int mpi_partner, Phase phase) {
    sendrecv(buf, count, mpi_partner, rbuf, rcount, mpi_partner, type, phase);
  }

  ScratchPool& scratch() { return engine_.scratch(); }

 private:
  static Engine& live_engine(const RangeComm& comm) {
    Engine& engine = CommAccess::engine(comm);
    require_live(engine);
    return engine;
  }

  // A bare receive that MPI completed with `rc`. Every receive of a direct collective expects its
  // message whole: a shorter one means members passed different counts, which would otherwise
  // leave the rest of the buffer as it was.
  void received(int rc, const MPI_Status& status, int count, MPI_Datatype type, int mpi_source, Phase phase) const {
    if (rc != MPI_SUCCESS) [[unlikely]] refuse_bare(engine_, rc, count, mpi_source, label(phase));
    if (mpi_source != MPI_PROC_NULL) require_filled(engine_, status, type, count, mpi_source);
  }
  Label label(Phase phase) const {
    return bare_ ? bare_collective_label(sequence_, phase) : collective_label(sequence_, phase);
  }
  int tag(Phase phase) const { return engine_.layout().bare_collective_tag(label(phase)); }

  const RangeComm& comm_;
  Engine& engine_;
  Sequencer& sequencer_;
  std::uint32_t sequence_;
  bool bare_;
};

// A directly run collective's temporary vector: on the stack up to 256 bytes (a short
// collective's, which a pooled buffer would cost more instructions than its messages), else from
// the engine's scratch pool.
class DirectBuffer {
 public:
  DirectBuffer(ScratchPool& pool, const TypeInfo& info, int count) {
    if (info.span(count) <= sizeof(local_)) [[likely]] {
      data_ = local_ - info.true_lb;
    } else {
      data_ = pooled_.emplace(pool, info, count).get();
    }
  }
  DirectBuffer(const DirectBuffer&) = delete;
  DirectBuffer& operator=(const DirectBuffer&) = delete;

  void* get() const { return data_; }

 private:
  alignas(16) char local_[256];
  std::optional<TypedBuffer> pooled_;  // empty, and free to destroy, for a short vector
  void* data_ = nullptr;
};

}  // namespace rbc::detail
