#pragma once

#include <cstddef>
#include <memory>

namespace rbc {

class RangeComm;

namespace detail {
class Engine;
struct ScratchBlock;
}  // namespace detail

// Memory borrowed from the progress engine of a communicator (shared by every communicator
// derived from one from_mpi) and given back to it when this object goes, for an algorithm's
// temporaries on RBC. The next borrower of as much or less, on any communicator of that engine,
// reuses the block instead of faulting fresh pages in: a block malloc has returned to the system
// costs a page fault per 4 KiB at its next use, which can cost more than the communication it
// serves (RBC's collectives keep their own temporaries the same way; docs/benchmarks.md, "Pages
// faulted in again"). The bytes are not initialised; data() is aligned for any fundamental
// type. Move-only; it may outlive the handle it came from, but belongs to the thread that uses
// that communicator.
class Scratch {
 public:
  Scratch() noexcept;  // no bytes
  // `bytes` bytes from comm's engine. Throws rbc::Error if this process is not a member.
  Scratch(const RangeComm& comm, std::size_t bytes);
  Scratch(Scratch&& other) noexcept;
  Scratch& operator=(Scratch&& other) noexcept;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  void give_back() noexcept;

  std::shared_ptr<detail::Engine> engine_;
  std::unique_ptr<detail::ScratchBlock> block_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rbc
