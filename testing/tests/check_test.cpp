// The harness checks itself: inner Checkers write to a private file, and the outer one verifies
// what they counted, printed and returned.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

std::string read_all(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char chunk[256];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, n);
  return text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void check_passing_run(Checker& outer) {
  std::FILE* sink = std::tmpfile();
  Checker inner(MPI_COMM_WORLD, "inner", sink);
  inner.check(true, "never printed");
  inner.equal(2, 2, "equal ints");
  inner.equal_ranges(std::vector<int>{1, 2}, std::vector<int>{1, 2}, "equal vectors");
  inner.throws<std::invalid_argument>([] { throw std::invalid_argument("bad stride"); }, "stride",
                                      "throws");
  outer.equal(inner.checks(), 4LL, "passing run: checks counted");
  outer.equal(inner.failures(), 0LL, "passing run: failures counted");
  outer.equal(inner.finish(), 0, "passing run: exit code");
  const std::string text = read_all(sink);
  outer.check(!contains(text, "FAIL:"), "passing run printed a failure: ", text);
  if (outer.rank() == 0)
    outer.check(contains(text, "PASSED") && contains(text, "4 checks") == (outer.size() == 1),
                "passing run summary: ", text);
  std::fclose(sink);
}

void check_failing_run(Checker& outer) {
  // Only the last rank fails; every rank must still get exit code 1.
  std::FILE* sink = std::tmpfile();
  Checker inner(MPI_COMM_WORLD, "inner", sink);
  const bool last = inner.rank() == inner.size() - 1;
  {
    Context context(inner, "phase ", 7);
    inner.equal(last ? 3 : 4, 4, "value");
    inner.equal_ranges(std::vector<int>{1, last ? 9 : 2, last ? 8 : 3}, std::vector<int>{1, 2, 3},
                       "vector");
    inner.throws<std::invalid_argument>([] {}, "", "silent call");
    inner.throws<std::invalid_argument>([] { throw std::invalid_argument("bad tag"); }, "stride",
                                        "wrong message");
    inner.throws<std::invalid_argument>([] { throw std::runtime_error("oops"); }, "",
                                        "wrong type");
  }
  outer.equal(inner.failures(), last ? 5LL : 3LL, "failing run: failures counted");
  outer.equal(inner.finish(), 1, "failing run: exit code");
  const std::string text = read_all(sink);
  const std::string prefix = "[inner] rank " + std::to_string(inner.rank()) + "/" +
                             std::to_string(inner.size()) + " FAIL: phase 7 | ";
  outer.check(contains(text, prefix + "silent call: did not throw"), "no-throw message: ", text);
  outer.check(contains(text, "wrong message: threw \"bad tag\", which does not mention \"stride\""),
              "wrong-message message: ", text);
  outer.check(contains(text, "wrong type: threw the wrong exception type: \"oops\""),
              "wrong-type message: ", text);
  if (last) {
    outer.check(contains(text, prefix + "value: got 3, expected 4"), "equal message: ", text);
    outer.check(contains(text, "vector: element 1: got 9, expected 2 (2 of 3 elements differ)"),
                "equal_ranges message: ", text);
  } else {
    outer.check(!contains(text, "value:") && !contains(text, "vector:"),
                "passing checks printed: ", text);
  }
  if (inner.rank() == 0)
    outer.check(contains(text, "FAILED") && contains(text, "failures"), "failing summary: ", text);
  std::fclose(sink);
}

void check_empty_run(Checker& outer) {
  std::FILE* sink = std::tmpfile();
  Checker inner(MPI_COMM_WORLD, "inner", sink);
  outer.equal(inner.finish(), 1, "a run without checks must fail");
  if (inner.rank() == 0)
    outer.check(contains(read_all(sink), "nothing was checked"), "empty-run summary");
  std::fclose(sink);
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "check_test", [](Checker& check) {
    check_passing_run(check);
    check_failing_run(check);
    check_empty_run(check);
  });
}
