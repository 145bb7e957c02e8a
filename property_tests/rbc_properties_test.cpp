// RBC properties over generated scenarios, each case a child job on this driver's backend
// (Open MPI or SMPI; see BUILD.bazel). A failing case shrinks and prints a replay command.
#include <gtest/gtest.h>

#include "driver/driver.hpp"
#include "driver/generators.hpp"

namespace props {
namespace {

Job job_for(const Scenario& s, const std::string& program, const Budget& b) {
  return rbc_job(s, kBackend, program, b);
}

int cases(const Budget& b, int mpi, int smpi) {
  return kBackend == Backend::kMpi ? b.cases(mpi, 10 * mpi) : b.cases(smpi, 10 * smpi);
}

// Every RBC collective (blocking and nonblocking, several concurrent ones on overlapping
// communicators) gives MPI's result on an MPI communicator with the same members, for
// generated layouts, roots, counts, datatypes (incl. a derived type with gaps) and ops (incl. a
// non-commutative user op).
TEST(RbcProperties, CollectivesEqualMpiReference) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_collectives_scenario(kBackend, b);
  expect_success(check_property("collectives_equal_mpi_reference", kBackend, cases(b, 16, 40), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario", b), stats);
  }));
}

// Point-to-point on overlapping communicators with reused tags, named and ANY_SOURCE receives,
// blocking and nonblocking: every message arrives exactly once, at the receive it was sent to,
// unchanged, with the right status; a wildcard receive never takes a non-member's message;
// nothing is left over.
TEST(RbcProperties, PointToPointExactlyOnce) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_p2p_scenario(kBackend, b);
  expect_success(check_property("point_to_point_exactly_once", kBackend, cases(b, 12, 35), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario", b), stats);
  }));
}

// MPI_ANY_SOURCE never matches a non-member, even when communicator contexts collide: against
// the collision build (every communicator has the same tag context, so same-tag messages of all
// communicators meet in MPI's matching), scenarios in which competing same-tag messages always
// come from non-members must still pass: the envelope alone keeps them apart.
TEST(RbcProperties, WildcardNeverMatchesNonMember) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_wildcard_isolation_scenario(kBackend, b);
  expect_success(check_property("wildcard_never_matches_non_member", kBackend, cases(b, 8, 20), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario_collide", b), stats);
  }));
}

// Overlapping communicators, the same two user tags everywhere, concurrent collectives and
// messages completed in random orders, against the checked build: every RBC message carries a
// communicator identity and sequence number verified at receive ("rbc: interference: ...").
TEST(RbcProperties, NoCrossCommunicatorInterference) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_interference_scenario(kBackend, b);
  expect_success(check_property("no_cross_communicator_interference", kBackend, cases(b, 12, 35), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario_checked", b), stats);
  }));
}

// Isolation by construction: the interference scenarios against the collision build, where every
// communicator has the same tag context and only the envelope's exact key keeps them apart.
// (Before the envelope matching, this build was the "broken" one the oracle caught.)
TEST(RbcProperties, NoInterferenceWhenContextsCollide) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_interference_scenario(kBackend, b);
  expect_success(check_property("no_interference_when_contexts_collide", kBackend, cases(b, 12, 35), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario_collide", b), stats);
  }));
}

// Bad ranges, roots, counts, tags, datatypes, ops and non-member calls throw rbc::Error with the
// documented message on every rank that makes them, leave the communicator usable, lose no
// message, and never hang.
TEST(RbcProperties, BadInputsGiveDocumentedErrors) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_bad_input_scenario(kBackend, b);
  expect_success(check_property("bad_inputs_give_documented_errors", kBackend, cases(b, 8, 20), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario", b), stats);
  }));
}

// A few small operations at large p (SMPI only): 128 to 320 ranks by default, up to 2048 in
// soak mode, against the checked build.
TEST(RbcProperties, LargeRankCounts) {
  if (kBackend != Backend::kSmpi) GTEST_SKIP() << "Open MPI runs stay at <= 8 ranks on this machine";
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_large_scenario(kBackend, b);
  expect_success(check_property("large_rank_counts", kBackend, b.cases(4, 20), stats, [&] {
    run_case(job_for(*gen, "rbc_scenario_checked", b), stats);
  }));
}

// The same scenario on SMPI platforms with random latency, bandwidth and topology gives the same
// results (only timing may change); the same platform twice gives the same simulated run; and
// for p <= 8 Open MPI agrees too.
TEST(RbcProperties, SchedulePerturbationKeepsResults) {
  if (kBackend != Backend::kSmpi) GTEST_SKIP() << "platforms exist only under SMPI";
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_mixed_scenario(kBackend, b);
  expect_success(check_property("schedule_perturbation_keeps_results", kBackend, b.cases(10, 80), stats, [&] {
    const Scenario s = *gen;
    const std::uint64_t platform_seed = *rc::gen::arbitrary<std::uint64_t>();
    Job job = job_for(s, "rbc_scenario_checked", b);
    const Verdict first = run_case(job, stats);
    const Verdict again = run_case(job, stats);
    RC_ASSERT(first.digest == again.digest);
    if (first.simulated_time != again.simulated_time) {
      RC_FAIL("two runs on one platform took different simulated times (" + first.simulated_time + " vs " +
              again.simulated_time + "):\n" + replay_command(job));
    }
    for (int i = 0; i < 2; ++i) {
      Job perturbed = job;
      perturbed.platform = perturbed_platform(s.np, platform_seed + i);
      const Verdict v = run_case(perturbed, stats);
      if (v.digest != first.digest && !v.digest.empty()) {
        RC_FAIL("results differ between platforms: digest " + first.digest + " on " + job.platform.description +
                ", " + v.digest + " on " + perturbed.platform.description + "\n" + replay_command(job) + "\n" +
                replay_command(perturbed));
      }
    }
    if (s.np <= 8) {
      Job real = job;
      real.backend = Backend::kMpi;
      real.timeout_seconds = b.timeout_seconds(Backend::kMpi, s.np);
      const Verdict v = run_case(real, stats);
      if (v.digest != first.digest && !v.digest.empty()) {
        RC_FAIL("results differ between SMPI (" + first.digest + ") and Open MPI (" + v.digest + ")\n" +
                replay_command(job) + "\n" + replay_command(real));
      }
    }
  }));
}

}  // namespace
}  // namespace props
