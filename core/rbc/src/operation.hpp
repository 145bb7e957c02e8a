#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "rbc/comm.hpp"
#include "rbc/request.hpp"
#include "rbc/status.hpp"
#include "tags.hpp"

namespace rbc::detail {

class Engine;

// What a posted send or receive needs after MPI completes its request (wire.cpp): a send keeps
// its wire buffer alive; a receive knows the communicator and label it expects, where the
// payload goes, and whether it is still waiting for the envelope or already for the payload of
// a large message.
struct Transit {
  enum class Stage { none, send, envelope, payload };
  Stage stage = Stage::none;
  Bytes wire;
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const RangeComm* comm = nullptr;  // the receiving communicator (owned by the operation)
  Label label;
  int mpi_source = MPI_PROC_NULL;   // as posted: a rank or MPI_ANY_SOURCE (a send: its destination)
  int mpi_tag = 0;
  int found_source = MPI_PROC_NULL;  // once the envelope has arrived
  std::uint64_t payload_bytes = 0;
  std::uint64_t signature = 0;
  // A bare message's receive (Sequencer::bare_base), straight into the user's buffer: MPI, not
  // RBC, finds a message larger than the buffer, and the completion's status carries the error.
  bool bare = false;
  // A collective's receive, whose message must fill the buffer: a shorter one means the members'
  // counts differ (MPI_ERR_COUNT), where a point-to-point receive takes it.
  bool exact = false;
  // An exchange's envelope receive (post_exchange): the slot of this side's payload send, posted
  // once the partner's envelope names the tag (-1: this side's payload travels in its envelope),
  // what it sends, and the slot of the receive posted for the partner's payload under the tag
  // this side announced (-1: the partner's payload travels in its envelope).
  bool exchange = false;
  int held_slot = -1;
  int announced_slot = -1;
  const void* send_buf = nullptr;
  int send_count = 0;
  MPI_Datatype send_type = MPI_DATATYPE_NULL;
};

// A nonblocking operation as a state machine. Each state ends by posting the MPI requests it
// depends on; progress() checks them and, once all are complete, runs the next state. Waiting
// blocks in MPI_Waitany on the union of awaited requests, so a simulator's clock moves on, and
// advances operations only once a wait has completed all their requests: waits never call
// MPI_Test, which SMPI charges simulated time for when it fails.
class Operation {
 public:
  // `comm`: the communicator it runs on, which must outlive it unless make_operation gave the
  // operation a copy of its own (requests get one; a collective that runs at once on the
  // caller's stack needs none, and saves copying the communicator's shared state).
  explicit Operation(const RangeComm& comm);
  virtual ~Operation();

  Engine& engine() const { return *engine_; }
  const RangeComm& comm() const { return *comm_; }

  // Advances as far as possible without blocking. True once complete locally. With may_test
  // false, pending requests are not tested (the operation only advances past requests a wait
  // has completed).
  virtual bool progress(bool may_test) = 0;

  // Requests the current state waits on.
  std::vector<MPI_Request>& awaited() { return awaited_; }
  // True while one of them is pending: progress(false) can do nothing.
  bool waiting() const {
    for (MPI_Request r : awaited_) {
      if (r != MPI_REQUEST_NULL) return true;
    }
    return false;
  }

  // Bookkeeping once awaited()[index] has completed, wherever it was completed. A receive may
  // put a new request in the slot (the payload of a large message, or a repost after a foreign
  // message), so the slot is complete only if it is MPI_REQUEST_NULL afterwards.
  void request_done(std::size_t index, const MPI_Status& status);

  std::vector<Transit>& transits() { return transits_; }
  // For the wire: hands the receive's final status to the operation.
  void deliver(std::size_t index, const MPI_Status& status) { completed(index, status); }


  const Status& status() const { return status_; }

  // An error that escaped one of its steps. From then on the operation is frozen: no wait or
  // progress of the engine advances it (a later step would run on a half-done one and could
  // complete it as if it had succeeded), and its request reports the error again each time
  // (Request::advance). Its pending receives still take what MPI matches to them off the wire
  // (drain_failed, wait_for_some): a message of another operation is parked for its owner, which
  // would otherwise wait for it forever. Only the request's destruction resumes it
  // (wait_abandoned).
  bool failed() const { return failure_ != nullptr; }
  void drain_failed();
  [[noreturn]] void rethrow_failure() const { std::rethrow_exception(failure_); }
  // Records `failure` unless one is recorded already: the first error is the one reported.
  void fail(std::exception_ptr failure) {
    if (!failure_) failure_ = std::move(failure);
  }
  void resume_after_failure() { failure_ = nullptr; }

  std::size_t await(MPI_Request request, Transit transit = Transit()) {
    awaited_.push_back(request);
    transits_.push_back(std::move(transit));
    return awaited_.size() - 1;
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
  // Waits for every awaited request (MPI_Wait, one after the other) and clears the list.
  void wait_awaited();
  // Waits until slot `index` is complete (a receive may put a new request in it).
  void wait_slot(std::size_t index);

  Status status_;

 private:
  template <class Op, class... Args>
  friend OperationPtr make_operation(Engine& engine, Args&&... args);
  friend struct OperationDeleter;

  const RangeComm* comm_;
  RangeComm owned_;  // comm_'s copy, for operations made by make_operation
  Engine* engine_;
  void* memory_ = nullptr;  // the memory make_operation took from the engine, and its size
  std::size_t memory_bytes_ = 0;
  std::vector<MPI_Request> awaited_;
  std::vector<Transit> transits_;
  std::exception_ptr failure_;
};

// Blocks until at least one awaited request of the given (incomplete) operations completes,
// or, if one of them polls, returns at once so the caller can poll again.
void wait_for_some(Operation* const* ops, std::size_t count);

}  // namespace rbc::detail
