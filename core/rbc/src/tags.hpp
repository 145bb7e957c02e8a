#pragma once

#include <cstdint>

#include "key.hpp"
#include "rbc/comm.hpp"

// What RBC puts in MPI tags. Isolation does not depend on it: every message carries its
// communicator's exact key and its label in an envelope, checked at the receiver (wire.cpp).
// The tag only narrows what MPI matches, so that a receive rarely sees another communicator's
// message. It adapts to the library's MPI_TAG_UB (any value from the standard's 32767 up):
//
//   bit B-1         0 = a message with an envelope, or a bare one:
//     bit B-2         0 = user point-to-point, 1 = collective-internal
//     next C bits     context: low bits of the key's digest, never all ones; all ones = a bare
//                     message (no envelope, the tag alone says whose it is) of the one
//                     communicator per MPI communicator that sends them (Sequencer::bare_base):
//                     a user message (bit B-2 clear) or a blocking collective's (set)
//     low L bits      user tag, or the collective's sequence number and phase (low bits)
//   bit B-1         1 = the payload of a large message:
//     bit B-2         who numbered it: 0 the sender (a transfer number, named in the envelope
//                     sent before it), 1 the receiver (a number its own envelope announced in an
//                     exchange, post_exchange)
//     low B-2 bits    the number
//
// where B is the number of tag bits MPI_TAG_UB allows (15 for 32767, 28 for MPICH's 2^28-1,
// 31 for Open MPI and SMPI), C = max(5, B - 17) and L = B - 2 - C.
namespace rbc::detail {

// Which message of a communicator: a user message with its tag, or phase `tag` of the
// collective numbered `sequence`.
struct Label {
  std::uint32_t collective = 0;
  std::uint32_t sequence = 0;
  std::int32_t tag = 0;

  friend bool operator==(const Label& a, const Label& b) {
    return a.collective == b.collective && a.sequence == b.sequence && a.tag == b.tag;
  }
  friend bool operator!=(const Label& a, const Label& b) { return !(a == b); }
};

inline Label user_label(int tag) { return Label{0, 0, tag}; }
inline Label collective_label(std::uint32_t sequence, int phase) { return Label{1, sequence, phase}; }
// A blocking collective's on the communicator whose messages travel bare (bare.hpp).
inline Label bare_collective_label(std::uint32_t sequence, int phase) { return Label{2, sequence, phase}; }

class TagLayout {
 public:
  explicit TagLayout(int tag_ub) {
    bits_ = 1;
    while (bits_ < 31 && (static_cast<std::int64_t>(1) << (bits_ + 1)) - 1 <= tag_ub) ++bits_;
    context_bits_ = bits_ - 17 > 5 ? bits_ - 17 : 5;
    low_bits_ = bits_ - 2 - context_bits_;
    context_mask_ = mask(context_bits_);
    low_mask_ = mask(low_bits_);
    collective_bit_ = 1u << (bits_ - 2);
  }

  int bits() const { return bits_; }

  // Every message computes its tag: masks and bits are fixed at construction.
  int tag(std::uint64_t digest, const Label& label) const {
#ifdef RBC_TEST_COLLIDE_CONTEXTS
    digest = 0;
#endif
    std::uint32_t context = static_cast<std::uint32_t>(digest) & context_mask_;
    if (context == context_mask_) context ^= 1u;  // all ones: bare messages only
    const std::uint32_t value =
        label.collective ? (label.sequence << 5) | static_cast<std::uint32_t>(label.tag)
                         : static_cast<std::uint32_t>(label.tag);
    const std::uint32_t kind = label.collective ? collective_bit_ : 0u;
    return static_cast<int>(kind | (context << low_bits_) | (value & low_mask_));
  }

  // Whether every user tag fits the low bits, as a bare message's tag must (B >= 22).
  bool bare_tags() const { return low_bits_ >= 15; }
  // The tag of the bare user message with tag 0; user tag t's is bare_base() | t.
  int bare_base() const { return static_cast<int>(context_mask_ << low_bits_); }
  // The tag of a bare blocking collective's message (bare_collective_label): the collective bit,
  // the all-ones context, and the low bits of sequence number and phase.
  int bare_collective_tag(const Label& label) const {
    const std::uint32_t value = (label.sequence << 5) | static_cast<std::uint32_t>(label.tag);
    return static_cast<int>(collective_bit_ | (context_mask_ << low_bits_) | (value & low_mask_));
  }

  int payload_tag(std::uint64_t transfer) const {
    return static_cast<int>((1u << (bits_ - 1)) | (static_cast<std::uint32_t>(transfer) & mask(bits_ - 2)));
  }
  int announced_tag(std::uint64_t number) const {
    return static_cast<int>((1u << (bits_ - 1)) | (1u << (bits_ - 2)) | (static_cast<std::uint32_t>(number) & mask(bits_ - 2)));
  }

  // Large messages from one process to another that may be in flight at once before their
  // payload tags repeat (as many again for payloads whose receiver announced their tag).
  std::uint64_t payload_window() const { return std::uint64_t{1} << (bits_ - 2); }

 private:
  static std::uint32_t mask(int bits) { return bits >= 32 ? ~0u : (1u << bits) - 1; }

  int bits_;
  int context_bits_;
  int low_bits_;
  std::uint32_t context_mask_;
  std::uint32_t low_mask_;
  std::uint32_t collective_bit_;
};

}  // namespace rbc::detail
