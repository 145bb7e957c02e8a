#pragma once

namespace rbc {

// The ranks first, first + stride, ..., last of some parent numbering. Pure arithmetic, no MPI:
// it is the whole of what a communicator needs to know about its members.
class Range {
 public:
  // Throws rbc::Error unless 0 <= first <= last and stride >= 1. `last` is rounded down to the
  // last member (first + k * stride), so Range(0, 9, 4) holds 0, 4, 8.
  Range(int first, int last, int stride = 1) : first_(first), stride_(stride), size_(0) {
    if (stride < 1 || first < 0 || last < first) invalid(first, last, stride);
    size_ = (last - first) / stride + 1;
  }

  int first() const { return first_; }
  int last() const { return first_ + (size_ - 1) * stride_; }
  int stride() const { return stride_; }
  int size() const { return size_; }

  bool contains(int parent_rank) const;
  // Position of parent_rank in the range, or -1 if it is not a member.
  int rank_of(int parent_rank) const;
  // Parent rank of member `rank`; throws rbc::Error if rank is not in [0, size).
  int at(int rank) const {
    if (rank < 0 || rank >= size_) outside(rank, size_);
    return first_ + rank * stride_;
  }

  // The sub-range given in this range's own ranks, expressed in the parent's ranks. Throws
  // rbc::Error if it does not fit.
  Range sub(int first, int last, int stride = 1) const;

  friend bool operator==(const Range& a, const Range& b) {
    return a.first_ == b.first_ && a.stride_ == b.stride_ && a.size_ == b.size_;
  }
  friend bool operator!=(const Range& a, const Range& b) { return !(a == b); }

 private:
  // Inline above (every message translates a rank); the throws stay out of line.
  [[noreturn]] static void invalid(int first, int last, int stride);
  [[noreturn]] static void outside(int rank, int size);

  int first_;
  int stride_;
  int size_;
};

}  // namespace rbc
