#pragma once

#include <array>
#include <cstddef>
#include <iterator>

namespace rbc::detail {

// Binomial tree over relative ranks 0..p-1 (relative = (rank - root) mod p). Node v's parent is
// v with its lowest set bit cleared; its children are v + 1, v + 2, v + 4, ... below that bit.
// Every subtree is a contiguous block of relative ranks, and children come in rank order, so
// combining "own, then children in order" respects rank order (non-commutative operations).
class BinomialTree {
 public:
  // A node's children, held inline (at most 31 for an int p): every collective builds a tree,
  // and a heap list would cost an allocation per call.
  class Children {
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
    std::array<int, 31> v_;  // the first n_ are set; no zeroing of the rest on every call
    std::size_t n_ = 0;
  };

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

}  // namespace rbc::detail
