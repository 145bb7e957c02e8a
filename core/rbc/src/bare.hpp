#pragma once

#include <mpi.h>

#include "access.hpp"
#include "rbc/comm.hpp"
#include "tags.hpp"

// Bare messages: the user messages and the blocking collectives' messages of the one
// communicator per MPI communicator whose tags alone say whose they are (Sequencer::bare_base)
// travel without an envelope, straight between the users' buffers, as MPI's own do. A blocking
// collective's tag holds only the low bits of its sequence number, which is enough: on each
// rank blocking collectives run one after the other, so between two ranks their messages under
// one tag are sent and received in the same order (and a collective's own messages between two
// ranks in one direction are, collective.hpp), which MPI keeps. Nonblocking collectives, which
// may overtake each other, keep their envelopes. The simulation charges them no work of RBC's (cost::charge):
// what is left is argument checks, about 200 instructions per send and receive pair.
namespace rbc::detail {

// The MPI tag of a bare message, or -1 where the message carries an envelope: a user message or
// a blocking collective's (bare_collective_label) on the communicator whose messages travel bare.
// `comm` has been checked.
[[gnu::always_inline]] inline int bare_tag(const RangeComm& comm, const Label& label) {
  const int base = CommAccess::sequencer(comm).bare_base();
  if (base < 0 || label.collective == 1) return -1;
  return label.collective == 0 ? base | label.tag : CommAccess::engine(comm).layout().bare_collective_tag(label);
}

// A bare receive's status: MPI's, with the user's tag.
inline MPI_Status bare_status(MPI_Status status, const Label& label) {
  status.MPI_TAG = label.tag;
  return status;
}

}  // namespace rbc::detail
