#include "rbc/scratch.hpp"

#include <new>
#include <utility>

#include "bytes.hpp"
#include "engine.hpp"
#include "rbc/comm.hpp"

namespace rbc {

namespace detail {
struct ScratchBlock {
  Bytes bytes;
};
}  // namespace detail

Scratch::Scratch() noexcept = default;

Scratch::Scratch(const RangeComm& comm, std::size_t bytes) {
  comm.rank();  // throws for a non-member, as every operation does
  engine_ = comm.engine();
  block_ = std::make_unique<detail::ScratchBlock>();
  block_->bytes = engine_->scratch().take(bytes);
  data_ = block_->bytes.data();
  size_ = bytes;
}

Scratch::Scratch(Scratch&& other) noexcept
    : engine_(std::move(other.engine_)),
      block_(std::move(other.block_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

Scratch& Scratch::operator=(Scratch&& other) noexcept {
  if (this != &other) {
    give_back();
    engine_ = std::move(other.engine_);
    block_ = std::move(other.block_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Scratch::~Scratch() { give_back(); }

void Scratch::give_back() noexcept {
  if (block_ && engine_) {
    try {
      engine_->scratch().give(std::move(block_->bytes));
    } catch (const std::bad_alloc&) {
      // The pool could not grow its list: the block is freed instead of kept.
    }
  }
  block_.reset();
  engine_.reset();
  data_ = nullptr;
  size_ = 0;
}

}  // namespace rbc
