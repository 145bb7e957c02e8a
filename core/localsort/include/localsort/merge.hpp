#pragma once

// Merges of two sorted runs that may write over one of their inputs, so that a base case can
// merge a received run into the data it already holds without another copy. Ties go to `a`
// (the run that comes first in the merged order). Every loop is bounded by the runs' lengths,
// whatever the comparator answers.

#include <cstddef>

namespace localsort {

// Writes the merge of a[0, na) and b[0, nb) to out[0, na + nb). `out` may equal `b` - na
// (b is the tail of the output area) or be disjoint from both runs.
template <class T, class Less>
void merge_forward(const T* a, std::size_t na, const T* b, std::size_t nb, T* out, Less less) {
  std::size_t i = 0, j = 0, k = 0;
  // Branch-free step (a conditional move): on random keys the branch would mispredict half
  // the time.
  while (i < na && j < nb) {
    const bool take_b = less(b[j], a[i]);
    out[k++] = take_b ? b[j] : a[i];
    j += take_b ? 1 : 0;
    i += take_b ? 0 : 1;
  }
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

// Writes the merge of a[0, na) and b[0, nb) to out[0, na + nb), filling from the back. `out`
// may equal `a` (a is the head of the output area) or be disjoint from both runs.
template <class T, class Less>
void merge_backward(const T* a, std::size_t na, const T* b, std::size_t nb, T* out, Less less) {
  std::size_t i = na, j = nb, k = na + nb;
  while (i > 0 && j > 0) {
    const bool take_a = less(b[j - 1], a[i - 1]);
    out[--k] = take_a ? a[i - 1] : b[j - 1];
    i -= take_a ? 1 : 0;
    j -= take_a ? 0 : 1;
  }
  while (j > 0) out[--k] = b[--j];
  while (i > 0) out[--k] = a[--i];
}

}  // namespace localsort
