#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "engine.hpp"
#include "key.hpp"
#include "rbc/error.hpp"
#include "tags.hpp"

namespace rbc::detail {

// Nonblocking collectives one communicator may have outstanding on one rank.
inline constexpr int kMaxOutstandingCollectives = 256;

// Numbers the collectives of one communicator on one rank. All members start collectives in
// the same order, so the numbers agree without communication. The checked build also numbers
// messages per (peer, tag) in each direction.
class Sequencer {
 public:
  Sequencer(const CommKey& key, std::shared_ptr<Engine> engine) : key_(key), engine_(std::move(engine)) {
    engine_->hold(key_.handle);
  }
  ~Sequencer() { engine_->release(key_.handle); }
  Sequencer(const Sequencer&) = delete;
  Sequencer& operator=(const Sequencer&) = delete;
  const CommKey& key() const { return key_; }

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

 private:
  CommKey key_;
  std::shared_ptr<Engine> engine_;
  std::uint32_t next_ = 0;
  int outstanding_ = 0;
  std::map<std::pair<int, int>, std::uint64_t> sent_;
  std::map<std::pair<int, int>, std::uint64_t> received_;
};

}  // namespace rbc::detail
