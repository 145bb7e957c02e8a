#pragma once

#include <array>
#include <cstddef>
#include <iterator>

namespace rbc::detail {

// A node's children, held inline: every collective builds a tree, and a heap list would cost
// an allocation per call.
template <std::size_t N>
class TreeChildren {
 public:
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

// k-nomial tree over relative ranks 0..p-1 (radix k >= 2; k = 2 is the binomial tree above).
// Node v's parent is v with its lowest non-zero base-k digit cleared; its children are
// v + j k^i (j = 1..k-1) for every digit i below that one. Node v + j k^i's subtree is the
// contiguous block [v + j k^i, v + (j + 1) k^i). A larger radix makes the tree shallower (two
// levels instead of four on 16 ranks at k = 4) at k - 1 sends per level and node.
class KnomialTree {
 public:
  using Children = TreeChildren<64>;  // (k - 1) per digit: 31 at k = 2, 48 at k = 4; k <= 6 fits

  KnomialTree(int p, int root, int rank, int radix) : p_(p), root_(root), v_((rank - root + p) % p) {
    long long digit = 1;
    while (digit < p_ && (v_ == 0 || v_ % (digit * radix) == 0)) {
      for (int j = 1; j < radix && v_ + j * digit < p_; ++j) children_.push_back(static_cast<int>(v_ + j * digit));
      digit *= radix;
    }
    parent_ = v_ == 0 ? -1 : static_cast<int>(v_ - v_ % (digit * radix));
  }

  bool is_root() const { return v_ == 0; }
  // Relative rank of the parent; -1 at the root.
  int parent() const { return parent_; }
  // Children (relative ranks) by digit, lowest first; within a digit in ascending order.
  const Children& children() const { return children_; }
  int absolute(int r) const { return (r + root_) % p_; }

 private:
  int p_;
  int root_;
  int v_;
  int parent_ = -1;
  Children children_;
};

}  // namespace rbc::detail
