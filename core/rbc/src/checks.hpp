#pragma once

#include <mpi.h>

#include <string>

#include "access.hpp"
#include "buffers.hpp"
#include "rbc/comm.hpp"
#include "rbc/error.hpp"

// Argument checks shared by all operations; each throws rbc::Error naming the call and the problem.
// The reports are built out of line: the checks run on every call, the reports almost never.
namespace rbc::detail {

[[noreturn]] __attribute__((noinline, cold)) inline void refuse_count(const char* call, int count) {
  throw Error(std::string(call) + ": negative count " + std::to_string(count));
}

[[noreturn]] __attribute__((noinline, cold)) inline void refuse_rank(const char* call, const char* what, int rank,
                                                                     int size) {
  throw Error(std::string(call) + ": " + what + " " + std::to_string(rank) + " is outside the communicator of size " +
              std::to_string(size));
}

[[noreturn]] __attribute__((noinline, cold)) inline void refuse_tag(const char* call, int tag) {
  if (tag == MPI_ANY_TAG) {
    throw Error(std::string(call) + ": MPI_ANY_TAG is not supported (the tag carries the communicator's context)");
  }
  throw Error(std::string(call) + ": tag " + std::to_string(tag) + " is outside 0.." + std::to_string(max_user_tag));
}

[[noreturn]] __attribute__((noinline, cold)) inline void refuse_null(const char* call, const char* what) {
  throw Error(std::string(call) + ": " + what);
}

inline void check_count(const char* call, int count) {
  if (count < 0) refuse_count(call, count);
}

inline void check_type(const char* call, MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) refuse_null(call, "datatype is MPI_DATATYPE_NULL");
}

// Both throw for a non-member or a freed base communicator first, whatever the rank; after that
// one check, the communicator's fields are read directly (CommAccess).
inline int checked_size(const RangeComm& comm) {
  CommAccess::checked(comm);
  return CommAccess::size(comm);
}

inline void check_rank(const char* call, const char* what, int rank, const RangeComm& comm) {
  const int size = checked_size(comm);
  if (rank < 0 || rank >= size) refuse_rank(call, what, rank, size);
}

// Destination or source of point-to-point: a member rank or MPI_PROC_NULL (and MPI_ANY_SOURCE
// where `wildcard` allows it).
inline void check_peer(const char* call, const char* what, int rank, const RangeComm& comm, bool wildcard) {
  const int size = checked_size(comm);
  if (rank == MPI_PROC_NULL || (wildcard && rank == MPI_ANY_SOURCE)) return;
  if (rank < 0 || rank >= size) refuse_rank(call, what, rank, size);
}

inline void check_tag(const char* call, int tag) {
  if (tag < 0 || tag > max_user_tag || tag == MPI_ANY_TAG) refuse_tag(call, tag);
}

// Throws for MPI_IN_PLACE, and for a null buffer of a predefined type; returns for a null one of a
// derived type. MPI_BOTTOM, null in common libraries, is valid with a derived type of absolute
// addresses, which cannot be told from other derived types here.
__attribute__((noinline, cold)) inline void refuse_buffer(const char* call, const void* buf, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE) refuse_null(call, "MPI_IN_PLACE where this call needs a buffer");
  if (predefined_size(type) > 0) refuse_null(call, "null buffer for a positive count of a predefined datatype");
}

// A buffer to send from or receive into that is null (an empty std::vector's data(), say) or
// MPI_IN_PLACE where the call takes none: refused rather than dereferenced.
inline void check_buffer(const char* call, const void* buf, int count, MPI_Datatype type) {
  if (count > 0 && (buf == nullptr || buf == MPI_IN_PLACE)) refuse_buffer(call, buf, type);
}

inline void check_op(const char* call, MPI_Op op) {
  if (op == MPI_OP_NULL) refuse_null(call, "op is MPI_OP_NULL");
}

}  // namespace rbc::detail
