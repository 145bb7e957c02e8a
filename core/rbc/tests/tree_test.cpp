#include "core/rbc/src/tree.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using rbc::detail::BinomialTree;
using rbc::detail::KnomialTree;

// Every member is reached exactly once from the root, each through the parent it names.
TEST(KnomialTree, SpansEveryMemberOnceThroughItsParent) {
  for (int radix = 2; radix <= 5; ++radix) {
    for (int p = 1; p <= 70; ++p) {
      for (int root : {0, p / 2, p - 1}) {
        std::vector<int> reached(p, 0);
        std::vector<int> level(p, 0);
        std::vector<int> frontier = {0};
        reached[0] = 1;
        int depth = 0;
        while (!frontier.empty()) {
          std::vector<int> next;
          for (int v : frontier) {
            const KnomialTree t(p, root, (v + root) % p, radix);
            for (std::size_t i = 0; i < t.children().size(); ++i) {
              const int c = t.children()[i];
              ASSERT_GT(c, v);
              ASSERT_LT(c, p);
              ++reached[c];
              level[c] = level[v] + 1;
              depth = level[c] > depth ? level[c] : depth;
              EXPECT_EQ(KnomialTree(p, root, (c + root) % p, radix).parent(), v)
                  << "radix " << radix << " p " << p << " node " << c;
              next.push_back(c);
            }
          }
          frontier.swap(next);
        }
        for (int v = 0; v < p; ++v) EXPECT_EQ(reached[v], 1) << "radix " << radix << " p " << p << " node " << v;
        // A member's level is the number of its non-zero base-radix digits: at most
        // ceil(log_radix p), reached at p - 1 = radix^m - 1.
        int levels = 0;
        for (int v = 1; v < p; ++v) {
          int digits = 0;
          for (int x = v; x > 0; x /= radix) digits += x % radix != 0;
          levels = digits > levels ? digits : levels;
        }
        EXPECT_EQ(depth, levels) << "radix " << radix << " p " << p;
        EXPECT_EQ(KnomialTree(p, root, root, radix).parent(), -1);
        EXPECT_TRUE(KnomialTree(p, root, root, radix).is_root());
      }
    }
  }
}

// Radix 2 is the binomial tree: the same parent and children, in the same order.
TEST(KnomialTree, RadixTwoIsTheBinomialTree) {
  for (int p = 1; p <= 70; ++p) {
    for (int rank = 0; rank < p; ++rank) {
      const int root = p / 3;
      const KnomialTree k(p, root, rank, 2);
      const BinomialTree b(p, root, rank);
      EXPECT_EQ(k.parent(), b.parent());
      ASSERT_EQ(k.children().size(), b.children().size());
      for (std::size_t i = 0; i < b.children().size(); ++i) EXPECT_EQ(k.children()[i], b.children()[i]);
      EXPECT_EQ(k.absolute(k.parent() < 0 ? 0 : k.parent()), b.absolute(b.parent() < 0 ? 0 : b.parent()));
    }
  }
}

// Four ranks a level on 16: the root sends to 4, 8 and 12, then 1, 2 and 3 (largest subtrees
// first when walked backwards); 6's parent is 4.
TEST(KnomialTree, SixteenRanksAtRadixFour) {
  const KnomialTree root(16, 0, 0, 4);
  const std::vector<int> expected = {1, 2, 3, 4, 8, 12};
  ASSERT_EQ(root.children().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(root.children()[i], expected[i]);
  EXPECT_EQ(*root.children().rbegin(), 12);
  EXPECT_EQ(KnomialTree(16, 0, 6, 4).parent(), 4);
  EXPECT_EQ(KnomialTree(16, 0, 12, 4).parent(), 0);
  EXPECT_EQ(KnomialTree(16, 5, 11, 4).parent(), 4);  // relative 6, whose parent is relative 4: rank 9
  EXPECT_EQ(KnomialTree(16, 5, 11, 4).absolute(4), 9);
}

}  // namespace
