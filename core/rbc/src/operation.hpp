#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "rbc/status.hpp"

namespace rbc::detail {

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

  // Called when awaited()[index] completed outside progress() (by a wait on several operations).
  virtual void completed(std::size_t index, const MPI_Status& status) {
    (void)index;
    (void)status;
  }

  // Blocks until this operation may be able to progress (default: one awaited request completes).
  virtual void block();

  const Status& status() const { return status_; }

 protected:
  void await(MPI_Request request) { awaited_.push_back(request); }

  // Tests the awaited requests; true (and the list cleared) once all are complete.
  bool awaited_complete() {
    bool all = true;
    for (std::size_t i = 0; i < awaited_.size(); ++i) {
      if (awaited_[i] == MPI_REQUEST_NULL) continue;
      int flag = 0;
      MPI_Status status;
      MPI_Test(&awaited_[i], &flag, &status);
      if (flag) {
        completed(i, status);
      } else {
        all = false;
      }
    }
    if (all) awaited_.clear();
    return all;
  }

  Status status_;

 private:
  std::vector<MPI_Request> awaited_;
};

// Blocks until at least one awaited request of the given (incomplete) operations completes,
// or, if one of them polls, returns at once so the caller can poll again.
void wait_for_some(Operation* const* ops, std::size_t count);

}  // namespace rbc::detail
