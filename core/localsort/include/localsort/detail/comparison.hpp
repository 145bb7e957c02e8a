#pragma once

// A pattern-defeating quicksort (after Peters' pdqsort: median-of-3 / ninther pivots, a
// partial insertion sort when a partition moved nothing, an equal-keys partition when the
// pivot equals the element before the range, shuffles after unbalanced partitions and a
// heapsort fallback), written so that a comparator that is not a strict weak order cannot make
// it read or write outside [first, last) or run forever: every scan checks its bound (no
// sentinel is trusted), every step shrinks the range, and the number of unbalanced partitions
// is capped. The output is then some permutation of the input, never a loss or duplication.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>

namespace localsort::detail {

constexpr std::ptrdiff_t kInsertionThreshold = 24;
constexpr std::ptrdiff_t kNintherThreshold = 128;
constexpr std::ptrdiff_t kPartialInsertionLimit = 8;

template <class It, class Less>
void insertion_sort(It first, It last, Less& less) {
  if (last - first < 2) return;
  for (It i = first + 1; i < last; ++i) {
    if (!less(*i, *(i - 1))) continue;
    auto value = std::move(*i);
    It j = i;
    do {
      *j = std::move(*(j - 1));
      --j;
    } while (j > first && less(value, *(j - 1)));
    *j = std::move(value);
  }
}

// Insertion sort that gives up (returning false) after moving more than a few elements; the
// range is then partly sorted, still a permutation.
template <class It, class Less>
bool partial_insertion_sort(It first, It last, Less& less) {
  if (last - first < 2) return true;
  std::ptrdiff_t moved = 0;
  for (It i = first + 1; i < last; ++i) {
    if (!less(*i, *(i - 1))) continue;
    auto value = std::move(*i);
    It j = i;
    do {
      *j = std::move(*(j - 1));
      --j;
    } while (j > first && less(value, *(j - 1)));
    *j = std::move(value);
    moved += i - j;
    if (moved > kPartialInsertionLimit) return false;
  }
  return true;
}

template <class It, class Less>
void sort2(It a, It b, Less& less) {
  if (less(*b, *a)) std::iter_swap(a, b);
}

template <class It, class Less>
void sort3(It a, It b, It c, Less& less) {
  sort2(a, b, less);
  sort2(b, c, less);
  sort2(a, b, less);
}

// Partitions [first, last) around the pivot *first: returns the pivot's final position; the
// elements before it are less than the pivot, those after it are not. `moved_nothing` tells
// whether the range was already partitioned.
template <class It, class Less>
It partition_right(It first, It last, Less& less, bool& moved_nothing) {
  auto pivot = std::move(*first);
  It i = first + 1;
  It j = last;
  while (i < j && less(*i, pivot)) ++i;
  while (i < j && !less(*(j - 1), pivot)) --j;
  moved_nothing = i >= j;
  while (i < j) {  // *i is not less than the pivot, *(j - 1) is
    --j;
    std::iter_swap(i, j);
    ++i;
    while (i < j && less(*i, pivot)) ++i;
    while (i < j && !less(*(j - 1), pivot)) --j;
  }
  It position = i - 1;
  *first = std::move(*position);
  *position = std::move(pivot);
  return position;
}

// Moves the elements not greater than the pivot *first to the left; used when the pivot
// equals the element before the range, so that all of them equal the pivot and are done.
template <class It, class Less>
It partition_left(It first, It last, Less& less) {
  auto pivot = std::move(*first);
  It i = first + 1;
  It j = last;
  while (i < j && !less(pivot, *i)) ++i;
  while (i < j && less(pivot, *(j - 1))) --j;
  while (i < j) {
    --j;
    std::iter_swap(i, j);
    ++i;
    while (i < j && !less(pivot, *i)) ++i;
    while (i < j && less(pivot, *(j - 1))) --j;
  }
  It position = i - 1;
  *first = std::move(*position);
  *position = std::move(pivot);
  return position;
}

template <class It, class Less>
void heap_sort(It first, It last, Less& less) {
  std::make_heap(first, last, less);
  std::sort_heap(first, last, less);
}

template <class It, class Less>
void pdq_loop(It first, It last, Less& less, int bad_allowed, bool leftmost) {
  while (true) {
    const std::ptrdiff_t size = last - first;
    if (size < kInsertionThreshold) {
      insertion_sort(first, last, less);
      return;
    }
    const std::ptrdiff_t half = size / 2;
    if (size > kNintherThreshold) {
      sort3(first, first + half, last - 1, less);
      sort3(first + 1, first + (half - 1), last - 2, less);
      sort3(first + 2, first + (half + 1), last - 3, less);
      sort3(first + (half - 1), first + half, first + (half + 1), less);
      std::iter_swap(first, first + half);
    } else {
      sort3(first + half, first, last - 1, less);
    }

    // The element before the range is not greater than any element in it; if the pivot is not
    // greater than it either, the pivot is the range's minimum: take its copies off the left.
    if (!leftmost && !less(*(first - 1), *first)) {
      first = partition_left(first, last, less) + 1;
      continue;
    }

    bool moved_nothing = false;
    It pivot = partition_right(first, last, less, moved_nothing);
    const std::ptrdiff_t left = pivot - first;
    const std::ptrdiff_t right = last - (pivot + 1);
    const bool unbalanced = left < size / 8 || right < size / 8;
    if (unbalanced) {
      if (--bad_allowed <= 0) {
        heap_sort(first, last, less);
        return;
      }
      // Break patterns that made the pivot choice fail.
      if (left >= kInsertionThreshold) {
        std::iter_swap(first, first + left / 4);
        std::iter_swap(pivot - 1, pivot - left / 4);
        if (left > kNintherThreshold) {
          std::iter_swap(first + 1, first + (left / 4 + 1));
          std::iter_swap(first + 2, first + (left / 4 + 2));
          std::iter_swap(pivot - 2, pivot - (left / 4 + 1));
          std::iter_swap(pivot - 3, pivot - (left / 4 + 2));
        }
      }
      if (right >= kInsertionThreshold) {
        std::iter_swap(pivot + 1, pivot + (1 + right / 4));
        std::iter_swap(last - 1, last - right / 4);
        if (right > kNintherThreshold) {
          std::iter_swap(pivot + 2, pivot + (2 + right / 4));
          std::iter_swap(pivot + 3, pivot + (3 + right / 4));
          std::iter_swap(last - 2, last - (1 + right / 4));
          std::iter_swap(last - 3, last - (2 + right / 4));
        }
      }
    } else if (moved_nothing && partial_insertion_sort(first, pivot, less) &&
               partial_insertion_sort(pivot + 1, last, less)) {
      return;
    }
    pdq_loop(first, pivot, less, bad_allowed, leftmost);
    first = pivot + 1;
    leftmost = false;
  }
}

inline int floor_log2(std::ptrdiff_t n) {
  int log = 0;
  while (n > 1) {
    n >>= 1;
    ++log;
  }
  return log;
}

}  // namespace localsort::detail
