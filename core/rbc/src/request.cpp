#include "rbc/request.hpp"

#include <utility>

#include "operation.hpp"
#include "rbc/error.hpp"
#include "wire.hpp"

namespace rbc {

namespace detail {

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
    if (!any) return;  // a polling operation: let the caller poll it
  }
  if (all.empty()) return;
  int index = MPI_UNDEFINED;
  MPI_Status status;
  MPI_Waitany(static_cast<int>(all.size()), all.data(), &index, &status);
  if (index == MPI_UNDEFINED) return;
  auto [op, i] = owner[static_cast<std::size_t>(index)];
  op->awaited()[i] = MPI_REQUEST_NULL;
  op->request_done(i, status);
}

void Operation::request_done(std::size_t index, const MPI_Status& status) {
  finish_transit(transits_[index], status);
  completed(index, status);
}

bool Operation::awaited_complete() {
  bool all = true;
  for (std::size_t i = 0; i < awaited_.size(); ++i) {
    if (awaited_[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Status status;
    MPI_Test(&awaited_[i], &flag, &status);
    if (flag) {
      request_done(i, status);
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

void Operation::block() {
  Operation* self = this;
  wait_for_some(&self, 1);
}

}  // namespace detail

Request::Request() = default;

Request::Request(std::unique_ptr<detail::Operation> op) : op_(std::move(op)), done_(false) {
  done_ = op_ == nullptr || op_->progress();
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

bool Request::test() {
  if (!done_) done_ = op_->progress();
  return done_;
}

void Request::wait() {
  while (!test()) op_->block();
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
  std::vector<detail::Operation*> pending;
  while (true) {
    pending.clear();
    for (Request* r = begin; r != end; ++r) {
      if (!r->test()) pending.push_back(r->operation());
    }
    if (pending.empty()) return;
    detail::wait_for_some(pending.data(), pending.size());
  }
}

void wait_all(std::vector<Request>& requests) {
  wait_all(requests.data(), requests.data() + requests.size());
}

int wait_any(std::vector<Request>& requests) {
  std::vector<detail::Operation*> pending;
  while (true) {
    pending.clear();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].done()) continue;
      if (requests[i].test()) return static_cast<int>(i);
      pending.push_back(requests[i].operation());
    }
    if (pending.empty()) return -1;
    detail::wait_for_some(pending.data(), pending.size());
  }
}

}  // namespace rbc
