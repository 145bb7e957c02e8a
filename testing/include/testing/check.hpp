#pragma once

// Per-rank check harness for MPI tests that run on both backends (Open MPI and SMPI).
//
// A Checker belongs to one rank and is owned by main() (under SMPI all ranks share one process
// and its globals, so no state may live anywhere else). Each check() either passes silently or
// records a failure and prints it with the rank and the current context:
//
//   [collectives_test] rank 3/8 FAIL: layout 1..6/2 | bcast root=2: element 5: got 3, expected 4
//
// At the end finish() (collective over the Checker's communicator) sums checks and failures
// over all ranks, rank 0 prints a summary, and it returns the process exit code: 0 only if no
// rank failed and at least one check ran (a test that checked nothing fails).
//
// Typical main():
//
//   int main(int argc, char** argv) {
//     return janus::testing::run_test(argc, argv, "my_test", [](janus::testing::Checker& check) {
//       janus::testing::Context c(check, "phase ", 1);
//       check.equal(got, expected, "sum of ranks");
//     });
//   }

#include <mpi.h>

#include <cstdio>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace janus::testing {

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

class Checker {
 public:
  // `out` receives failure messages and the summary; each rank must own its stream (stdout is
  // fine: lines are written whole and flushed).
  Checker(MPI_Comm comm, std::string test_name, std::FILE* out = stdout);

  int rank() const { return rank_; }
  int size() const { return size_; }
  long long checks() const { return checks_; }
  long long failures() const { return failures_; }

  // One check. The message parts (anything with operator<<) are formatted only on failure.
  template <class... Parts>
  bool check(bool ok, const Parts&... what) {
    ++checks_;
    if (!ok) record_failure(detail::concat(what...));
    return ok;
  }

  template <class... Parts>
  void fail(const Parts&... what) {
    check(false, what...);
  }

  // got == expected, printing both on failure.
  template <class Got, class Expected, class... Parts>
  bool equal(const Got& got, const Expected& expected, const Parts&... what) {
    const bool ok = got == expected;
    ++checks_;
    if (!ok) record_failure(detail::concat(what..., ": got ", got, ", expected ", expected));
    return ok;
  }

  // Element-wise comparison of two sequences as ONE check; on failure the message names the
  // first differing index, both values there, and how many elements differ.
  template <class Got, class Expected, class... Parts>
  bool equal_ranges(const Got& got, const Expected& expected, const Parts&... what) {
    ++checks_;
    const auto got_size = std::distance(std::begin(got), std::end(got));
    const auto expected_size = std::distance(std::begin(expected), std::end(expected));
    if (got_size != expected_size) {
      record_failure(detail::concat(what..., ": got ", got_size, " elements, expected ",
                                    expected_size));
      return false;
    }
    long long index = 0, first_bad = -1, bad = 0;
    auto e = std::begin(expected);
    std::string first_detail;
    for (auto g = std::begin(got); g != std::end(got); ++g, ++e, ++index) {
      if (*g == *e) continue;
      if (bad++ == 0) {
        first_bad = index;
        first_detail = detail::concat("got ", *g, ", expected ", *e);
      }
    }
    if (bad == 0) return true;
    record_failure(detail::concat(what..., ": element ", first_bad, ": ", first_detail, " (", bad,
                                  " of ", index, " elements differ)"));
    return false;
  }

  // Runs `f` and checks that it throws an `E` whose what() contains `needle` (any message if
  // `needle` is empty). Other exceptions and no exception are failures naming what happened.
  template <class E, class F, class... Parts>
  bool throws(F&& f, const std::string& needle, const Parts&... what) {
    ++checks_;
    try {
      f();
    } catch (const E& e) {
      const std::string message = e.what();
      if (needle.empty() || message.find(needle) != std::string::npos) return true;
      record_failure(detail::concat(what..., ": threw \"", message, "\", which does not mention \"",
                                    needle, "\""));
      return false;
    } catch (const std::exception& e) {
      record_failure(detail::concat(what..., ": threw the wrong exception type: \"", e.what(), "\""));
      return false;
    } catch (...) {
      record_failure(detail::concat(what..., ": threw a non-std exception"));
      return false;
    }
    record_failure(detail::concat(what..., ": did not throw"));
    return false;
  }

  // Prints `why` with the rank and context, then ends the whole job with exit code 3, without
  // unwinding (destructors of pending operations could wait for ranks that will never come).
  [[noreturn]] void abort(const std::string& why);

  // Collective over the Checker's communicator: sums checks and failures, prints the summary on
  // rank 0, and returns the exit code (0 = every rank passed and something was checked).
  int finish();

  // Context shown before every failure message; use the Context guard rather than these.
  void push_context(std::string text) { context_.push_back(std::move(text)); }
  void pop_context() { context_.pop_back(); }

 private:
  void record_failure(const std::string& message);

  MPI_Comm comm_;
  std::string name_;
  std::FILE* out_;
  int rank_ = 0;
  int size_ = 1;
  long long checks_ = 0;
  long long failures_ = 0;
  std::vector<std::string> context_;
};

// Adds one entry to a Checker's context for the lifetime of the guard.
class Context {
 public:
  template <class... Parts>
  Context(Checker& checker, const Parts&... parts) : checker_(checker) {
    checker_.push_context(detail::concat(parts...));
  }
  ~Context() { checker_.pop_context(); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Checker& checker_;
};

// Under SMPI a deadlock ends the simulation with exit code 0 (and so does MPI_Abort); this makes
// it exit with code 2 and a message instead. Call once, after MPI_Init (run_test does). No-op
// under Open MPI, where sim/run_ranks.sh's timeout catches hangs.
void fail_on_simulated_deadlock(const std::string& test_name);

// MPI_Init, fail_on_simulated_deadlock, a Checker over MPI_COMM_WORLD, body(checker), finish(),
// MPI_Finalize; returns the exit code. An exception escaping `body` is reported with the rank
// and ends the whole job with a nonzero code (other ranks might otherwise wait for this one).
int run_test(int argc, char** argv, const std::string& test_name,
             const std::function<void(Checker&)>& body);

}  // namespace janus::testing
