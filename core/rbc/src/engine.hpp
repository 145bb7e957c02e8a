#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "operation.hpp"

namespace rbc::detail {

// The rank's incomplete nonblocking operations on all communicators derived from one
// RangeComm::from_mpi. Any wait progresses all of them, as MPI's progress engine does, so
// waiting for one request never starves another one that a peer depends on. Owned by the
// communicators (no global state).
class Engine {
 public:
  explicit Engine(int mpi_size) : mpi_size_(mpi_size) {}
  // Size of the MPI communicator the root RangeComm was made from.
  int mpi_size() const { return mpi_size_; }

  void add(Operation* op) { active_.push_back(op); }
  void remove(Operation* op) { active_.erase(std::remove(active_.begin(), active_.end(), op), active_.end()); }
  bool idle() const { return active_.empty(); }

  // Advances every active operation; completed ones leave the list (their requests see the
  // completion when they next look).
  void progress_all(bool may_test) {
    std::vector<Operation*> snapshot = active_;
    for (Operation* op : snapshot) {
      if (op->progress(may_test)) remove(op);
    }
  }

  const std::vector<Operation*>& active() const { return active_; }

  // Wildcard receives wait in line per (communicator, tag): only the oldest one may take a
  // message, so they match in the order they were posted, as MPI's posted receives do.
  using WildcardKey = std::pair<std::uint64_t, int>;
  void enqueue_wildcard(const WildcardKey& key, const void* op) { wildcards_[key].push_back(op); }
  bool first_wildcard(const WildcardKey& key, const void* op) const {
    const auto it = wildcards_.find(key);
    return it != wildcards_.end() && !it->second.empty() && it->second.front() == op;
  }
  void dequeue_wildcard(const WildcardKey& key, const void* op) {
    const auto it = wildcards_.find(key);
    if (it == wildcards_.end()) return;
    auto& line = it->second;
    line.erase(std::remove(line.begin(), line.end(), op), line.end());
    if (line.empty()) wildcards_.erase(it);
  }

 private:
  int mpi_size_;
  std::vector<Operation*> active_;
  std::map<WildcardKey, std::deque<const void*>> wildcards_;
};

}  // namespace rbc::detail
