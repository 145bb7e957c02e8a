#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rbc/status.hpp"

namespace rbc::detail {

// A message in flight in the checked build (RBC_CHECK_ENVELOPE): the wire bytes (envelope +
// packed payload) and, for receives, where the payload goes and which envelope must arrive.
struct Transit {
  std::vector<char> wire;
  bool is_receive = false;
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::uint64_t comm_id = 0;
  std::uint64_t sequence = 0;
};

// A nonblocking operation as a state machine. Each state ends by posting the MPI requests it
// depends on; progress() tests them and, once all are complete, runs the next state. Waiting
// blocks in MPI_Waitany on the union of awaited requests, so a simulator's clock moves on.
class Operation {
 public:
  virtual ~Operation() = default;

  // Advances as far as possible without blocking. True once complete locally.
  virtual bool progress() = 0;

  // Requests the current state waits on. Empty while not complete means the operation polls
  // (a wildcard receive that has not found its message yet).
  std::vector<MPI_Request>& awaited() { return awaited_; }

  // Bookkeeping once awaited()[index] has completed, wherever it was completed.
  void request_done(std::size_t index, const MPI_Status& status);

  // Blocks until this operation may be able to progress (default: one awaited request completes).
  virtual void block();

  const Status& status() const { return status_; }

  void await(MPI_Request request, Transit transit = Transit()) {
    awaited_.push_back(request);
    transits_.push_back(std::move(transit));
  }

 protected:
  // Hook for operations that want the status of a completed request.
  virtual void completed(std::size_t index, const MPI_Status& status) {
    (void)index;
    (void)status;
  }

  // Tests the awaited requests; true (and the list cleared) once all are complete.
  bool awaited_complete();

  Status status_;

 private:
  std::vector<MPI_Request> awaited_;
  std::vector<Transit> transits_;
};

// Blocks until at least one awaited request of the given (incomplete) operations completes,
// or, if one of them polls, returns at once so the caller can poll again.
void wait_for_some(Operation* const* ops, std::size_t count);

}  // namespace rbc::detail
