#include "rbc/request.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "engine.hpp"
#include "inline_vector.hpp"
#include "operation.hpp"
#include "rbc/error.hpp"
#include "wire.hpp"

namespace rbc {

namespace detail {

namespace {

// MPI_Waitany by polling, reporting a stall once the engine's limit has passed (kWatchStalls).
int wait_any_watched(MPI_Request* requests, int n, MPI_Status& status, Operation* const* ops, std::size_t count) {
  const Engine& engine = ops[0]->engine();
  StallWatch watch(engine);
  while (true) {
    int index = MPI_UNDEFINED;
    int flag = 0;
    check_mpi(MPI_Testany(n, requests, &index, &flag, &status), "MPI_Testany");
    if (flag) return index;
    if (watch.expired()) {
      std::string waits;
      for (std::size_t k = 0; k < count; ++k) waits += describe_pending(*ops[k]);
      report_stall(engine, engine.stall_limit(), waits);
    }
  }
}

// MPI reports a receive that completed with an error (a bare receive smaller than its message,
// Transit::bare) as the call's result (Open MPI, MPICH) or only in the status (SMPI's
// MPI_Waitany): both end up in status.MPI_ERROR, preset to MPI_SUCCESS by the caller, for
// complete_slot. A failure that completed nothing throws here.
void completed_with(int rc, bool completed, MPI_Status& status, const char* call) {
  if (rc == MPI_SUCCESS) return;
  if (!completed) throw_mpi_error(rc, call);
  status.MPI_ERROR = rc;
}

}  // namespace

void wait_for_some(Operation* const* ops, std::size_t count) {
  // The union of the operations' pending requests, contiguous for MPI_Waitany, and the
  // operation and slot each one belongs to. Local and inline: no allocation per round, and a
  // wait nested in a continuation has its own.
  struct Owner {
    Operation* op;
    std::size_t slot;
  };
  InlineVector<MPI_Request, 16> all;
  InlineVector<Owner, 16> owner;
  for (std::size_t k = 0; k < count; ++k) {
    auto& awaited = ops[k]->awaited();
    bool any = false;
    for (std::size_t i = 0; i < awaited.size(); ++i) {
      if (awaited[i] == MPI_REQUEST_NULL) continue;
      all.push_back(awaited[i]);
      owner.push_back(Owner{ops[k], i});
      any = true;
    }
    // It can advance without waiting, unless it failed: a frozen operation never advances, and
    // its pending requests are in the union only to be drained (Operation::failed).
    if (!any && !ops[k]->failed()) return;
  }
  if (all.empty()) return;
  int index = MPI_UNDEFINED;
  MPI_Status status;
  status.MPI_ERROR = MPI_SUCCESS;
  if (kWatchStalls) {
    index = wait_any_watched(all.data(), static_cast<int>(all.size()), status, ops, count);
  } else {
    const int rc = MPI_Waitany(static_cast<int>(all.size()), all.data(), &index, &status);
    completed_with(rc, index != MPI_UNDEFINED, status, "MPI_Waitany");
  }
  if (index == MPI_UNDEFINED) return;
  const Owner done = owner[static_cast<std::size_t>(index)];
  done.op->awaited()[done.slot] = MPI_REQUEST_NULL;
  try {
    done.op->request_done(done.slot, status);
  } catch (...) {
    done.op->fail(std::current_exception());  // its request reports it (Operation::failed)
  }
}

void Operation::drain_failed() {
  try {
    awaited_complete(true);
  } catch (...) {
    // The first error is the one its request reports; the slots after it are tested next time.
  }
}

Operation::Operation(const RangeComm& comm) : comm_(&comm), engine_(comm.engine().get()) {
  engine_->take_lists(awaited_, transits_);
}

Operation::~Operation() {
  engine_->unregister_all(this);
  engine_->recycle_lists(std::move(awaited_), std::move(transits_));
}

void OperationDeleter::operator()(Operation* op) const noexcept {
  // The operation's communicator may hold the engine's last reference, and the engine's pool
  // takes the memory back after the destructor: the communicator moves out for the destruction
  // (no reference count changes; its checked accessors would throw once the base is freed).
  const RangeComm comm = std::move(op->owned_);
  op->comm_ = &comm;
  Engine* engine = op->engine_;
  void* block = op->memory_;
  const std::size_t bytes = op->memory_bytes_;
  op->~Operation();
  engine->operations().release(block, bytes);
}

void Operation::request_done(std::size_t index, const MPI_Status& status) {
  // Only a bare receive fails in a way its completion reports (complete_slot): any other error
  // throws as MPI's own would.
  if (status.MPI_ERROR != MPI_SUCCESS && !transits_[index].bare) [[unlikely]] {
    throw_mpi_error(status.MPI_ERROR, "MPI request completion");
  }
  complete_slot(*this, index, status);
}

bool Operation::awaited_complete(bool may_test) {
  if (!may_test && waiting()) return false;
  bool all = true;
  for (std::size_t i = 0; i < awaited_.size(); ++i) {
    if (awaited_[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Status status;
    status.MPI_ERROR = MPI_SUCCESS;
    const int rc = MPI_Test(&awaited_[i], &flag, &status);
    completed_with(rc, awaited_[i] == MPI_REQUEST_NULL, status, "MPI_Test");
    if (flag || rc != MPI_SUCCESS) {
      request_done(i, status);
      if (awaited_[i] != MPI_REQUEST_NULL) all = false;
    } else {
      all = false;
    }
  }
  if (all) {
    awaited_.clear();
    transits_.clear();
  }
  return all;
}

void Operation::wait_slot(std::size_t index) {
  while (awaited_[index] != MPI_REQUEST_NULL) {
    MPI_Status status;
    status.MPI_ERROR = MPI_SUCCESS;
    completed_with(MPI_Wait(&awaited_[index], &status), awaited_[index] == MPI_REQUEST_NULL, status, "MPI_Wait");
    request_done(index, status);
  }
}

void Operation::wait_awaited() {
  // wait_slot's loop written out: a call per slot cost every step of a collective run at once
  // (28 instructions per one-double allreduce).
  for (std::size_t i = 0; i < awaited_.size(); ++i) {
    while (awaited_[i] != MPI_REQUEST_NULL) {
      MPI_Status status;
      status.MPI_ERROR = MPI_SUCCESS;
      completed_with(MPI_Wait(&awaited_[i], &status), awaited_[i] == MPI_REQUEST_NULL, status, "MPI_Wait");
      request_done(i, status);
    }
  }
  awaited_.clear();
  transits_.clear();
}

}  // namespace detail

Request::Request() = default;

Request::Request(detail::OperationPtr op) : op_(std::move(op)), done_(false) {
  done_ = op_ == nullptr || op_->progress(false);
  if (!done_) op_->engine().add(op_.get());
}

Request::Request(Request&& other) noexcept : op_(std::move(other.op_)), done_(other.done_) {
  other.done_ = true;
}

namespace {

// A request destroyed (or assigned over) before it completed is waited for there, where nothing
// can throw: if completing it fails (a truncated receive under MPI_ERRORS_RETURN, a freed base
// communicator), no caller can see the error. Say what failed and end the job, as the fatal
// error handler would, instead of std::terminate's bare abort of this one process.
void wait_abandoned(Request& request) noexcept {
  try {
    // A failed operation runs to its end here, as far as it can: its posted receives and sends
    // must complete before its buffers go.
    if (request.operation()->failed()) request.operation()->resume_after_failure();
    request.wait();
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "rbc: a request destroyed before it completed could not complete: %s (a destructor "
                 "cannot throw; wait() or test() the request to get the error)\n",
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "rbc: a request destroyed before it completed could not complete\n");
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) detail::abort_after_report(MPI_COMM_WORLD, 1);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (!done_) wait_abandoned(*this);
    op_ = std::move(other.op_);
    done_ = other.done_;
    other.done_ = true;
  }
  return *this;
}

Request::~Request() {
  if (!done_) wait_abandoned(*this);
}

bool Request::advance(bool may_test) {
  if (done_) return true;
  if (op_->failed()) [[unlikely]] op_->rethrow_failure();
  bool complete = false;
  try {
    complete = op_->progress(may_test);
  } catch (...) {
    op_->fail(std::current_exception());
    throw;
  }
  if (complete) {
    done_ = true;
    op_->engine().remove(op_.get());
  }
  return done_;
}

bool Request::test() { return advance(true); }

namespace {

// The engines a wait_all or wait_any progresses: nearly always one.
using Engines = detail::InlineVector<detail::Engine*, 4>;

// Blocks until some request of the engines' active operations completes (or returns at once
// when one of them polls), after advancing them all.
void progress_and_block(detail::Engine* const* engines, std::size_t count) {
  for (std::size_t e = 0; e < count; ++e) engines[e]->progress_all(false);
  if (count == 1) {
    // wait_for_some only reads the list, and nothing changes it before MPI_Waitany returns.
    const auto& active = engines[0]->active();
    detail::wait_for_some(active.data(), active.size());
    return;
  }
  detail::InlineVector<detail::Operation*, 32> active;
  for (std::size_t e = 0; e < count; ++e) {
    for (detail::Operation* op : engines[e]->active()) active.push_back(op);
  }
  detail::wait_for_some(active.data(), active.size());
}

void add_engine(Engines& engines, detail::Engine* engine) {
  if (std::find(engines.begin(), engines.end(), engine) == engines.end()) engines.push_back(engine);
}

}  // namespace

void Request::wait() {
  while (!advance(false)) {
    detail::Engine* engine = &op_->engine();
    const auto& active = engine->active();
    if (active.size() == 1) {
      // Alone in flight: nothing else to advance, and advance() found it waiting.
      detail::wait_for_some(active.data(), 1);
    } else {
      progress_and_block(&engine, 1);
    }
  }
}

bool Request::done() const { return done_; }

const Status& Request::status() const {
  if (!op_) throw Error("status() of an empty request");
  if (!done_) throw Error("status() of a request that has not completed");
  return op_->status();
}

bool test_all(std::vector<Request>& requests) {
  bool all = true;
  for (auto& r : requests) all = r.test() && all;
  return all;
}

void wait_all(Request* begin, Request* end) {
  Engines engines;
  while (true) {
    engines.clear();
    for (Request* r = begin; r != end; ++r) {
      if (!r->advance(false)) add_engine(engines, &r->operation()->engine());
    }
    if (engines.empty()) return;
    progress_and_block(engines.data(), engines.size());
  }
}

void wait_all(std::vector<Request>& requests) {
  wait_all(requests.data(), requests.data() + requests.size());
}

int wait_any(std::vector<Request>& requests) {
  Engines engines;
  while (true) {
    engines.clear();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].done()) continue;
      if (requests[i].advance(false)) return static_cast<int>(i);
      add_engine(engines, &requests[i].operation()->engine());
    }
    if (engines.empty()) return -1;
    progress_and_block(engines.data(), engines.size());
  }
}

}  // namespace rbc
