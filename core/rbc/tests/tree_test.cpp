#include "core/rbc/src/tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using rbc::detail::BinomialTree;
using rbc::detail::LatencyTree;

// Walks a tree from the root: every member is reached exactly once, each through the parent it
// names, and children come in ascending order. Returns each member's level.
template <class Make>
std::vector<int> walk(int p, int root, Make make) {
  std::vector<int> reached(p, 0);
  std::vector<int> level(p, 0);
  std::vector<int> frontier = {0};
  reached[0] = 1;
  EXPECT_TRUE(make(root).is_root());
  EXPECT_EQ(make(root).parent(), -1);
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int v : frontier) {
      const auto t = make((v + root) % p);
      int previous = v;
      for (int c : t.children()) {
        EXPECT_GT(c, previous) << "p " << p << " node " << v;
        EXPECT_LT(c, p);
        previous = c;
        ++reached[c];
        level[c] = level[v] + 1;
        EXPECT_EQ(make((c + root) % p).parent(), v) << "p " << p << " node " << c;
        EXPECT_EQ(t.absolute(c), (c + root) % p);
        next.push_back(c);
      }
    }
    frontier.swap(next);
  }
  for (int v = 0; v < p; ++v) EXPECT_EQ(reached[v], 1) << "p " << p << " node " << v;
  return level;
}

TEST(BinomialTree, SpansEveryMemberOnceThroughItsParent) {
  for (int p = 1; p <= 70; ++p) {
    for (int root : {0, p / 2, p - 1}) {
      const auto level = walk(p, root, [&](int rank) { return BinomialTree(p, root, rank); });
      // A member's level is the number of its set bits.
      for (int v = 0; v < p; ++v) EXPECT_EQ(level[v], __builtin_popcount(static_cast<unsigned>(v)));
    }
  }
}

// Most members a root informs in t steps when a message sent at step s lets its receiver send
// from s + delay on.
long long reach(int t, int delay) {
  std::vector<long long> n;
  for (int s = 0; s <= t; ++s) n.push_back(s < delay ? 1 : n[s - 1] + n[s - delay]);
  return n[t];
}

// Every member is reached once, and the broadcast is as short as any can be under the tree's
// model: a node sends its i-th message (largest subtree first) at step ready + i, its receiver
// is ready delay steps later; the last member is ready at the first t with reach(t) >= p.
TEST(LatencyTree, SpansEveryMemberOnceInTheFewestSteps) {
  for (int delay = 1; delay <= 4; ++delay) {
    for (int p = 1; p <= 130; ++p) {
      for (int root : {0, p / 3, p - 1}) {
        walk(p, root, [&](int rank) { return LatencyTree(p, root, rank, delay); });
        std::vector<int> ready(p, 0);
        std::vector<int> order = {0};
        for (std::size_t k = 0; k < order.size(); ++k) {
          const int v = order[k];
          const LatencyTree t(p, root, (v + root) % p, delay);
          const auto& c = t.children();
          for (std::size_t i = 0; i < c.size(); ++i) {
            const int child = c[c.size() - 1 - i];
            ready[child] = ready[v] + static_cast<int>(i) + delay;
            order.push_back(child);
          }
        }
        int fewest = 0;
        while (reach(fewest, delay) < p) ++fewest;
        EXPECT_EQ(*std::max_element(ready.begin(), ready.end()), fewest) << "delay " << delay << " p " << p;
      }
    }
  }
}

// On 16 ranks at delay 3 the root sends to the blocks [10, 16), [6, 10), [4, 6), 3, 2, 1.
TEST(LatencyTree, SixteenRanksAtDelayThree) {
  const LatencyTree root(16, 0, 0, 3);
  const std::vector<int> expected = {1, 2, 3, 4, 6, 10};
  ASSERT_EQ(root.children().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(root.children()[i], expected[i]);
  EXPECT_EQ(LatencyTree(16, 0, 15, 3).parent(), 14);
  EXPECT_EQ(LatencyTree(16, 0, 13, 3).parent(), 10);
  EXPECT_EQ(LatencyTree(16, 5, 15, 3).parent(), 0);  // relative 10, whose parent is the root
}

// The largest int member count: no overflow, and a member far from the root finds its parent.
TEST(LatencyTree, LargestCommunicator) {
  const int p = 2147483647;
  EXPECT_GT(LatencyTree(p, 0, 0, 3).children().size(), 30u);
  const LatencyTree last(p, 1, 0, 3);  // relative p - 1
  EXPECT_GT(last.parent(), 0);
  EXPECT_EQ(last.absolute(p - 1), 0);
}

}  // namespace
