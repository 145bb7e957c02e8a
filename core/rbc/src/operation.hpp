#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "rbc/status.hpp"

namespace rbc::detail {

class Engine;

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
// depends on; progress() checks them and, once all are complete, runs the next state. Waiting
// blocks in MPI_Waitany on the union of awaited requests, so a simulator's clock moves on, and
// advances operations only once a wait has completed all their requests: waits never call
// MPI_Test, which SMPI charges simulated time for when it fails.
class Operation {
 public:
  explicit Operation(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  virtual ~Operation() = default;

  Engine& engine() const { return *engine_; }

  // Advances as far as possible without blocking. True once complete locally. With may_test
  // false, pending requests are not tested (the operation only advances past requests a wait
  // has completed).
  virtual bool progress(bool may_test) = 0;

  // Requests the current state waits on. Empty while not complete means the operation polls
  // (a wildcard receive that has not found its message yet).
  std::vector<MPI_Request>& awaited() { return awaited_; }

  // Bookkeeping once awaited()[index] has completed, wherever it was completed.
  void request_done(std::size_t index, const MPI_Status& status);

  // For an operation that polls (awaits no request): blocks until it may progress, when it is
  // the only thing this rank waits for. Default: return at once.
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

  // True (and the list cleared) once all awaited requests are complete; tests the pending ones
  // only if may_test.
  bool awaited_complete(bool may_test);

  Status status_;

 private:
  std::shared_ptr<Engine> engine_;
  std::vector<MPI_Request> awaited_;
  std::vector<Transit> transits_;
};

// Blocks until at least one awaited request of the given (incomplete) operations completes,
// or, if one of them polls, returns at once so the caller can poll again.
void wait_for_some(Operation* const* ops, std::size_t count);

}  // namespace rbc::detail
