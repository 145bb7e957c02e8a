#pragma once

#include <array>
#include <cstddef>
#include <new>
#include <vector>

namespace rbc::detail {

// Memory blocks of finished operations, kept by size class (64-byte steps) for the next ones:
// every nonblocking call makes an operation, and without reuse each costs an allocation and a
// free. Blocks larger than the largest class, and blocks beyond kKept per class, go to the heap.
class BlockPool {
 public:
  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() {
    for (auto& blocks : free_) {
      for (void* block : blocks) ::operator delete(block);
    }
  }

  void* allocate(std::size_t bytes) {
    const std::size_t c = size_class(bytes);
    if (c < kClasses && !free_[c].empty()) {
      void* block = free_[c].back();
      free_[c].pop_back();
      return block;
    }
    return ::operator new(c < kClasses ? (c + 1) * kStep : bytes);
  }

  // `bytes`: what allocate was asked for.
  void release(void* block, std::size_t bytes) noexcept {
    const std::size_t c = size_class(bytes);
    if (c < kClasses && free_[c].size() < kKept) {
      try {
        free_[c].push_back(block);
        return;
      } catch (...) {  // no memory to keep it: give it back
      }
    }
    ::operator delete(block);
  }

 private:
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kClasses = 32;  // up to 2 KiB
  static constexpr std::size_t kKept = 64;
  static std::size_t size_class(std::size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kStep; }

  std::array<std::vector<void*>, kClasses> free_;
};

}  // namespace rbc::detail
