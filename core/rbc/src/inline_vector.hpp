#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace rbc::detail {

// A growable array of trivially copyable values that keeps its first N elements in itself and
// moves to the heap only beyond that. Waits build small lists (the MPI requests to block on,
// the operations to advance) on every round; as locals of the waiting frame they cost no
// allocation in the common case, and waits that nest (a continuation or a destructor waiting
// inside a wait) each have their own. A gather's per-rank offsets on a small communicator
// likewise cost no allocation per call.
template <class T, std::size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>, "InlineVector holds plain values only");

 public:
  InlineVector() = default;
  InlineVector(const T* first, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) push_back(first[i]);
  }
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;

  void push_back(const T& value) {
    if (size_ < N) {
      inline_[size_] = value;
    } else {
      if (size_ == N) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(value);
    }
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  // Replaces the contents by `count` copies of `value`.
  void assign(std::size_t count, const T& value) {
    clear();
    if (count <= N) {
      inline_.fill(value);
    } else {
      heap_.assign(count, value);
    }
    size_ = count;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_.data() : heap_.data(); }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  std::array<T, N> inline_;  // the elements while there are at most N
  std::vector<T> heap_;      // all elements once there are more than N
  std::size_t size_ = 0;
};

}  // namespace rbc::detail
