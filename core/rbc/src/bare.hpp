#pragma once

#include <mpi.h>

#include "access.hpp"
#include "rbc/comm.hpp"
#include "tags.hpp"

// Bare messages: the user messages of the one communicator per MPI communicator whose tags alone
// say whose they are (Sequencer::bare_base) travel without an envelope, straight between the
// users' buffers, as MPI's own do. The simulation charges them no work of RBC's (cost::charge):
// what is left is argument checks, about 200 instructions per send and receive pair.
namespace rbc::detail {

// The MPI tag of a bare message, or -1 where the message carries an envelope. `comm` has been
// checked.
[[gnu::always_inline]] inline int bare_tag(const RangeComm& comm, const Label& label) {
  const int base = CommAccess::sequencer(comm).bare_base();
  return base >= 0 && label.collective == 0 ? base | label.tag : -1;
}

// A bare receive's status: MPI's, with the user's tag.
inline MPI_Status bare_status(MPI_Status status, const Label& label) {
  status.MPI_TAG = label.tag;
  return status;
}

}  // namespace rbc::detail
