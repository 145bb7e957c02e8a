#pragma once

// Merge of two sorted runs into a separate output. A merge step is a chain of dependent
// loads, a compare and an index update, so one merge loop is bound by that latency, not by
// bandwidth. This one splits the output at its middle (a co-rank found by binary search) and
// merges both halves from both ends at once: four independent chains per loop iteration.
// Branch-free steps: on keys that a branch predictor has not memorised, branches mispredict
// about every other element. Measured on 2^15 + 2^15 uniform doubles, a different input each
// repetition (this machine, AMD EPYC): 1.2 ns per element, against 3.9 for a one-chain
// branch-free merge and 4.8 for std::merge.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace localsort {

namespace detail {

// A two-ended merge in progress: a[af, ab) and b[bf, bb) are untaken; out[0, af + bf) and
// out[ab + bb, end) are written.
template <class T>
struct TwoEnded {
  const T* a;
  const T* b;
  T* out;
  std::size_t af, ab, bf, bb;

  // A front step leaves each run an untaken element for the back step after it.
  bool roomy() const { return ab - af >= 2 && bb - bf >= 2; }

  template <class Less>
  void front(Less& less) {
    const bool take_b = less(b[bf], a[af]);
    out[af + bf] = *(take_b ? b + bf : a + af);
    bf += take_b ? 1 : 0;
    af += take_b ? 0 : 1;
  }

  template <class Less>
  void back(Less& less) {
    const bool take_a = less(b[bb - 1], a[ab - 1]);
    out[ab + bb - 1] = *(take_a ? a + ab - 1 : b + bb - 1);
    ab -= take_a ? 1 : 0;
    bb -= take_a ? 0 : 1;
  }

  template <class Less>
  void finish(Less& less) {
    while (af < ab && bf < bb) front(less);
    if (af < ab) std::memcpy(static_cast<void*>(out + af + bf), a + af, (ab - af) * sizeof(T));
    if (bf < bb) std::memcpy(static_cast<void*>(out + af + bf), b + bf, (bb - bf) * sizeof(T));
  }
};

}  // namespace detail

// Writes the stable merge of a[0, na) and b[0, nb) (ties: a first) to out[0, na + nb), which
// must overlap neither run. Every step takes one element that no other step has taken, so
// whatever `less` answers, out receives a permutation of the two runs and no access leaves
// them.
template <class T, class Less>
void merge(const T* a, std::size_t na, const T* b, std::size_t nb, T* out, Less less) {
  static_assert(std::is_trivially_copyable<T>::value, "localsort::merge copies elements bytewise");
  // The first half of the output holds a[0, i) and b[0, k - i): the smallest i at which
  // b[k - i - 1] comes before a[i].
  const std::size_t k = (na + nb) / 2;
  std::size_t lo = k > nb ? k - nb : 0, hi = std::min(k, na);
  while (lo < hi) {
    const std::size_t i = lo + (hi - lo) / 2;
    const std::size_t j = k - i;
    if (j > 0 && i < na && !less(b[j - 1], a[i])) {
      lo = i + 1;
    } else {
      hi = i;
    }
  }
  const std::size_t i = lo, j = k - lo;
  detail::TwoEnded<T> low{a, b, out, 0, i, 0, j};
  detail::TwoEnded<T> high{a + i, b + j, out + k, 0, na - i, 0, nb - j};
  while (low.roomy() && high.roomy()) {
    low.front(less);
    high.front(less);
    low.back(less);
    high.back(less);
  }
  while (low.roomy()) {
    low.front(less);
    low.back(less);
  }
  while (high.roomy()) {
    high.front(less);
    high.back(less);
  }
  low.finish(less);
  high.finish(less);
}

}  // namespace localsort
