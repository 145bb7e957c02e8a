#pragma once

#include <algorithm>
#include <cstdint>

namespace jquick::detail {

// The balanced target layout of n elements on p PEs: PE i owns the global indices
// [start(i), start(i) + cap(i)) with cap(i) = floor(n/p) + [i < n mod p]. Indices are shifted
// by `base` (Config::index_base). Every PE knows it after the first scan, so the members of a
// group are the owners of its index interval and need not be communicated.
class Layout {
 public:
  Layout(std::int64_t n, int p, std::int64_t base)
      : n_(n), base_(base), p_(p), q_(n / p), r_(n % p) {}

  std::int64_t n() const { return n_; }
  std::int64_t base() const { return base_; }
  int p() const { return p_; }

  std::int64_t cap(int pe) const { return q_ + (pe < r_ ? 1 : 0); }
  std::int64_t start(int pe) const { return base_ + pe * q_ + std::min<std::int64_t>(pe, r_); }
  std::int64_t end(int pe) const { return start(pe) + cap(pe); }

  // The PE owning global index `index` (base <= index < base + n).
  int owner(std::int64_t index) const {
    const std::int64_t x = index - base_;
    const std::int64_t big = r_ * (q_ + 1);
    if (x < big) return static_cast<int>(x / (q_ + 1));
    return static_cast<int>(r_ + (x - big) / q_);
  }

 private:
  std::int64_t n_;
  std::int64_t base_;
  int p_;
  std::int64_t q_;
  std::int64_t r_;
};

}  // namespace jquick::detail
