// groupcomm::create_group on both backends.
//
// Open MPI: each case builds a group (a list of parent ranks in the order the new communicator
// must have), lets its members create the communicator and checks it: size, rank, the group
// (MPI_Group_compare == MPI_IDENT, translated ranks), rank order through communication
// (MPI_Allgather), an MPI_Allreduce, and congruence with MPI_Comm_create_group's result over the
// same group. Then the errors, which are local (no communication, no hang).
//
// SMPI: the documented skip. available() is false and every call throws groupcomm::Unsupported
// with kUnsupportedMessage, leaving *newcomm == MPI_COMM_NULL.
#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "groupcomm/groupcomm.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// An MPI group made from ranks of a communicator, freed on scope exit.
class Group {
 public:
  Group(MPI_Comm comm, const std::vector<int>& ranks) {
    MPI_Group all;
    MPI_Comm_group(comm, &all);
    MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &group_);
    MPI_Group_free(&all);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() { MPI_Group_free(&group_); }
  MPI_Group get() const { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

std::vector<int> iota_ranks(int first, int count) {
  std::vector<int> ranks(std::max(count, 0));
  std::iota(ranks.begin(), ranks.end(), first);
  return ranks;
}

std::vector<int> reversed(std::vector<int> ranks) {
  std::reverse(ranks.begin(), ranks.end());
  return ranks;
}

// a0, a_last, a1, a_last-1, ...: a non-monotone order of the same ranks.
std::vector<int> zigzag(const std::vector<int>& ranks) {
  std::vector<int> out;
  std::size_t lo = 0;
  std::size_t hi = ranks.size();
  while (lo < hi) {
    out.push_back(ranks[lo++]);
    if (lo < hi) out.push_back(ranks[--hi]);
  }
  return out;
}

// The index of `rank` in `ranks`, or -1.
int position(const std::vector<int>& ranks, int rank) {
  const auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

// Checks `comm`, created from `group` = `ranks` of `parent`, on a member.
void verify(Checker& check, MPI_Comm parent, const Group& group, const std::vector<int>& ranks,
            int reference_tag, MPI_Comm comm) {
  if (!check.check(comm != MPI_COMM_NULL, "the new communicator is MPI_COMM_NULL")) return;
  const int n = static_cast<int>(ranks.size());
  int inter = 1;
  MPI_Comm_test_inter(comm, &inter);
  check.equal(inter, 0, "MPI_Comm_test_inter");
  check.equal(size_of(comm), n, "size");
  check.equal(rank_of(comm), position(ranks, rank_of(parent)), "rank = position in the group");

  MPI_Group created;
  MPI_Comm_group(comm, &created);
  int relation = MPI_UNEQUAL;
  MPI_Group_compare(created, group.get(), &relation);
  check.equal(relation, MPI_IDENT, "MPI_Group_compare(new group, group) (MPI_IDENT = same order)");
  MPI_Group parent_group;
  MPI_Comm_group(parent, &parent_group);
  const std::vector<int> new_ranks = iota_ranks(0, n);
  std::vector<int> in_parent(n, -1);
  MPI_Group_translate_ranks(created, n, new_ranks.data(), parent_group, in_parent.data());
  check.equal_ranges(in_parent, ranks, "new ranks translated to parent ranks");
  MPI_Group_free(&parent_group);
  MPI_Group_free(&created);

  // The order again, through communication on the new communicator.
  const int mine = rank_of(parent);
  std::vector<int> gathered(n, -1);
  MPI_Allgather(&mine, 1, MPI_INT, gathered.data(), 1, MPI_INT, comm);
  check.equal_ranges(gathered, ranks, "MPI_Allgather of parent ranks");
  long long value = 1 + static_cast<long long>(mine) * mine;
  long long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm);
  long long expected = 0;
  for (int r : ranks) expected += 1 + static_cast<long long>(r) * r;
  check.equal(sum, expected, "MPI_Allreduce sum of 1 + r^2 over the parent ranks");

  MPI_Comm reference = MPI_COMM_NULL;
  MPI_Comm_create_group(parent, group.get(), reference_tag, &reference);
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(comm, reference, &same);
  check.equal(same, MPI_CONGRUENT, "MPI_Comm_compare with MPI_Comm_create_group's result");
  MPI_Comm_free(&reference);
}

// Members of `ranks` create and verify; the others skip (they are not to call).
void create_and_verify(Checker& check, MPI_Comm parent, const std::vector<int>& ranks, int tag,
                       const std::string& name) {
  Context context(check, name, " (tag ", tag, ")");
  if (ranks.empty() || position(ranks, rank_of(parent)) < 0) return;
  const Group group(parent, ranks);
  MPI_Comm comm = MPI_COMM_NULL;
  check.equal(groupcomm::create_group(parent, group.get(), tag, &comm), MPI_SUCCESS, "return value");
  verify(check, parent, group, ranks, tag + 1, comm);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void test_creation(Checker& check) {
  const MPI_Comm world = MPI_COMM_WORLD;
  const int p = size_of(world);
  const int me = rank_of(world);
  const std::vector<int> all = iota_ranks(0, p);

  create_and_verify(check, world, all, 0, "all ranks in order");
  create_and_verify(check, world, reversed(all), 2, "all ranks reversed");

  // Two disjoint non-contiguous groups at the same time (every rank is in exactly one).
  std::vector<int> even;
  std::vector<int> odd;
  for (int r = 0; r < p; ++r) (r % 2 == 0 ? even : odd).push_back(r);
  if (me % 2 == 0) {
    create_and_verify(check, world, even, 4, "even ranks");
  } else {
    create_and_verify(check, world, odd, 6, "odd ranks, reversed");
  }

  // Every rank alone, all at once.
  create_and_verify(check, world, {me}, 8, "singleton");

  // Non-contiguous, non-monotone: the ranks r with r % 3 != 1, zigzag order.
  std::vector<int> sparse;
  for (int r = 0; r < p; ++r) {
    if (r % 3 != 1) sparse.push_back(r);
  }
  create_and_verify(check, world, zigzag(sparse), 10, "r % 3 != 1, zigzag order");

  // Lower half reversed and upper half zigzag, concurrently with different tags.
  const int h = p / 2;
  if (me < h) {
    create_and_verify(check, world, reversed(iota_ranks(0, h)), 12, "lower half reversed");
  } else {
    create_and_verify(check, world, zigzag(iota_ranks(h, p - h)), 14, "upper half zigzag");
  }

  // Overlapping groups, different tags, the same call order everywhere: ranks only in the second
  // group start it at once, so its messages reach the shared ranks while those are still
  // creating the first.
  {
    const int third = p / 3;
    create_and_verify(check, world, iota_ranks(0, p - third), 40, "lower two thirds");
    create_and_verify(check, world, reversed(iota_ranks(third, p - third)), 42,
                      "upper two thirds, reversed");
  }

  // The largest tag the parent allows.
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(world, MPI_TAG_UB, &tag_ub, &found);
  if (check.check(found != 0, "MPI_TAG_UB attribute present")) {
    create_and_verify(check, world, zigzag(all), *tag_ub - 1, "tag MPI_TAG_UB - 1");
  }

  // The parent is not MPI_COMM_WORLD: world reversed; the group uses the parent's ranks.
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_split(world, 0, p - 1 - me, &parent);
  std::vector<int> every_other;
  for (int r = 0; r < p; r += 2) every_other.push_back(r);
  create_and_verify(check, parent, reversed(every_other), 16, "parent = world reversed, every other rank");
  create_and_verify(check, parent, all, 16, "parent = world reversed, all ranks (tag reused)");
  MPI_Comm_free(&parent);

  // The same group twice in a row with the same tag gives two distinct, congruent communicators.
  {
    Context context(check, "same group twice");
    const Group group(world, all);
    groupcomm::Comm first = groupcomm::create(world, group.get(), 20);
    groupcomm::Comm second = groupcomm::create(world, group.get(), 20);
    int relation = MPI_UNEQUAL;
    MPI_Comm_compare(first.get(), second.get(), &relation);
    check.equal(relation, MPI_CONGRUENT, "MPI_Comm_compare(first, second)");
    // Messages on one never reach the other.
    const int next = (me + 1) % p;
    const int prev = (me + p - 1) % p;
    int a = me;
    int b = -me - 1;
    int got_a = -1;
    int got_b = -1;
    MPI_Request requests[2];
    MPI_Irecv(&got_b, 1, MPI_INT, prev, 0, second.get(), &requests[0]);
    MPI_Irecv(&got_a, 1, MPI_INT, prev, 0, first.get(), &requests[1]);
    MPI_Send(&a, 1, MPI_INT, next, 0, first.get());
    MPI_Send(&b, 1, MPI_INT, next, 0, second.get());
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    check.equal(got_a, prev, "message on the first communicator");
    check.equal(got_b, -prev - 1, "message on the second communicator");

    // Ownership moves with the handle.
    groupcomm::Comm moved = std::move(first);
    check.check(!first && moved, "a moved-from Comm is empty, the target owns it");
    MPI_Comm raw = moved.release();
    check.check(!moved && raw != MPI_COMM_NULL, "release() hands the communicator over");
    MPI_Comm_free(&raw);
  }

  // Only members take part: rank p-1 stays out and waits for a message that rank 0 sends only
  // after the others have created (and used) their communicator. Needing rank p-1 would hang.
  if (p >= 2) {
    Context context(check, "non-member stays out");
    const std::vector<int> without_last = iota_ranks(0, p - 1);
    if (me == p - 1) {
      int token = 0;
      MPI_Recv(&token, 1, MPI_INT, 0, 77, world, MPI_STATUS_IGNORE);
      check.equal(token, p - 1, "token from rank 0");
    } else {
      create_and_verify(check, world, reversed(without_last), 22, "all but the last rank");
      if (me == 0) {
        const int token = p - 1;
        MPI_Send(&token, 1, MPI_INT, p - 1, 77, world);
      }
    }
  }
}

void test_errors(Checker& check) {
  Context context(check, "errors");
  const MPI_Comm world = MPI_COMM_WORLD;
  const int p = size_of(world);
  const int me = rank_of(world);
  const Group all(world, iota_ranks(0, p));
  const Group first_only(world, {0});
  MPI_Comm out = MPI_COMM_WORLD;

  check.throws<groupcomm::NotAMember>(
      [&] { groupcomm::create_group(world, MPI_GROUP_EMPTY, 0, &out); },
      "of the parent is not a member of the group", "empty group");
  check.equal(out == MPI_COMM_NULL, true, "newcomm is MPI_COMM_NULL after an error");
  if (me != 0) {
    check.throws<groupcomm::NotAMember>(
        [&] { groupcomm::create_group(world, first_only.get(), 0, &out); },
        "rank " + std::to_string(me) + " of the parent is not a member", "group {0} on another rank");
  }
  check.throws<groupcomm::InvalidArgument>(
      [&] { groupcomm::create_group(MPI_COMM_NULL, all.get(), 0, &out); },
      "parent communicator is MPI_COMM_NULL", "null parent");
  check.throws<groupcomm::InvalidArgument>(
      [&] { groupcomm::create_group(world, MPI_GROUP_NULL, 0, &out); }, "MPI_GROUP_NULL",
      "null group");
  check.throws<groupcomm::InvalidArgument>(
      [&] { groupcomm::create_group(world, all.get(), -1, &out); }, "tag -1 is outside",
      "negative tag");
  check.throws<groupcomm::InvalidArgument>(
      [&] { groupcomm::create_group(world, all.get(), 0, nullptr); }, "newcomm is a null pointer",
      "null output");
  check.throws<groupcomm::InvalidArgument>([&] { groupcomm::create(world, MPI_GROUP_NULL, 0); },
                                           "MPI_GROUP_NULL", "create() with a null group");

  if (p >= 2) {
    // A group with processes outside the parent.
    check.throws<groupcomm::InvalidArgument>(
        [&] { groupcomm::create_group(MPI_COMM_SELF, all.get(), 0, &out); },
        "is not a process of the parent communicator", "group larger than the parent");
    check.equal(out == MPI_COMM_NULL, true, "newcomm is MPI_COMM_NULL after an error");

    // An intercommunicator parent: rank 0 against the rest.
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split(world, me == 0 ? 0 : 1, me, &local);
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Intercomm_create(local, 0, world, me == 0 ? 1 : 0, 99, &inter);
    check.throws<groupcomm::InvalidArgument>(
        [&] { groupcomm::create_group(inter, all.get(), 0, &out); }, "intercommunicator",
        "intercommunicator parent");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  // The errors left nothing pending: a creation over everyone still works.
  create_and_verify(check, world, iota_ranks(0, p), 30, "after the errors");
}

void test_unsupported(Checker& check) {
  Context context(check, "SMPI: documented skip");
  const MPI_Comm world = MPI_COMM_WORLD;
  const int p = size_of(world);
  const Group all(world, iota_ranks(0, p));
  MPI_Comm out = MPI_COMM_WORLD;
  check.throws<groupcomm::Unsupported>(
      [&] { groupcomm::create_group(world, all.get(), 0, &out); },
      "intercommunicators are not available under SimGrid SMPI", "create_group");
  check.equal(out == MPI_COMM_NULL, true, "newcomm is MPI_COMM_NULL after Unsupported");
  check.throws<groupcomm::Unsupported>([&] { groupcomm::create(world, all.get(), 0); },
                                       groupcomm::kUnsupportedMessage, "create");
  // Unsupported comes first, before argument checks, so callers can rely on one answer.
  check.throws<groupcomm::Unsupported>(
      [&] { groupcomm::create_group(MPI_COMM_NULL, MPI_GROUP_NULL, -1, &out); },
      groupcomm::kUnsupportedMessage, "create_group with bad arguments");
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "groupcomm_test", [](Checker& check) {
#if defined(JANUS_SMPI) && JANUS_SMPI
    const bool expected = false;
#else
    const bool expected = true;
#endif
    check.equal(groupcomm::available(), expected, "available() on this backend");
    if (groupcomm::available()) {
      test_creation(check);
      test_errors(check);
    } else {
      test_unsupported(check);
    }
  });
}
