#pragma once

#include <array>
#include <cstddef>
#include <new>

namespace rbc::detail {

// Memory blocks of finished operations, kept by size class (64-byte steps) for the next ones:
// every nonblocking call makes an operation, and without reuse each costs an allocation and a
// free. Blocks larger than the largest class, and blocks beyond kKept per class, go to the heap.
// A kept block holds the link to the next one of its class, so keeping one never allocates.
class BlockPool {
 public:
  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() {
    for (Free* block : free_) {
      while (block != nullptr) {
        Free* next = block->next;
        ::operator delete(block);
        block = next;
      }
    }
  }

  void* allocate(std::size_t bytes) {
    const std::size_t c = size_class(bytes);
    if (c >= kClasses) return ::operator new(bytes);
    if (Free* block = free_[c]) {
      free_[c] = block->next;
      --kept_[c];
      return block;
    }
    return ::operator new((c + 1) * kStep);
  }

  // `bytes`: what allocate was asked for.
  void release(void* block, std::size_t bytes) noexcept {
    const std::size_t c = size_class(bytes);
    if (c >= kClasses || kept_[c] == kKept) {
      ::operator delete(block);
      return;
    }
    free_[c] = new (block) Free{free_[c]};
    ++kept_[c];
  }

 private:
  struct Free {
    Free* next;
  };
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kClasses = 32;  // up to 2 KiB
  static constexpr std::size_t kKept = 64;
  static std::size_t size_class(std::size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kStep; }

  std::array<Free*, kClasses> free_{};
  std::array<std::size_t, kClasses> kept_{};
};

}  // namespace rbc::detail
