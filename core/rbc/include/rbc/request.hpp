#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "rbc/status.hpp"

namespace rbc {

namespace detail {
class Operation;
// Destroys an operation and returns its memory to its engine (make_operation in engine.hpp).
struct OperationDeleter {
  void operator()(Operation* op) const noexcept;
};
using OperationPtr = std::unique_ptr<Operation, OperationDeleter>;
}  // namespace detail

// A started nonblocking operation (point-to-point or collective). Move-only. Progress happens
// inside test() and wait() (and the *_all/any helpers), as in MPI without a progress thread.
// Destroying a request that has not completed waits for it, so buffers are never released
// under a running operation. A request whose operation failed keeps its error: test(), wait()
// and the *_all/any helpers throw it again each time, and no other request's wait advances it
// (docs/misuse.md, class 15); destroying it runs it to its end.
class Request {
 public:
  Request();
  explicit Request(detail::OperationPtr op);
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  // Advances the operation without blocking; true once it has completed locally.
  bool test();
  // Blocks until complete. Blocks in MPI (not a busy loop) so simulated time can advance.
  void wait();
  // True if there is no operation or it has completed.
  bool done() const;
  // For receives: what arrived. Valid once done().
  const Status& status() const;

  detail::Operation* operation() const { return op_.get(); }

 private:
  friend void wait_all(Request* begin, Request* end);
  friend int wait_any(std::vector<Request>& requests);
  // Advances the operation; tests pending MPI requests only if may_test (waits do not: they
  // block in MPI_Waitany instead).
  bool advance(bool may_test);

  detail::OperationPtr op_;
  bool done_ = true;
};

// True if all have completed; advances each one that has not.
bool test_all(std::vector<Request>& requests);
// Waits for all, progressing them together (e.g. the two collectives of a janus PE).
void wait_all(std::vector<Request>& requests);
void wait_all(Request* begin, Request* end);
// Waits until at least one not-yet-done request completes; returns its index, or -1 if all
// were already done.
int wait_any(std::vector<Request>& requests);

}  // namespace rbc
