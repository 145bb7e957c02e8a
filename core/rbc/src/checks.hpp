#pragma once

#include <mpi.h>

#include <string>

#include "rbc/comm.hpp"
#include "rbc/error.hpp"

// Argument checks shared by all operations; each throws rbc::Error naming the call and the problem.
namespace rbc::detail {

inline void check_count(const char* call, int count) {
  if (count < 0) throw Error(std::string(call) + ": negative count " + std::to_string(count));
}

inline void check_type(const char* call, MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) throw Error(std::string(call) + ": datatype is MPI_DATATYPE_NULL");
}

inline void check_rank(const char* call, const char* what, int rank, const RangeComm& comm) {
  if (rank < 0 || rank >= comm.size()) {
    throw Error(std::string(call) + ": " + what + " " + std::to_string(rank) +
                " is outside the communicator of size " + std::to_string(comm.size()));
  }
}

// Destination or source of point-to-point: a member rank or MPI_PROC_NULL (and MPI_ANY_SOURCE
// where `wildcard` allows it).
inline void check_peer(const char* call, const char* what, int rank, const RangeComm& comm,
                       bool wildcard) {
  const int size = comm.size();  // throws for non-members, whatever the rank
  if (rank == MPI_PROC_NULL || (wildcard && rank == MPI_ANY_SOURCE)) return;
  if (rank < 0 || rank >= size) check_rank(call, what, rank, comm);
}

inline void check_tag(const char* call, int tag) {
  if (tag == MPI_ANY_TAG) {
    throw Error(std::string(call) +
                ": MPI_ANY_TAG is not supported (the tag carries the communicator's context)");
  }
  if (tag < 0 || tag > max_user_tag) {
    throw Error(std::string(call) + ": tag " + std::to_string(tag) + " is outside 0.." +
                std::to_string(max_user_tag));
  }
}

inline void check_op(const char* call, MPI_Op op) {
  if (op == MPI_OP_NULL) throw Error(std::string(call) + ": op is MPI_OP_NULL");
}

}  // namespace rbc::detail
