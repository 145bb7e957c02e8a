// Sort properties over generated inputs, each case a child job on this driver's backend:
// JQuick and hypercube quicksort give a sorted exact permutation of the input, the same output
// for the same seed, JQuick with exact balance; and JQuick's output does not depend on the
// layer, the backend or the platform.
#include <gtest/gtest.h>

#include "driver/driver.hpp"
#include "driver/generators.hpp"

namespace props {
namespace {

int cases(const Budget& b, int mpi, int smpi) {
  return kBackend == Backend::kMpi ? b.cases(mpi, 10 * mpi) : b.cases(smpi, 10 * smpi);
}

// Sorted (locally and across PEs), an exact permutation of the input, deterministic for a seed,
// and PE i holds exactly floor(n/p) + [i < n mod p] elements; for generated p (primes
// included), ranges, distributions (uneven and one-PE inputs included), n/p and types.
TEST(SortProperties, JQuickSortsExactlyBalanced) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_sort_scenario("jquick", kBackend, b);
  expect_success(check_property("jquick_sorts_exactly_balanced", kBackend, cases(b, 12, 30), stats, [&] {
    run_case(sort_job(*gen, kBackend, b), stats);
  }));
}

// Sorted, an exact permutation, deterministic; PEs outside the power-of-two subcube end empty.
TEST(SortProperties, HypercubeQuicksortSorts) {
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_sort_scenario("hypercube", kBackend, b);
  expect_success(check_property("hypercube_quicksort_sorts", kBackend, cases(b, 10, 20), stats, [&] {
    run_case(sort_job(*gen, kBackend, b), stats);
  }));
}

// JQuick's output is a function of input and seed only: the same on every layer, on a platform
// with random latency, bandwidth and topology, and (p <= 8) on Open MPI.
TEST(SortProperties, JQuickOutputIndependentOfLayerAndSchedule) {
  if (kBackend != Backend::kSmpi) GTEST_SKIP() << "platforms exist only under SMPI";
  const Budget b = budget();
  Stats stats;
  const auto gen = gen_sort_scenario("jquick", kBackend, b);
  expect_success(check_property("jquick_output_independent_of_layer_and_schedule", kBackend, b.cases(8, 50), stats, [&] {
    SortScenario s = *gen;
    const std::string other_layer = *rc::gen::elementOf(layers_of("jquick"));
    const std::uint64_t platform_seed = *rc::gen::arbitrary<std::uint64_t>();
    const Job job = sort_job(s, kBackend, b);
    const Verdict first = run_case(job, stats);
    SortScenario t = s;
    t.layer = other_layer;
    Job variant = sort_job(t, kBackend, b);
    variant.platform = perturbed_platform(s.np, platform_seed);
    const Verdict second = run_case(variant, stats);
    if (second.digest != first.digest) {
      RC_FAIL("outputs differ: " + first.digest + " vs " + second.digest + "\n" + replay_command(job) + "\n" +
              replay_command(variant));
    }
    if (s.np <= 8) {
      Job real = job;
      real.backend = Backend::kMpi;
      const Verdict third = run_case(real, stats);
      if (third.digest != first.digest) {
        RC_FAIL("SMPI and Open MPI outputs differ: " + first.digest + " vs " + third.digest + "\n" +
                replay_command(job) + "\n" + replay_command(real));
      }
    }
  }));
}

}  // namespace
}  // namespace props
