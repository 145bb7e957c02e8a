#include "rbc/create_group.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

#include "bcast.hpp"
#include "checks.hpp"
#include "member_table.hpp"
#include "rbc/error.hpp"
#include "engine.hpp"
#include "sequencer.hpp"

namespace rbc {

namespace {

// List identities (see detail::CommKey::list). A provisional communicator over the list, used
// only to broadcast the chosen identity, is named by the list's first member, the user's tag and
// the list's size (MPI's rule: concurrent creations over overlapping groups use distinct tags;
// sequential ones may reuse a tag, since every member has its one message of a creation before
// it starts the next); the created one by the first member and a counter of its creations on
// this handle.
std::uint64_t provisional_list(int first_mpi_rank, int tag) {
  return (std::uint64_t{1} << 62) | (static_cast<std::uint64_t>(first_mpi_rank) << 16) |
         static_cast<std::uint64_t>(tag);
}

std::uint64_t created_list(int first_mpi_rank, std::uint64_t creation) {
  return (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(first_mpi_rank) << 31) |
         (creation & ((std::uint64_t{1} << 31) - 1));
}

// Broadcasts the identity chosen by the group's first member over a provisional communicator
// of the group, then builds the new communicator from it.
class CreateGroup final : public detail::Bcast {
 public:
  CreateGroup(const RangeComm& parent, const RangeComm& provisional,
              std::shared_ptr<const detail::MemberTable> table, std::uint64_t chosen_id, RangeComm* result)
      : Bcast(&id_, 1, MPI_UINT64_T, 0, provisional), parent_(parent), table_(std::move(table)), result_(result) {
    id_ = chosen_id;
  }

 private:
  void finished() override { *result_ = parent_.from_list(table_, id_); }

  std::uint64_t id_ = 0;
  RangeComm parent_;
  std::shared_ptr<const detail::MemberTable> table_;
  RangeComm* result_;
};

}  // namespace

Group Group::range(int first, int last, int stride) {
  const Range r(first, last, stride);
  return Group(r, {}, true);
}

Group Group::normalized(std::vector<int> ranks) {
  if (ranks.empty()) throw Error("comm_create_group: the group is empty");
  std::unordered_set<int> seen;
  for (int r : ranks) {
    if (r < 0) throw Error("comm_create_group: negative rank " + std::to_string(r) + " in the group");
    if (!seen.insert(r).second) throw Error("comm_create_group: rank " + std::to_string(r) + " is listed twice");
  }
  const int stride = ranks.size() > 1 ? ranks[1] - ranks[0] : 1;
  bool arithmetic = stride >= 1;
  for (std::size_t i = 1; arithmetic && i < ranks.size(); ++i) arithmetic = ranks[i] - ranks[i - 1] == stride;
  if (arithmetic && ranks[0] >= 0) return Group(Range(ranks.front(), ranks.back(), stride), {}, true);
  const Range placeholder(0, 0);
  return Group(placeholder, std::move(ranks), false);
}

Group Group::ranges(const std::vector<Range>& ranges) {
  std::vector<int> ranks;
  for (const Range& r : ranges) {
    for (int i = 0; i < r.size(); ++i) ranks.push_back(r.at(i));
  }
  return normalized(std::move(ranks));
}

Group Group::list(std::vector<int> ranks) { return normalized(std::move(ranks)); }

std::vector<int> Group::ranks() const {
  if (!is_range_) return ranks_;
  std::vector<int> out(static_cast<std::size_t>(range_.size()));
  for (int i = 0; i < range_.size(); ++i) out[static_cast<std::size_t>(i)] = range_.at(i);
  return out;
}

int Group::size() const { return is_range_ ? range_.size() : static_cast<int>(ranks_.size()); }

Request icomm_create_group(const RangeComm& parent, const Group& group, int tag, RangeComm* newcomm) {
  const int p = parent.size();  // throws for non-members
  detail::check_tag("comm_create_group", tag);
  if (newcomm == nullptr) throw Error("comm_create_group: newcomm is null");
  if (group.is_range()) {
    const Range& r = group.as_range();
    if (r.last() >= p) {
      throw Error("comm_create_group: rank " + std::to_string(r.last()) +
                  " is outside the parent communicator of size " + std::to_string(p));
    }
    if (!r.contains(parent.rank())) {
      throw Error("comm_create_group: the calling rank " + std::to_string(parent.rank()) +
                  " is not in the group; only members call it");
    }
    *newcomm = parent.split_tagged(r.first(), r.last(), r.stride(), tag);
    return Request();
  }

  std::vector<int> members = group.ranks();
  int my_position = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    if (r < 0 || r >= p) {
      throw Error("comm_create_group: rank " + std::to_string(r) +
                  " is outside the parent communicator of size " + std::to_string(p));
    }
    if (r == parent.rank()) my_position = static_cast<int>(i);
    members[i] = parent.mpi_rank(r);
  }
  if (my_position < 0) {
    throw Error("comm_create_group: the calling rank " + std::to_string(parent.rank()) +
                " is not in the group; only members call it");
  }
  auto table = std::make_shared<const detail::MemberTable>(std::move(members));
  const RangeComm provisional = parent.from_list(table, provisional_list(table->ranks[0], tag), false);
  std::uint64_t chosen = 0;
  if (my_position == 0) chosen = created_list(table->ranks[0], parent.engine()->next_creation());
  return Request(detail::make_operation<CreateGroup>(*parent.engine(), parent, provisional, std::move(table), chosen, newcomm));
}

RangeComm comm_create_group(const RangeComm& parent, const Group& group, int tag) {
  RangeComm result;
  icomm_create_group(parent, group, tag, &result).wait();
  return result;
}

}  // namespace rbc
