#include "rbc/request.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "engine.hpp"
#include "operation.hpp"
#include "rbc/error.hpp"
#include "wire.hpp"

namespace rbc {

namespace detail {

namespace {

// MPI_Waitany by polling, reporting a stall once the engine's limit has passed (kWatchStalls).
int wait_any_watched(std::vector<MPI_Request>& requests, MPI_Status& status, Operation* const* ops, std::size_t count) {
  const Engine& engine = ops[0]->engine();
  const double limit = engine.stall_limit();
  const double start = MPI_Wtime();
  for (unsigned spins = 1;; ++spins) {
    int index = MPI_UNDEFINED;
    int flag = 0;
    check_mpi(MPI_Testany(static_cast<int>(requests.size()), requests.data(), &index, &flag, &status), "MPI_Testany");
    if (flag) return index;
    if (spins % 256 == 0 && limit > 0 && MPI_Wtime() - start > limit) {
      std::string waits;
      for (std::size_t k = 0; k < count; ++k) waits += describe_pending(*ops[k]);
      report_stall(engine, limit, waits);
    }
  }
}

}  // namespace

void wait_for_some(Operation* const* ops, std::size_t count) {
  std::vector<MPI_Request> all;
  std::vector<std::pair<Operation*, std::size_t>> owner;
  for (std::size_t k = 0; k < count; ++k) {
    auto& awaited = ops[k]->awaited();
    bool any = false;
    for (std::size_t i = 0; i < awaited.size(); ++i) {
      if (awaited[i] == MPI_REQUEST_NULL) continue;
      all.push_back(awaited[i]);
      owner.emplace_back(ops[k], i);
      any = true;
    }
    if (!any) return;  // it can advance without waiting
  }
  if (all.empty()) return;
  int index = MPI_UNDEFINED;
  MPI_Status status;
  if (kWatchStalls) {
    index = wait_any_watched(all, status, ops, count);
  } else {
    check_mpi(MPI_Waitany(static_cast<int>(all.size()), all.data(), &index, &status), "MPI_Waitany");
  }
  if (index == MPI_UNDEFINED) return;
  auto [op, i] = owner[static_cast<std::size_t>(index)];
  op->awaited()[i] = MPI_REQUEST_NULL;
  op->request_done(i, status);
}

Operation::~Operation() { engine_->unregister_all(this); }

void Operation::request_done(std::size_t index, const MPI_Status& status) { complete_slot(*this, index, status); }

bool Operation::awaited_complete(bool may_test) {
  bool all = true;
  for (std::size_t i = 0; i < awaited_.size(); ++i) {
    if (awaited_[i] == MPI_REQUEST_NULL) continue;
    if (!may_test) return false;
    int flag = 0;
    MPI_Status status;
    check_mpi(MPI_Test(&awaited_[i], &flag, &status), "MPI_Test");
    if (flag) {
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


}  // namespace detail

Request::Request() = default;

Request::Request(std::unique_ptr<detail::Operation> op) : op_(std::move(op)), done_(false) {
  done_ = op_ == nullptr || op_->progress(false);
  if (!done_) op_->engine().add(op_.get());
}

Request::Request(Request&& other) noexcept : op_(std::move(other.op_)), done_(other.done_) {
  other.done_ = true;
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (!done_) wait();
    op_ = std::move(other.op_);
    done_ = other.done_;
    other.done_ = true;
  }
  return *this;
}

Request::~Request() {
  if (!done_) wait();
}

bool Request::advance(bool may_test) {
  if (!done_ && op_->progress(may_test)) {
    done_ = true;
    op_->engine().remove(op_.get());
  }
  return done_;
}

bool Request::test() { return advance(true); }

namespace {

// Blocks until some request of the engines' active operations completes (or returns at once
// when one of them polls), after advancing them all.
void progress_and_block(const std::vector<detail::Engine*>& engines) {
  std::vector<detail::Operation*> active;
  for (detail::Engine* engine : engines) {
    engine->progress_all(false);
    active.insert(active.end(), engine->active().begin(), engine->active().end());
  }
  detail::wait_for_some(active.data(), active.size());
}

void add_engine(std::vector<detail::Engine*>& engines, detail::Engine* engine) {
  if (std::find(engines.begin(), engines.end(), engine) == engines.end()) engines.push_back(engine);
}

}  // namespace

void Request::wait() {
  while (!advance(false)) progress_and_block({&op_->engine()});
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
  std::vector<detail::Engine*> engines;
  while (true) {
    engines.clear();
    for (Request* r = begin; r != end; ++r) {
      if (!r->advance(false)) add_engine(engines, &r->operation()->engine());
    }
    if (engines.empty()) return;
    progress_and_block(engines);
  }
}

void wait_all(std::vector<Request>& requests) {
  wait_all(requests.data(), requests.data() + requests.size());
}

int wait_any(std::vector<Request>& requests) {
  std::vector<detail::Engine*> engines;
  while (true) {
    engines.clear();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].done()) continue;
      if (requests[i].advance(false)) return static_cast<int>(i);
      add_engine(engines, &requests[i].operation()->engine());
    }
    if (engines.empty()) return -1;
    progress_and_block(engines);
  }
}

}  // namespace rbc
