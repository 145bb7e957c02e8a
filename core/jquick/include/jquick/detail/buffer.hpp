#pragma once

#include <cstddef>
#include <vector>

#include "rbc/comm.hpp"
#include "rbc/scratch.hpp"

namespace jquick::detail {

// Room for elements a sort needs only while it runs (merge buffers, a gathered base case's keys).
// Given a communicator (the RBC layer), the memory is borrowed from its engine (rbc::Scratch)
// and kept there for the next sort: a fresh block larger than malloc's trim threshold faults
// its pages in again at every sort, which on a loaded node cost more than the allgather it
// served (docs/benchmarks.md, "JQuick's buffers kept with the communicator"). Without one, a
// vector. Growing does not keep the contents.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(const rbc::RangeComm* home) : home_(kBorrows ? home : nullptr) {}

  void resize(std::size_t n) {
    if (home_ == nullptr) {
      vector_.resize(n);
      return;
    }
    if (n > capacity_) {
      scratch_ = rbc::Scratch();  // back first: the pool may hand the same block out again
      scratch_ = rbc::Scratch(*home_, n * sizeof(T));
      capacity_ = n;
    }
    size_ = n;
  }

  // Gives the memory back (to the engine, or to the system).
  void release() {
    scratch_ = rbc::Scratch();
    capacity_ = size_ = 0;
    std::vector<T>().swap(vector_);
  }

  T* data() { return home_ == nullptr ? vector_.data() : static_cast<T*>(scratch_.data()); }
  const T* data() const {
    return home_ == nullptr ? vector_.data() : static_cast<const T*>(scratch_.data());
  }
  std::size_t size() const { return home_ == nullptr ? vector_.size() : size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }

 private:
  // Borrowed blocks are aligned as operator new aligns.
  static constexpr bool kBorrows = alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  const rbc::RangeComm* home_ = nullptr;
  rbc::Scratch scratch_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::vector<T> vector_;
};

}  // namespace jquick::detail
