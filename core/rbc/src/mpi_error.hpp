#pragma once

#include <mpi.h>

namespace rbc::detail {

// Throws rbc::Error naming the MPI call, the error class and MPI's text (rc is not MPI_SUCCESS).
[[noreturn]] void throw_mpi_error(int rc, const char* call);

// Throws rbc::Error naming the MPI call, the error class and MPI's text unless rc is MPI_SUCCESS.
// Inline: it runs after every MPI call RBC makes.
inline void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) [[unlikely]] throw_mpi_error(rc, call);
}

}  // namespace rbc::detail
