// comm_create_group on RBC (paper section VI): creation schedules never deadlock and
// collectives on the created communicators equal MPI's on the same groups.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// Deterministic groups over p ranks: ranges, strided ranges, several ranges, shuffled lists.
std::vector<rbc::Group> make_groups(int p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<rbc::Group> groups;
  groups.push_back(rbc::Group::range(0, p - 1));
  groups.push_back(rbc::Group::list({p - 1}));
  if (p >= 2) groups.push_back(rbc::Group::range(p / 2, p - 1));
  if (p >= 3) groups.push_back(rbc::Group::range(0, p - 1, 2));
  if (p >= 4) groups.push_back(rbc::Group::ranges({rbc::Range(0, p / 4), rbc::Range(p / 2, p - 1, 3)}));
  for (int k = 0; k < 6; ++k) {
    std::vector<int> all(p);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    const int size = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(p));
    all.resize(static_cast<std::size_t>(size));
    groups.push_back(rbc::Group::list(all));
  }
  std::vector<int> reversed(p);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  groups.push_back(rbc::Group::list(reversed));
  return groups;
}

bool member(const rbc::Group& g, int rank) {
  const auto r = g.ranks();
  return std::find(r.begin(), r.end(), rank) != r.end();
}

// MPI's own communicator over the same group (members only).
MPI_Comm reference_comm(const rbc::Group& g, int tag) {
  MPI_Group world_group, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const auto ranks = g.ranks();
  MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group);
  MPI_Comm comm;
  MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  return comm;
}

// Result checks on one created communicator against the MPI reference.
void check_comm(Checker& check, const rbc::Group& g, const rbc::RangeComm& comm, MPI_Comm reference) {
  const auto ranks = g.ranks();
  const int me = check.rank();
  const int position = static_cast<int>(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
  check.equal(comm.size(), static_cast<int>(ranks.size()), "size");
  check.equal(comm.rank(), position, "rank follows group order");
  std::vector<int> world_ranks(ranks.size(), -1);
  rbc::allgather(&me, 1, MPI_INT, world_ranks.data(), 1, MPI_INT, comm);
  check.equal_ranges(world_ranks, ranks, "allgather of world ranks");
  // Values are known everywhere, so prefix and maximum are also computed locally; MPI's own
  // collectives on the same group are the reference where SMPI runs them fast (its scan is linear).
  auto value_of = [](int world_rank) { return 1000LL + 7LL * world_rank; };
  long long value = value_of(me), ours = 0, theirs = 0, expected_prefix = 0, expected_max = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (static_cast<int>(i) <= position) expected_prefix += value_of(ranks[i]);
    expected_max = std::max(expected_max, value_of(ranks[i]));
  }
  rbc::scan(&value, &ours, 1, MPI_LONG_LONG, MPI_SUM, comm);
  check.equal(ours, expected_prefix, "scan");
  if (check.size() <= 64) {
    MPI_Scan(&value, &theirs, 1, MPI_LONG_LONG, MPI_SUM, reference);
    check.equal(ours, theirs, "scan vs MPI_Scan");
  }
  rbc::allreduce(&value, &ours, 1, MPI_LONG_LONG, MPI_MAX, comm);
  check.equal(ours, expected_max, "allreduce max");
  if (check.size() <= 64) {
    MPI_Allreduce(&value, &theirs, 1, MPI_LONG_LONG, MPI_MAX, reference);
    check.equal(ours, theirs, "allreduce vs MPI_Allreduce");
  }
}

// blocking: comm_create_group in group order on every rank (like MPI_Comm_create_group, a
// blocking creation needs one order). The others start icomm_create_group in a per-rank order
// and wait for all: cascaded = group order, alternating = reversed on odd ranks (a blocking
// MPI creation would deadlock here), random = shuffled per rank.
enum class Schedule { blocking, cascaded, alternating, random };
const char* name(Schedule s) {
  switch (s) {
    case Schedule::blocking: return "blocking";
    case Schedule::cascaded: return "cascaded";
    case Schedule::alternating: return "alternating";
    default: return "random";
  }
}

void run_schedule(Checker& check, const rbc::RangeComm& world, const std::vector<rbc::Group>& groups,
                  const std::vector<MPI_Comm>& references, Schedule schedule, std::uint64_t seed) {
  Context c(check, "schedule ", name(schedule), " seed ", seed);
  const int me = world.rank();
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (member(groups[i], me)) mine.push_back(i);
  }
  if (schedule == Schedule::alternating && me % 2 == 1) std::reverse(mine.begin(), mine.end());
  if (schedule == Schedule::random) std::shuffle(mine.begin(), mine.end(), std::mt19937_64(seed * 131 + me));
  std::vector<rbc::RangeComm> created(groups.size());
  // The tag keeps concurrent creations of equal groups apart.
  if (schedule == Schedule::blocking) {
    for (std::size_t i : mine) created[i] = rbc::comm_create_group(world, groups[i], static_cast<int>(i));
  } else {
    std::vector<rbc::Request> requests;
    for (std::size_t i : mine) {
      requests.push_back(rbc::icomm_create_group(world, groups[i], static_cast<int>(i), &created[i]));
    }
    rbc::wait_all(requests);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (!member(groups[i], me)) continue;
    Context g(check, "group ", i);
    check_comm(check, groups[i], created[i], references[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "create_group_test", [](Checker& check) {
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    const std::uint64_t seeds = world.size() <= 16 ? 3 : 1;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      const auto groups = make_groups(world.size(), seed);
      std::vector<MPI_Comm> references(groups.size(), MPI_COMM_NULL);
      for (std::size_t i = 0; i < groups.size(); ++i) {
        if (member(groups[i], world.rank())) references[i] = reference_comm(groups[i], static_cast<int>(i));
      }
      for (Schedule s : {Schedule::blocking, Schedule::cascaded, Schedule::alternating, Schedule::random}) {
        run_schedule(check, world, groups, references, s, seed);
      }
      for (MPI_Comm& comm : references) {
        if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
      }
    }
    // The identity of a listed group is fresh each time: two creations of one group differ.
    if (world.size() >= 3) {
      const auto g = rbc::Group::list({2, 0, 1});
      if (member(g, world.rank())) {
        const rbc::RangeComm a = rbc::comm_create_group(world, g, 1);
        const rbc::RangeComm b = rbc::comm_create_group(world, g, 1);
        check.check(a.id() != b.id(), "two creations of one listed group share an identity");
      }
    }
    check.throws<rbc::Error>([&] { rbc::comm_create_group(world, rbc::Group::list({world.size()}), 0); },
                             "outside", "rank outside the parent");
    if (world.size() >= 2 && world.rank() != 0) {
      check.throws<rbc::Error>([&] { rbc::comm_create_group(world, rbc::Group::list({0}), 0); },
                               "not in the group", "non-member caller");
    }
    check.throws<rbc::Error>([&] { rbc::Group::list({0, 0}); }, "", "duplicate ranks");
  });
}
