#pragma once

// Co-ranking (Siebert and Traeff, EuroMPI 2012): for an output position k of the stable merge
// C = stable_merge(A, B) of sorted A (m elements) and B (n elements), the co-ranks are the split
// j + l = k such that merging the prefixes A[0, j) and B[0, l) gives exactly C[0, k):
//
//   (j == 0 or l == n or not less(B[l], A[j-1]))     A[j-1] <= B[l]
//   (l == 0 or j == m or less(B[l-1], A[j]))          B[l-1] <  A[j]
//
// The search is a binary search along the anti-diagonal j + l = k. CorankSearch holds its state
// and does not read elements itself, so the same search runs sequentially (corank() below) and
// over distributed inputs (merge.hpp), where every read may be remote.
//
// Iterations: each step halves the distance that j (or l) can still move, at most
// ceil(log2 min(m, n)) + 1 moves (the paper's count); the iteration that finds both conditions
// true is one more at most. iteration_bound() is the exact worst case including that final
// check, floor(log2 min(m, n)) + 2 (1 when min(m, n) = 0), checked exhaustively in the tests.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

namespace merge {

// Worst-case number of CorankSearch iterations for inputs of m and n elements.
inline int iteration_bound(std::uint64_t m, std::uint64_t n) {
  std::uint64_t smaller = std::min(m, n);
  if (smaller == 0) return 1;
  int floor_log2 = 0;
  while (smaller >>= 1) ++floor_log2;
  return floor_log2 + 2;
}

class CorankSearch {
 public:
  CorankSearch(std::uint64_t k, std::uint64_t m, std::uint64_t n) : m_(m), n_(n) {
    if (k > m + n || m + n < m) {
      throw std::invalid_argument("merge::CorankSearch: output position " + std::to_string(k) +
                                  " is beyond the merged length " + std::to_string(m + n));
    }
    j_ = std::min(k, m);  // start with j as large as possible
    l_ = k - j_;
    j_low_ = k > n ? k - n : 0;
    l_low_ = 0;  // only the first test can hold in the first iteration, and it sets l_low
  }

  std::uint64_t j() const { return j_; }
  std::uint64_t l() const { return l_; }
  bool done() const { return done_; }
  int iterations() const { return iterations_; }

  // Which comparisons this iteration needs. First test: is B[l] < A[j-1] (A's part too long)?
  // Second test: is not B[l-1] < A[j] (B's part too long)? Each needs the two elements named.
  bool has_first_test() const { return !done_ && j_ > 0 && l_ < n_; }
  bool has_second_test() const { return !done_ && l_ > 0 && j_ < m_; }

  // One iteration with the outcomes of the tests (false for a test this iteration lacks; the
  // second outcome is ignored when the first holds, so it may be computed lazily).
  void step(bool first_holds, bool second_holds) {
    if (done_) return;
    ++iterations_;
    if (first_holds && has_first_test()) {
      const std::uint64_t delta = (1 + j_ - j_low_) / 2;
      l_low_ = l_;
      j_ -= delta;
      l_ += delta;
    } else if (second_holds && has_second_test()) {
      const std::uint64_t delta = (1 + l_ - l_low_) / 2;
      j_low_ = j_;
      l_ -= delta;
      j_ += delta;
    } else {
      done_ = true;
    }
  }

 private:
  std::uint64_t m_, n_;
  std::uint64_t j_, l_;
  std::uint64_t j_low_, l_low_;
  int iterations_ = 0;
  bool done_ = false;
};

// Sequential co-ranks of output position k (0 <= k <= m + n) for the sorted ranges
// [a, a + m) and [b, b + n); ties put A first. Returns {j, l} with j + l = k.
template <class RandomA, class RandomB, class Less = std::less<>>
std::pair<std::uint64_t, std::uint64_t> corank(std::uint64_t k, RandomA a, std::uint64_t m,
                                               RandomB b, std::uint64_t n, Less less = Less(),
                                               int* iterations = nullptr) {
  CorankSearch search(k, m, n);
  while (!search.done()) {
    const std::uint64_t j = search.j(), l = search.l();
    const bool first = search.has_first_test() && less(b[l], a[j - 1]);
    const bool second = !first && search.has_second_test() && !less(b[l - 1], a[j]);
    search.step(first, second);
  }
  if (iterations != nullptr) *iterations = search.iterations();
  return {search.j(), search.l()};
}

}  // namespace merge
