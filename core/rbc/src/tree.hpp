#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>

namespace rbc::detail {

// A node's children, held inline: every collective builds a tree, and a heap list would cost
// an allocation per call.
template <std::size_t N>
class TreeChildren {
 public:
  static constexpr std::size_t kCapacity = N;
  void push_back(int v) { v_[n_++] = v; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int operator[](std::size_t i) const { return v_[i]; }
  const int* begin() const { return v_.data(); }
  const int* end() const { return v_.data() + n_; }
  std::reverse_iterator<const int*> rbegin() const { return std::reverse_iterator<const int*>(end()); }
  std::reverse_iterator<const int*> rend() const { return std::reverse_iterator<const int*>(begin()); }

 private:
  std::array<int, N> v_;  // the first n_ are set; no zeroing of the rest on every call
  std::size_t n_ = 0;
};

// Binomial tree over relative ranks 0..p-1 (relative = (rank - root) mod p). Node v's parent is
// v with its lowest set bit cleared; its children are v + 1, v + 2, v + 4, ... below that bit.
// Every subtree is a contiguous block of relative ranks, and children come in rank order, so
// combining "own, then children in order" respects rank order (non-commutative operations).
class BinomialTree {
 public:
  using Children = TreeChildren<31>;  // at most 31 for an int p

  BinomialTree(int p, int root, int rank) : p_(p), root_(root), v_((rank - root + p) % p) {
    for (int step = 1; step < p_ && (v_ == 0 || step < lowbit(v_)); step <<= 1) {
      if (v_ + step < p_) children_.push_back(v_ + step);
    }
  }

  int relative() const { return v_; }
  bool is_root() const { return v_ == 0; }
  // Relative rank of the parent; -1 at the root.
  int parent() const { return v_ == 0 ? -1 : v_ & (v_ - 1); }
  // Children (relative ranks) in ascending order.
  const Children& children() const { return children_; }
  // One past the last relative rank of node c's subtree.
  int subtree_end(int c) const { return c == 0 ? p_ : (p_ - c < lowbit(c) ? p_ : c + lowbit(c)); }
  int subtree_size() const { return subtree_end(v_) - v_; }
  // Communicator rank of relative rank r.
  int absolute(int r) const { return (r + root_) % p_; }

 private:
  static int lowbit(int v) { return v & -v; }

  int p_;
  int root_;
  int v_;
  Children children_;
};

// A tree whose broadcast finishes soonest when a message reaches its receiver `delay` sends
// after it is sent (a send's own cost is one unit, a message's latency and receive delay - 1
// more): node v informed at step t sends at t, t + 1, ..., and what it sends at step t reaches
// a node that sends from t + delay on. With N(T) the most nodes a root informs in T steps
// (N(T) = 1 below `delay`, N(T - 1) + N(T - delay) from there), a node owning a block of n
// ranks in T = min{T : N(T) >= n} steps gives the block's last min(N(T - delay), n - 1) ranks
// to its first child and goes on with the rest: every subtree is a contiguous block, the first
// child's the largest. Each node computes its place from the root down; T only falls on the way,
// so that takes O(T + children) steps. `delay` is 1 to 4 (kSteps bounds T for an int p there).
class LatencyTree {
 public:
  using Children = TreeChildren<96>;

  LatencyTree(int p, int root, int rank, int delay) : p_(p), root_(root), delay_(delay) {
    const int v = static_cast<int>((static_cast<long long>(rank) - root + p) % p);
    int owner = 0;
    int n = p;
    int t = 0;
    while (reach(t) < n) ++t;
    while (true) {
      if (owner == v) {
        int remaining = n;
        int high[Children::kCapacity];
        std::size_t count = 0;
        while (remaining > 1) {
          const int b = first_child(remaining, t);
          high[count++] = owner + (remaining - b);
          remaining -= b;
        }
        while (count > 0) children_.push_back(high[--count]);
        return;
      }
      // Follow v down: it lies in one of the owner's children's blocks.
      int remaining = n;
      while (true) {
        const int b = first_child(remaining, t);
        const int start = owner + (remaining - b);
        if (v >= start) {
          parent_ = owner;
          owner = start;
          n = b;
          break;
        }
        remaining -= b;
      }
    }
  }

  bool is_root() const { return parent_ < 0; }
  int parent() const { return parent_; }
  // Children (relative ranks) in ascending order: the last one's block is the largest.
  const Children& children() const { return children_; }
  int absolute(int r) const { return static_cast<int>((static_cast<long long>(r) + root_) % p_); }

 private:
  // The block size of the first child of a node owning n >= 2 ranks; `t`, at least
  // min{T : N(T) >= n} on entry, is lowered to it.
  int first_child(int n, int& t) {
    while (t > 0 && reach(t - 1) >= n) --t;
    return static_cast<int>(std::min<long long>(reach(t - delay_), n - 1));
  }
  // N(t), memoized (it outgrows any int p within kSteps steps for delay <= 4).
  long long reach(int t) {
    if (t < 0) return 0;
    while (known_ <= t) {
      reach_[known_] = known_ < delay_ ? 1 : reach_[known_ - 1] + reach_[known_ - delay_];
      ++known_;
    }
    return reach_[t];
  }

  static constexpr int kSteps = 96;
  int p_;
  int root_;
  int delay_;
  int parent_ = -1;
  Children children_;
  std::array<long long, kSteps> reach_;  // the first known_ are set
  int known_ = 0;
};

}  // namespace rbc::detail
