#pragma once

#include <mpi.h>

#include <cstdint>

#include "access.hpp"
#include "engine.hpp"
#include "mpi_error.hpp"
#include "rbc/comm.hpp"
#include "tags.hpp"

// Bare messages: the user messages and the blocking collectives' messages of the one
// communicator per MPI communicator whose tags alone say whose they are (Sequencer::bare_base)
// travel without an envelope, straight between the users' buffers, as MPI's own do. A blocking
// collective's tag holds only the low bits of its sequence number, which is enough: on each
// rank blocking collectives run one after the other, so between two ranks their messages under
// one tag are sent and received in the same order (and a collective's own messages between two
// ranks in one direction are, collective.hpp), which MPI keeps. Nonblocking collectives, which
// may overtake each other, keep their envelopes. The simulation charges bare messages no work
// of RBC's (cost::charge): what is left is argument checks, about 200 instructions per send and
// receive pair.
namespace rbc::detail {

// The MPI tag of a bare message, or -1 where the message carries an envelope: a user message or
// a blocking collective's (bare_collective_label) on the communicator whose messages travel bare.
// `comm` has been checked.
[[gnu::always_inline]] inline int bare_tag(const RangeComm& comm, const Label& label) {
  const int base = CommAccess::sequencer(comm).bare_base();
  if (base < 0 || label.collective == 1) return -1;
  return label.collective == 0 ? base | label.tag : CommAccess::engine(comm).layout().bare_collective_tag(label);
}

// A bare receive of `count` elements that MPI completed with `error`: a message larger than the
// buffer goes through the communicator's error handler as RBC's own errors do, then throws
// rbc::Error; any other error throws. Only MPI can find such a message (no envelope told RBC its
// size), and not every MPI does: Open MPI 4.1.4 writes a single-copy (CMA) message past the buffer.
// docs/misuse.md, class 4.
[[noreturn]] void refuse_bare(const Engine& engine, int error, int count, int mpi_source, const Label& label);

// A message of a collective (bare, or with its envelope) that holds another number of elements
// than the `count` its receive expects (`received`, or MPI_UNDEFINED for a part of an element):
// members passed different counts. Through the communicator's error handler, then rbc::Error
// MPI_ERR_COUNT.
[[noreturn]] void refuse_short(const Engine& engine, int received, int count, int mpi_source);

// refuse_short unless a message of `bytes` holds exactly `count` elements of `size` bytes: every
// receive of a collective must fill its buffer.
inline void require_filled(const Engine& engine, std::uint64_t bytes, int size, int count, int mpi_source) {
  const auto element = static_cast<std::uint64_t>(size);
  if (bytes == element * static_cast<std::uint64_t>(count)) [[likely]] return;
  refuse_short(engine, element > 0 && bytes % element == 0 ? static_cast<int>(bytes / element) : MPI_UNDEFINED, count,
               mpi_source);
}

// The same for a bare receive that MPI completed with `status`, in elements of `type`.
inline void require_filled(const Engine& engine, const MPI_Status& status, MPI_Datatype type, int count,
                           int mpi_source) {
  int got = 0;
  check_mpi(MPI_Get_count(&status, type, &got), "MPI_Get_count");
  if (got != count) [[unlikely]] refuse_short(engine, got, count, mpi_source);
}

// The blocking send of a bare message (MPI_Send); false, with nothing sent, where the message
// carries an envelope. Inline: the blocking point-to-point calls take it before the general path
// (send_now), whose set-up costs a bare message more than its own work.
[[gnu::always_inline]] inline bool send_bare(const RangeComm& comm, const Engine& engine, const void* buf, int count,
                                             MPI_Datatype type, int mpi_dest, const Label& label) {
  const int bare = bare_tag(comm, label);
  if (bare < 0) return false;
  check_mpi(MPI_Send(buf, count, type, mpi_dest, bare, engine.comm()), "MPI_Send");
  return true;
}

// The blocking receive of a bare message (MPI_Recv) into `status`, which then carries the
// label's tag; false, with nothing received, where the message carries an envelope. Inline, as
// send_bare.
[[gnu::always_inline]] inline bool recv_bare(const RangeComm& comm, const Engine& engine, void* buf, int count,
                                             MPI_Datatype type, int mpi_source, const Label& label,
                                             MPI_Status& status) {
  const int bare = bare_tag(comm, label);
  if (bare < 0) return false;
  const int rc = MPI_Recv(buf, count, type, mpi_source, bare, engine.comm(), &status);
  if (rc != MPI_SUCCESS) [[unlikely]] refuse_bare(engine, rc, count, mpi_source, label);
  status.MPI_TAG = label.tag;
  return true;
}

}  // namespace rbc::detail
