// Node-aware schedules: RangeComm::node_members and on_one_node against an oracle built here from
// MPI_Comm_split_type, and allreduce (commutative and not), allgather and barrier, whose rounds
// across nodes each member takes in its own order, on ranges that line up with the nodes, that
// do not, with strides, with p not a power of two, and two at once. Packed (smpi_pack), the spread
// schedules run; with one rank per host, or all on one node, nothing is spread.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// Each rank's node as the first rank of `comm` on it (MPI_Comm_split_type's idea of a node).
std::vector<int> node_firsts(MPI_Comm comm) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  int node_first = me;
  MPI_Allreduce(MPI_IN_PLACE, &node_first, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> first(static_cast<std::size_t>(p));
  MPI_Allgather(&node_first, 1, MPI_INT, first.data(), 1, MPI_INT, comm);
  return first;
}

// The largest power of two m <= p such that every aligned block of m ranks shares a node.
int expected_node_members(const std::vector<int>& first) {
  const int p = static_cast<int>(first.size());
  int best = 1;
  for (int m = 2; m <= p; m *= 2) {
    bool shared = true;
    for (int r = 0; r < p; ++r) shared = shared && first[static_cast<std::size_t>(r)] == first[static_cast<std::size_t>(r - r % m)];
    if (shared) best = m;
  }
  return best;
}

int expected_node_members(MPI_Comm comm) { return expected_node_members(node_firsts(comm)); }

long long value(int rank, int i) { return 1000LL * rank + i + 1; }

// Intervals of ranks, lo * 2^20 + hi, -1 for none: a op b joins a and b if b starts where a
// ends, else gives none. Associative, not commutative: only combining adjacent blocks in rank
// order yields the whole range.
constexpr long long kShift = 1LL << 20;
long long interval(long long lo, long long hi) { return lo * kShift + hi; }
void join(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i < *len; ++i) {
    const bool adjacent = a[i] >= 0 && b[i] >= 0 && a[i] % kShift + 1 == b[i] / kShift;
    b[i] = adjacent ? interval(a[i] / kShift, b[i] % kShift) : -1;
  }
}

void reductions(Checker& check, const rbc::RangeComm& comm, MPI_Op joined) {
  const int p = comm.size(), me = comm.rank();
  for (int n : {1, 3}) {
    std::vector<long long> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n), -1);
    std::vector<long long> sum(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      in[static_cast<std::size_t>(i)] = value(me, i);
      for (int r = 0; r < p; ++r) sum[static_cast<std::size_t>(i)] += value(r, i);
    }
    rbc::allreduce(in.data(), out.data(), n, MPI_LONG_LONG, MPI_SUM, comm);
    check.equal_ranges(out, sum, "allreduce sum, ", n, " elements");
    const std::vector<long long> own(static_cast<std::size_t>(n), interval(me, me));
    const std::vector<long long> whole(static_cast<std::size_t>(n), interval(0, p - 1));
    out.assign(static_cast<std::size_t>(n), -2);
    rbc::allreduce(own.data(), out.data(), n, MPI_LONG_LONG, joined, comm);
    check.equal_ranges(out, whole, "allreduce of intervals (not commutative), ", n, " elements");
  }
  for (int n : {1, 3}) {
    std::vector<long long> in(static_cast<std::size_t>(n)), all(static_cast<std::size_t>(p) * n, -1);
    std::vector<long long> expected(all.size());
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = value(me, i);
    for (int r = 0; r < p; ++r) {
      for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(r * n + i)] = value(r, i);
    }
    rbc::allgather(in.data(), n, MPI_LONG_LONG, all.data(), n, MPI_LONG_LONG, comm);
    check.equal_ranges(all, expected, "allgather, ", n, " elements");
    all.assign(all.size(), -1);
    std::copy(in.begin(), in.end(), all.begin() + static_cast<std::ptrdiff_t>(me) * n);
    rbc::allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), n, MPI_LONG_LONG, comm);
    check.equal_ranges(all, expected, "allgather in place, ", n, " elements");
  }
  {
    // Uneven parts, some empty: rank r brings r % 3 elements.
    std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
    std::vector<long long> expected;
    for (int r = 0; r < p; ++r) {
      counts[static_cast<std::size_t>(r)] = r % 3;
      displs[static_cast<std::size_t>(r)] = static_cast<int>(expected.size());
      for (int i = 0; i < r % 3; ++i) expected.push_back(value(r, i));
    }
    std::vector<long long> in(static_cast<std::size_t>(me % 3)), all(expected.size(), -1);
    for (int i = 0; i < me % 3; ++i) in[static_cast<std::size_t>(i)] = value(me, i);
    rbc::allgatherv(in.data(), me % 3, MPI_LONG_LONG, all.data(), counts.data(), displs.data(), MPI_LONG_LONG, comm);
    check.equal_ranges(all, expected, "allgatherv, 0-2 elements per rank");
  }
  long long mine = value(me, 0), total = -1, expected = 0;
  for (int r = 0; r < p; ++r) expected += value(r, 0);
  for (int round = 0; round < 3; ++round) rbc::barrier(comm);
  rbc::allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  check.equal(total, expected, "allreduce after barriers");
}

