#pragma once

#include <mpi.h>

namespace rbc {

// What a receive or probe found, in the communicator's terms: the source as a member rank and
// the tag as the user passed it.
struct Status {
  int source = MPI_PROC_NULL;
  int tag = -1;
  MPI_Status mpi{};  // the underlying MPI status (its source and tag are MPI's)

  // Number of `type` elements in the message (MPI_Get_count).
  int count(MPI_Datatype type) const;
};

}  // namespace rbc
