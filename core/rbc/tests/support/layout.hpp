#pragma once

// Communicator layouts shared by the RBC tests: a layout is a chain of splits (or janus halves)
// of MPI_COMM_WORLD, optionally of a reversed copy of it. For each layout a rank gets the RBC
// communicator and, as the reference, an MPI communicator over the same members in the same
// order (MPI_Comm_split of MPI_COMM_WORLD).

#include <mpi.h>

#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace rbc_test {

struct Step {
  enum Kind { kSplit, kJanusLeft, kJanusRight };
  Kind kind;
  int a;           // split: first; janus: left_last
  int b;           // split: last; janus: right_first
  int stride = 1;  // split only
};

struct Layout {
  std::string name;
  std::vector<Step> steps;
  // The RBC communicator is built on an MPI communicator holding the world ranks in reverse
  // order, so member ranks and world ranks differ.
  bool reversed_parent = false;
  // No steps: the RBC communicator is the first handle on a fresh duplicate of MPI_COMM_WORLD,
  // whose point-to-point messages and blocking collectives travel bare (where MPI_TAG_UB allows).
  bool first_handle = false;
};

// World ranks of the members of `layout`, in member order, for a world of size p.
std::vector<int> members_of(const Layout& layout, int p);

// Split, strided, nested, janus, size-1 and reversed-parent layouts of a world of size p.
// `sample` keeps a representative handful (for large p).
std::vector<Layout> standard_layouts(int p, bool sample);

// The first handle on a fresh duplicate of MPI_COMM_WORLD (Layout::first_handle). Build it
// before any other from_mpi on a duplicate: handles are numbered per MPI communicator value,
// which MPI reuses once a communicator is freed.
Layout first_handle_layout();

// Up to `limit` distinct ranks of 0..size-1 including 0, 1, size/2 and size-1 (all if size <=
// limit); `salt` picks the rest.
std::vector<int> sample_ranks(int size, int limit, unsigned salt);

// One layout as seen by this rank. Constructing it is collective over MPI_COMM_WORLD (the
// reference communicator is made by MPI_Comm_split); it checks that the RBC communicator
// reports the expected members, and that non-members get a communicator that says so. If that
// fails on any rank, the failure is recorded and every rank treats itself as a non-member.
class LayoutComms {
 public:
  LayoutComms(const Layout& layout, janus::testing::Checker& check);
  ~LayoutComms();
  LayoutComms(const LayoutComms&) = delete;
  LayoutComms& operator=(const LayoutComms&) = delete;

  bool member() const { return rank_ >= 0; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(world_ranks_.size()); }
  const rbc::RangeComm& comm() const { return comm_; }
  // MPI communicator over the same members in the same order (MPI_COMM_NULL for non-members).
  MPI_Comm reference() const { return reference_; }
  const std::vector<int>& world_ranks() const { return world_ranks_; }
  const std::string& name() const { return name_; }

 private:
  bool build(const Layout& layout, janus::testing::Checker& check);

  std::string name_;
  std::vector<int> world_ranks_;
  int rank_ = -1;
  rbc::RangeComm comm_;
  MPI_Comm reversed_ = MPI_COMM_NULL;
  MPI_Comm duplicate_ = MPI_COMM_NULL;
  MPI_Comm reference_ = MPI_COMM_NULL;
};

// Deterministic mixing of up to four integers (splitmix64), for reproducible test data.
unsigned long long mix(unsigned long long a, unsigned long long b = 0, unsigned long long c = 0,
                       unsigned long long d = 0);

}  // namespace rbc_test
