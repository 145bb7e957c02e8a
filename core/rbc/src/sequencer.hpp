#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "rbc/error.hpp"
#include "tags.hpp"

namespace rbc::detail {

// Numbers the collectives of one communicator on one rank. All members start collectives in
// the same order, so the numbers agree without communication. The checked build also numbers
// messages per (peer, tag) in each direction.
class Sequencer {
 public:
  std::uint64_t next_sent(int mpi_peer, int mpi_tag) { return sent_[{mpi_peer, mpi_tag}]++; }
  std::uint64_t next_received(int mpi_peer, int mpi_tag) { return received_[{mpi_peer, mpi_tag}]++; }

  std::uint32_t start() {
    if (outstanding_ >= kMaxOutstandingCollectives) {
      throw Error("more than " + std::to_string(kMaxOutstandingCollectives) +
                  " nonblocking collectives outstanding on one communicator; complete some first");
    }
    ++outstanding_;
    return next_++;
  }
  void finish() { --outstanding_; }

  // Communicators this rank has created from this one as first member of a listed group.
  std::uint64_t next_creation() { return creations_++; }

 private:
  std::uint32_t next_ = 0;
  int outstanding_ = 0;
  std::uint64_t creations_ = 0;
  std::map<std::pair<int, int>, std::uint64_t> sent_;
  std::map<std::pair<int, int>, std::uint64_t> received_;
};

}  // namespace rbc::detail
