#pragma once

#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace localsort {

// The first exception the comparator threw during a call, on this PE.
struct ComparatorFault {
  bool thrown = false;
  std::string what;

  // For the error every PE throws once they agreed that some comparator threw.
  std::string describe() const {
    if (!thrown) return "the comparator threw an exception on another PE";
    return "the comparator threw an exception on this PE (" + (what.empty() ? std::string("no text") : what) + ")";
  }
};

// Comparators that cannot throw: noexcept ones, and std::less / std::greater on arithmetic
// types (not declared noexcept, but `<` on numbers does not throw).
template <class Less, class T>
inline constexpr bool kCannotThrow =
    std::is_nothrow_invocable_v<const Less&, const T&, const T&> ||
    (std::is_arithmetic_v<T> && (std::is_same_v<Less, std::less<T>> || std::is_same_v<Less, std::greater<T>> ||
                                 std::is_same_v<Less, std::less<>> || std::is_same_v<Less, std::greater<>>));

// A comparator whose exceptions stop inside a distributed algorithm (jquick::sort,
// merge::stable_merge). A PE that left such a call on an exception would leave the others
// waiting for its messages forever. Instead the first exception is recorded and every later
// comparison answers false (all elements equivalent: still a strict weak order), so the PE runs
// the protocol to its end, and a last agreement makes every PE throw an error naming it. Copies
// share the fault (JQuick's sample merger keeps one).
template <class Less>
class GuardedLess {
 public:
  GuardedLess(Less less, ComparatorFault* fault) : less_(std::move(less)), fault_(fault) {}

  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    if (fault_->thrown) return false;
    try {
      return less_(a, b);
    } catch (const std::exception& e) {
      record(e.what());
    } catch (...) {
      record("an exception not derived from std::exception");
    }
    return false;
  }

 private:
  void record(const char* what) const noexcept {
    fault_->thrown = true;
    try {
      fault_->what = what;
    } catch (...) {
      // Out of memory for the text: the flag alone still stops the sort on every PE.
    }
  }

  Less less_;
  ComparatorFault* fault_;
};

// The comparator to use: Less itself where it cannot throw (so the local sort still picks
// its radix sort for std::less on numbers), else Less guarded.
template <class Less, class T>
using SafeLess = std::conditional_t<kCannotThrow<Less, T>, Less, GuardedLess<Less>>;

template <class T, class Less>
SafeLess<Less, T> make_safe_less(Less less, ComparatorFault* fault) {
  if constexpr (kCannotThrow<Less, T>) {
    (void)fault;
    return less;
  } else {
    return GuardedLess<Less>(std::move(less), fault);
  }
}

}  // namespace localsort
