#include "support/layout.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace rbc_test {

namespace {

Step split(int first, int last, int stride = 1) { return {Step::kSplit, first, last, stride}; }
Step janus_left(int left_last, int right_first) {
  return {Step::kJanusLeft, left_last, right_first};
}
Step janus_right(int left_last, int right_first) {
  return {Step::kJanusRight, left_last, right_first};
}

std::string describe(const Step& s) {
  const std::string a = std::to_string(s.a), b = std::to_string(s.b);
  switch (s.kind) {
    case Step::kSplit:
      return "split(" + a + ".." + b + (s.stride == 1 ? "" : " stride " + std::to_string(s.stride)) + ")";
    case Step::kJanusLeft:
      return "janus_split(" + a + "," + b + ").left";
    case Step::kJanusRight:
      return "janus_split(" + a + "," + b + ").right";
  }
  return "?";
}

Layout make(std::vector<Step> steps, bool reversed = false) {
  Layout layout;
  layout.name = reversed ? "reversed world" : "world";
  for (const Step& s : steps) layout.name += " > " + describe(s);
  layout.steps = std::move(steps);
  layout.reversed_parent = reversed;
  return layout;
}

rbc::Range apply(const rbc::Range& range, const Step& s) {
  switch (s.kind) {
    case Step::kSplit:
      return range.sub(s.a, s.b, s.stride);
    case Step::kJanusLeft:
      return range.sub(0, s.a);
    case Step::kJanusRight:
      return range.sub(s.b, range.size() - 1);
  }
  return range;
}

}  // namespace

unsigned long long mix(unsigned long long a, unsigned long long b, unsigned long long c,
                       unsigned long long d) {
  unsigned long long x = 0x9E3779B97F4A7C15ULL;
  for (unsigned long long v : {a, b, c, d}) {
    x ^= v + 0x9E3779B97F4A7C15ULL + (x << 6) + (x >> 2);
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
  }
  return x;
}

std::vector<int> members_of(const Layout& layout, int p) {
  rbc::Range range(0, p - 1);
  for (const Step& s : layout.steps) range = apply(range, s);
  std::vector<int> world;
  for (int i = 0; i < range.size(); ++i) {
    const int parent = range.at(i);
    world.push_back(layout.reversed_parent ? p - 1 - parent : parent);
  }
  return world;
}

std::vector<Layout> standard_layouts(int p, bool sample) {
  std::vector<Layout> all;
  const int m = p / 2;
  all.push_back(make({split(0, p - 1)}));
  if (p >= 3) all.push_back(make({split(1, p - 2)}));
  if (p >= 2) all.push_back(make({split(1, p - 1, 3)}));
  if (p >= 3) all.push_back(make({split(1, p - 1), split(1, p - 2, 2)}));
  if (p >= 2) all.push_back(make({janus_right(m, m)}));
  all.push_back(make({split(m, m)}));
  if (p >= 2) all.push_back(make({split(1, p - 1, 2)}, true));
  if (sample) return all;
  if (p >= 2) all.push_back(make({split(1, p - 1)}));
  if (p >= 2) all.push_back(make({split(0, p - 2)}));
  if (p >= 2) all.push_back(make({split(0, p - 1, 2)}));
  if (p >= 2) all.push_back(make({split(p - 1, p - 1)}));
  if (p >= 2) all.push_back(make({split(0, p - 1, p)}));  // size 1 through a huge stride
  if (p >= 3) all.push_back(make({split(0, p - 1, 2), split(1, (p + 1) / 2 - 1, 2)}));
  if (p >= 2) all.push_back(make({janus_left(m, m)}));
  if (p >= 4) all.push_back(make({janus_right(2 * p / 3, p / 3)}));
  if (p >= 5) all.push_back(make({janus_left(2 * p / 3, p / 3), split(1, 2 * p / 3, 2)}));
  all.push_back(make({split(0, p - 1)}, true));
  return all;
}

Layout first_handle_layout() {
  Layout layout;
  layout.name = "first handle on a duplicate of world";
  layout.first_handle = true;
  return layout;
}

