#pragma once

#include <cstdint>
#include <string>

#include "rbc/error.hpp"
#include "tags.hpp"

namespace rbc::detail {

// Numbers the collectives of one communicator on one rank. All members start collectives in
// the same order, so the numbers agree without communication.
class Sequencer {
 public:
  std::uint32_t start() {
    if (outstanding_ >= kMaxOutstandingCollectives) {
      throw Error("more than " + std::to_string(kMaxOutstandingCollectives) +
                  " nonblocking collectives outstanding on one communicator; complete some first");
    }
    ++outstanding_;
    return next_++;
  }
  void finish() { --outstanding_; }

 private:
  std::uint32_t next_ = 0;
  int outstanding_ = 0;
};

}  // namespace rbc::detail
