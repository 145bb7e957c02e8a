#pragma once

// Local (single-PE) sorting kernels, used by every distributed sort of the project.
//
//   localsort::sort(first, last, less)   // the one entry point the sorts call
//
// - Arithmetic keys (integers, float, double) under std::less / std::greater (typed or
//   transparent) go to an MSD radix sort (detail/radix.hpp): O(n) work, one n-sized buffer.
//   Floating point is ordered by its IEEE bits: -0.0 before +0.0 (std::less calls them
//   equivalent, so either order is sorted), and NaNs, which std::less does not order, at the
//   ends (negative-signed NaNs first, others last). JQuick rejects NaN under std::less before
//   sorting; with jquick::NanLastLess the comparison sort below runs.
// - Everything else goes to comparison_sort, a pattern-defeating quicksort that stays inside
//   the range and terminates even if `less` is not a strict weak order (detail/comparison.hpp).
// Both are deterministic and not stable. Ranges already in order (or strictly reversed) are
// recognised in one pass.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <type_traits>
#include <vector>

#include "localsort/detail/comparison.hpp"
#include "localsort/detail/radix.hpp"

namespace localsort {

// Below this size the comparison sort beats the radix sort's fixed costs.
constexpr std::ptrdiff_t kRadixThreshold = 512;

// Whether `sort` uses the radix sort for elements T under comparator Less: +1 ascending,
// -1 descending, 0 no.
template <class T, class Less>
constexpr int radix_direction() {
  if constexpr (!detail::radix_key_type<T>()) {
    return 0;
  } else if constexpr (std::is_same<Less, std::less<T>>::value ||
                       std::is_same<Less, std::less<>>::value) {
    return 1;
  } else if constexpr (std::is_same<Less, std::greater<T>>::value ||
                       std::is_same<Less, std::greater<>>::value) {
    return -1;
  } else {
    return 0;
  }
}

// Pattern-defeating quicksort for any comparator; memory-safe and terminating for any `less`.
template <class It, class Less>
void comparison_sort(It first, It last, Less less) {
  const std::ptrdiff_t n = last - first;
  if (n < 2) return;
  detail::pdq_loop(first, last, less, detail::floor_log2(n), true);
}

// Radix sort of arithmetic keys: ascending, or descending if `descending`.
template <class T>
void radix_sort(T* first, T* last, bool descending = false) {
  static_assert(detail::radix_key_type<T>(), "radix_sort needs integer, float or double keys");
  const std::size_t n = static_cast<std::size_t>(last - first);
  if (descending) {
    detail::radix_sort_keys<T, true>(first, n);
  } else {
    detail::radix_sort_keys<T, false>(first, n);
  }
}

namespace detail {

// One pass: true if sorted (nothing to do); reverses a strictly descending range in place.
template <class It, class Less>
bool presorted(It first, It last, Less& less) {
  if (last - first < 2) return true;
  if (!less(*(first + 1), *first)) {
    for (It i = first + 1; i < last; ++i) {
      if (less(*i, *(i - 1))) return false;
    }
    return true;
  }
  for (It i = first + 1; i < last; ++i) {
    if (!less(*i, *(i - 1))) return false;
  }
  std::reverse(first, last);
  return true;
}

}  // namespace detail

// Sorts [first, last) by `less` (a strict weak order). Random-access iterators over contiguous
// storage get the radix path where radix_direction says so.
template <class It, class Less>
void sort(It first, It last, Less less) {
  using T = typename std::iterator_traits<It>::value_type;
  const std::ptrdiff_t n = last - first;
  if (n < 2) return;
  constexpr int direction = radix_direction<T, Less>();
  if constexpr (direction != 0 && (std::is_same<It, T*>::value ||
                                    std::is_same<It, typename std::vector<T>::iterator>::value)) {
    if (n >= kRadixThreshold) {
      if (detail::presorted(first, last, less)) return;
      T* begin = &*first;
      radix_sort(begin, begin + n, direction < 0);
      return;
    }
  }
  comparison_sort(first, last, less);
}

template <class It>
void sort(It first, It last) {
  sort(first, last, std::less<typename std::iterator_traits<It>::value_type>());
}

}  // namespace localsort
