#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace rbc::detail {

// Bytes on the wire and scratch space. Resizing leaves new bytes uninitialised (MPI or memcpy
// writes them next), so reusing a buffer for a larger message costs no memset.
template <class T>
struct DefaultInit : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInit<U>;
  };
  using std::allocator<T>::allocator;
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(p)) U;
    } else {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  }
};
using Bytes = std::vector<char, DefaultInit<char>>;

// Large temporaries of collectives (partial results, children's contributions), kept for the
// next collective: a fresh allocation faults its pages in again once malloc has returned them
// to the system (a multi-megabyte one always; from a few KiB on once the heap was trimmed),
// which costs more than the reduction itself. Holds at most kKept buffers of
// kMinBytes..kMaxBytes, and up to kSmallKept of kSmallBytes (less than twice that) for small
// ones.
class ScratchPool {
 public:
  Bytes take(std::size_t bytes) {
    if (bytes <= kSmallBytes) {
      Bytes b;
      if (small_.empty()) {
        b.reserve(kSmallBytes);
      } else {
        b = std::move(small_.back());
        small_.pop_back();
      }
      b.resize(bytes);
      return b;
    }
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->capacity() >= bytes && (best == free_.end() || it->capacity() < best->capacity())) best = it;
    }
    Bytes b;
    if (best != free_.end()) {
      b = std::move(*best);
      free_.erase(best);
    }
    b.resize(bytes);
    return b;
  }

  void give(Bytes&& b) {
    if (b.capacity() >= kSmallBytes && b.capacity() < 2 * kSmallBytes) {
      if (small_.size() < kSmallKept) small_.push_back(std::move(b));
      return;
    }
    if (b.capacity() < kMinBytes || b.capacity() > kMaxBytes) return;
    if (free_.size() == kKept) {
      auto smallest = std::min_element(free_.begin(), free_.end(),
                                       [](const Bytes& x, const Bytes& y) { return x.capacity() < y.capacity(); });
      if (smallest->capacity() >= b.capacity()) return;
      free_.erase(smallest);
    }
    free_.push_back(std::move(b));
  }

 private:
  static constexpr std::size_t kMinBytes = 2 * 1024;
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
  static constexpr std::size_t kKept = 4;
  // Small temporaries (a short vector's partial results): every collective on a few elements
  // takes several, and a malloc each costs about as much as the collective's own bookkeeping.
  static constexpr std::size_t kSmallBytes = 1024;
  static constexpr std::size_t kSmallKept = 32;
  std::vector<Bytes> free_;
  std::vector<Bytes> small_;
};

}  // namespace rbc::detail
