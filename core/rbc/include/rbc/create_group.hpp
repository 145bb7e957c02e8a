#pragma once

#include <utility>
#include <vector>

#include "rbc/comm.hpp"
#include "rbc/range.hpp"
#include "rbc/request.hpp"

namespace rbc {

// The members of a communicator to create, as ranks of the parent communicator, in the order
// they get in the new one.
class Group {
 public:
  static Group range(int first, int last, int stride = 1);
  // Several ranges, concatenated in the given order.
  static Group ranges(const std::vector<Range>& ranges);
  // Any distinct ranks, in the given order.
  static Group list(std::vector<int> ranks);

  // True if the members form one strided range in increasing order (then creation is local).
  bool is_range() const { return is_range_; }
  const Range& as_range() const { return range_; }
  // The members, expanded (for a range too).
  std::vector<int> ranks() const;
  int size() const;

 private:
  Group(Range range, std::vector<int> ranks, bool is_range)
      : range_(range), ranks_(std::move(ranks)), is_range_(is_range) {}
  static Group normalized(std::vector<int> ranks);

  Range range_;
  std::vector<int> ranks_;
  bool is_range_;
};

// Nonblocking communicator creation with its own context (the paper's proposed
// MPI_Icomm_create_group, section VI, on RBC). Called by the members of `group` only.
//
// - A range of the parent: local and O(1); the identity is derived from the parent's and the
//   range, and the request is complete at once.
// - Any other group: the first member picks a fresh identity (its rank and a per-parent
//   counter) and broadcasts it over the group with a nonblocking binomial tree, O(alpha log l).
//   `tag` (0..max_user_tag) keeps concurrent creations over the same group apart; creations over
//   different or overlapping groups progress concurrently (rbc::wait_all).
//
// *newcomm is written when the request completes. Communication on the new communicator never
// matches that of any other communicator with a different identity (see README, Tags).
Request icomm_create_group(const RangeComm& parent, const Group& group, int tag, RangeComm* newcomm);
RangeComm comm_create_group(const RangeComm& parent, const Group& group, int tag);

}  // namespace rbc