// What the base communicator's nodes are: each rank's node, and node_members of the whole.
struct Nodes {
  std::vector<int> first;
  int members = 1;
  bool one = false;
};

// on_one_node: true for every range when all ranks share a node (any p), else exactly when the
// members lie in one aligned block of node_members ranks; and never true for members on two nodes.
void check_one_node(Checker& check, const rbc::RangeComm& comm, const Nodes& nodes) {
  const int m = nodes.members;
  const int first = comm.first(), last = comm.last();
  check.equal(comm.on_one_node(), nodes.one || (m > 1 && first / m == last / m), "on_one_node");
  bool shared = true;
  for (int r = first; r <= last; r += comm.stride()) {
    shared = shared && nodes.first[static_cast<std::size_t>(r)] == nodes.first[static_cast<std::size_t>(first)];
  }
  check.check(shared || !comm.on_one_node(), "on_one_node only where the members share a node");
}

void on_range(Checker& check, const rbc::RangeComm& world, const Nodes& nodes, int first, int last, int stride,
              MPI_Op joined) {
  if (first < 0 || first > last || last >= world.size()) return;
  Context c(check, "range ", first, "..", last, " stride ", stride);
  const rbc::RangeComm comm = world.split(first, last, stride);
  if (!comm.is_member()) return;
  const int base_members = nodes.members;
  const bool lines_up = first % base_members == 0 && stride < base_members && base_members % stride == 0;
  check.equal(comm.node_members(), lines_up ? base_members / stride : 1, "node_members");
  check_one_node(check, comm, nodes);
  reductions(check, comm, joined);
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "nodes_test", [](Checker& check) {
    Nodes nodes;
    nodes.first = node_firsts(MPI_COMM_WORLD);
    nodes.members = expected_node_members(nodes.first);
    nodes.one = std::all_of(nodes.first.begin(), nodes.first.end(), [](int f) { return f == 0; });
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    const int p = world.size(), me = world.rank();
    check.equal(world.node_members(), nodes.members, "node_members of MPI_COMM_WORLD");
    check.equal(world.on_one_node(), nodes.one, "on_one_node of MPI_COMM_WORLD");

    MPI_Comm halves;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &halves);
    const int expected_half = expected_node_members(halves);
    check.equal(rbc::RangeComm::from_mpi(halves).node_members(), expected_half, "node_members of every other rank");
    MPI_Comm_free(&halves);

    MPI_Op joined;
    MPI_Op_create(&join, 0, &joined);
    {
      Context c(check, "whole communicator");
      reductions(check, world, joined);
    }
    const int m = nodes.members;
    for (int stride : {1, 2, 4}) {
      on_range(check, world, nodes, 0, p - 1, stride, joined);
      on_range(check, world, nodes, m, p - 1, stride, joined);
    }
    on_range(check, world, nodes, m / 2, p - 1, 1, joined);
    on_range(check, world, nodes, 0, p - 2, 1, joined);
    on_range(check, world, nodes, 1, p - 1, 1, joined);
    on_range(check, world, nodes, 0, p - 1 - m / 2, 1, joined);
    // Within one block, across two, and a block's tail.
    on_range(check, world, nodes, 0, m - 1, 1, joined);
    on_range(check, world, nodes, m / 2, m + m / 2 - 1, 1, joined);
    on_range(check, world, nodes, 1, m - 1, 2, joined);

    // Two at once: a barrier over all while an allreduce runs on the second half.
    if (p >= 2) {
      const int from = p / 2 - (p / 2) % m;
      const rbc::RangeComm tail = world.split(from, p - 1);
      rbc::Request all = rbc::ibarrier(world);
      long long mine = value(me, 0), total = -1, sum = 0;
      for (int r = from; r < p; ++r) sum += value(r, 0);
      if (tail.is_member()) {
        rbc::Request part = rbc::iallreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, tail);
        part.wait();
        check.equal(total, sum, "iallreduce beside ibarrier");
      }
      all.wait();
    }

    // A group from a list: positions in a list say nothing about nodes.
    if (p >= 2) {
      std::vector<int> backwards(static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r) backwards[static_cast<std::size_t>(r)] = p - 1 - r;
      const rbc::RangeComm listed = rbc::comm_create_group(world, rbc::Group::list(backwards), 0);
      check.equal(listed.node_members(), 1, "node_members of a listed group");
      check.equal(listed.on_one_node(), nodes.one, "on_one_node of a listed group");
      reductions(check, listed, joined);
    }
    MPI_Op_free(&joined);
  });
}
