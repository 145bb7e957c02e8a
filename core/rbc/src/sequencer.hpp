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
  Sequencer(const CommKey& key, std::shared_ptr<Engine> engine)
      : key_(key), engine_(std::move(engine)), bare_base_(bare_base(key_, *engine_)) {
    engine_->hold(key_.handle);
  }
  ~Sequencer() { engine_->release(key_.handle); }
  Sequencer(const Sequencer&) = delete;
  Sequencer& operator=(const Sequencer&) = delete;
  const CommKey& key() const { return key_; }
  // The tag of this communicator's bare user message with tag 0 (TagLayout::bare_base), or -1
  // where its user messages carry an envelope.
  int bare_base() const { return bare_base_; }

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
  // One communicator per MPI communicator sends its user messages bare: the first handle drawn
  // on it (handle 0: rank 0 draws each number once per MPI communicator while the process
  // lives), over all its ranks, before any split over all of them (generation 0). No other
  // communicator's message ever carries its tags (TagLayout::tag never makes an all-ones
  // context), so MPI's matching alone keeps its messages apart, by construction. Not in the
  // checked build, whose envelopes carry per-peer order and signatures to verify.
  static int bare_base(const CommKey& k, const Engine& engine) {
#ifdef RBC_CHECK_ENVELOPE
    (void)k;
    (void)engine;
    return -1;
#else
    const bool first_whole = k.handle == 0 && k.list == 0 && k.first == 0 && k.last == engine.mpi_size() - 1 &&
                             k.stride == 1 && k.tag == 0 && k.generation == 0;
    return first_whole && engine.layout().bare_tags() ? engine.layout().bare_base() : -1;
#endif
  }

  CommKey key_;
  std::shared_ptr<Engine> engine_;
  int bare_base_;
  std::uint32_t next_ = 0;
  int outstanding_ = 0;
  std::map<std::pair<int, int>, std::uint64_t> sent_;
  std::map<std::pair<int, int>, std::uint64_t> received_;
};

}  // namespace rbc::detail
