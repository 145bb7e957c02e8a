// Proof that the interference oracle works: the interference property, run against
// //core/rbc:rbc_broken (envelope checks on, communicator context dropped from the MPI tag),
// MUST find a counterexample, and the failure must be the envelope check's "rbc: interference:".
// The shrunk counterexample is printed, and replayed against the correct checked build, where it
// must pass (so the failure is the broken build's, not the scenario's).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "driver/driver.hpp"
#include "driver/generators.hpp"

namespace props {
namespace {

TEST(InterferenceOracle, BrokenBuildIsCaught) {
  const Budget b = budget();
  Stats stats;
  // Shrinking costs one child job per step; a bounded budget still ends on a real (smaller)
  // counterexample.
  stats.shrink_budget = b.soak ? 300 : (kBackend == Backend::kMpi ? 20 : 60);
  const auto gen = gen_interference_scenario(kBackend, b);
  Job last_failure;
  Verdict last_verdict;
  const auto result = check_property("broken_build_is_caught", kBackend, b.cases(30, 100), stats, [&] {
    const Job job = rbc_job(*gen, kBackend, "rbc_scenario_broken", b);
    if (stats.budget_spent()) return;
    const auto start = std::chrono::steady_clock::now();
    const Verdict v = run_job(job);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    stats.count(job.np, !v.ok, took.count());
    if (!v.ok) {
      last_failure = job;
      last_verdict = v;
      RC_FAIL(report(job, v));
    }
  });

  ASSERT_TRUE(result.is<rc::detail::FailureResult>())
      << "the interference property did not catch the deliberately broken RBC in " << stats.runs << " runs";
  const auto& failure = result.get<rc::detail::FailureResult>();
  std::cout << "=== The deliberately broken build was caught after " << failure.numSuccess
            << " passing cases; shrunk counterexample (" << stats.runs << " scenario runs in all):\n";
  for (const auto& [what, value] : failure.counterExample) std::cout << what << ": " << value << "\n";
  std::cout << failure.description << std::endl;
  EXPECT_EQ(last_verdict.kind, "interference")
      << "the broken build failed, but not through the envelope check:\n" << report(last_failure, last_verdict);

  Job control = last_failure;
  control.program = "rbc_scenario_checked";
  const Verdict v = run_job(control);
  EXPECT_TRUE(v.ok) << "the counterexample also fails against the correct checked build:\n" << report(control, v);
  std::cout << "=== The same scenario against the correct checked build: " << v.kind << std::endl;
}

}  // namespace
}  // namespace props