std::vector<int> sample_ranks(int size, int limit, unsigned salt) {
  std::vector<int> ranks;
  if (size <= limit) {
    for (int r = 0; r < size; ++r) ranks.push_back(r);
    return ranks;
  }
  auto add = [&ranks](int r) {
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) ranks.push_back(r);
  };
  add(0);
  add(size - 1);
  add(size / 2);
  add(1);
  for (unsigned i = 0; static_cast<int>(ranks.size()) < limit; ++i)
    add(static_cast<int>(mix(salt, i) % static_cast<unsigned>(size)));
  ranks.resize(std::min<std::size_t>(ranks.size(), limit));
  return ranks;
}

LayoutComms::LayoutComms(const Layout& layout, janus::testing::Checker& check)
    : name_(layout.name) {
  int p = 0, w = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &w);
  world_ranks_ = members_of(layout, p);
  const auto it = std::find(world_ranks_.begin(), world_ranks_.end(), w);
  if (it != world_ranks_.end()) rank_ = static_cast<int>(it - world_ranks_.begin());
  MPI_Comm_split(MPI_COMM_WORLD, member() ? 0 : MPI_UNDEFINED, rank_, &reference_);
  if (layout.reversed_parent) MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - w, &reversed_);
  if (layout.first_handle) MPI_Comm_dup(MPI_COMM_WORLD, &duplicate_);

  janus::testing::Context context(check, "creating ", name_);
  int ok = 1;
  try {
    ok = build(layout, check) ? 1 : 0;
  } catch (const std::exception& e) {
    check.fail("unexpected exception: ", e.what());
    ok = 0;
  }
  // A layout that failed anywhere is skipped everywhere, so no member waits for another that
  // gave up (the failure is already recorded).
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    rank_ = -1;
    comm_ = rbc::RangeComm();
    if (reference_ != MPI_COMM_NULL) MPI_Comm_free(&reference_);
  }
}

bool LayoutComms::build(const Layout& layout, janus::testing::Checker& check) {
  int p = 0, w = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &w);
  const int my_parent_rank = layout.reversed_parent ? p - 1 - w : w;
  rbc::RangeComm current = rbc::RangeComm::from_mpi(
      layout.first_handle ? duplicate_ : layout.reversed_parent ? reversed_ : MPI_COMM_WORLD);
  rbc::Range range(0, p - 1);
  for (const Step& s : layout.steps) {
    const rbc::Range next = apply(range, s);
    rbc::RangeComm made;
    if (s.kind == Step::kSplit) {
      made = current.split(s.a, s.b, s.stride);
    } else {
      auto halves = current.janus_split(s.a, s.b);
      made = s.kind == Step::kJanusLeft ? halves.first : halves.second;
    }
    const int expected_rank = next.rank_of(my_parent_rank);
    if (!check.equal(made.is_member(), expected_rank >= 0, describe(s), ": is_member()"))
      return false;
    if (expected_rank < 0) return true;  // a non-member stops here, as intended
    bool ok = check.equal(made.rank(), expected_rank, describe(s), ": rank()");
    ok &= check.equal(made.size(), next.size(), describe(s), ": size()");
    ok &= check.check(made.range() == next, describe(s), ": range() is ", made.first(), "..",
                      made.last(), " stride ", made.stride(), ", expected ", next.first(), "..",
                      next.last(), " stride ", next.stride());
    for (int r : sample_ranks(next.size(), 16, 7))
      ok &= check.equal(made.mpi_rank(r), next.at(r), describe(s), ": mpi_rank(", r, ")");
    ok &= check.equal(made.rank_of_mpi(my_parent_rank), expected_rank, describe(s),
                      ": rank_of_mpi(own parent rank)");
    if (!ok) return false;
    current = made;
    range = next;
  }
  if (member()) comm_ = current;
  return true;
}

LayoutComms::~LayoutComms() {
  if (reference_ != MPI_COMM_NULL) MPI_Comm_free(&reference_);
  if (reversed_ != MPI_COMM_NULL) MPI_Comm_free(&reversed_);
  if (duplicate_ != MPI_COMM_NULL) MPI_Comm_free(&duplicate_);
}

}  // namespace rbc_test
