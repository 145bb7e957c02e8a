// Misuse properties (issue 18, classes 4 to 7), each case a child job of misuse_scenario on this
// driver's backend (child/misuse_scenario.cpp documents the tokens). Every family draws the rank
// count, a split of the world and the misuse's parameters; a failing case shrinks to a minimal
// one and prints its replay command.
//
// - TruncationIsReported (class 4): a message longer than the receive, small or large,
//   blocking or not, under MPI_ERRORS_RETURN gives rbc::Error(MPI_ERR_TRUNCATE) at the receiver,
//   writes nothing past its buffer and leaves the communicator usable; under the default
//   MPI_ERRORS_ARE_FATAL (point-to-point and bcast) the run stops with MPI's MPI_ERR_TRUNCATE.
// - FreedBaseCommunicatorIsReported (class 5): rbc::Error(MPI_ERR_COMM) for every operation.
// - BadComparatorsGiveErrorsWithoutLoss (class 6): `<=`, always-true and random comparators:
//   all PEs throw jquick::Error or none does, nothing is lost, `<=` without error sorts.
// - MismatchedCollectivesAreNamed (class 7): in the checked build every mismatch of kind, root
//   or count stops with "rbc: mismatched collectives", never hangs, never completes silently.
// - MismatchOracle: the same property against rbc_checked_noagree (the checked build before
//   the signature handshake) must find a counterexample that the checked build names.
// - MismatchedJQuickLayersAreNamed (class 7): jquick_checked makes every PE throw.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "driver/driver.hpp"
#include "driver/generators.hpp"

namespace props {
namespace {

int max_np(const Budget& b) { return kBackend == Backend::kMpi ? 6 : std::min(b.max_np(kBackend), 40); }

int cases(const Budget& b, int mpi, int smpi) {
  return kBackend == Backend::kMpi ? b.cases(mpi, 10 * mpi) : b.cases(smpi, 10 * smpi);
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// A split [first, last, stride] of a world of np ranks with at least `min_size` members; returns
// the token and the size.
std::pair<std::string, int> gen_range(int np, int min_size) {
  const int first = *rc::gen::inRange(0, np - min_size + 1);
  const int max_stride = min_size > 1 ? std::max(1, (np - 1 - first) / (min_size - 1)) : std::max(1, np);
  const int stride = *rc::gen::inRange(1, max_stride + 1);
  const int most = (np - 1 - first) / stride + 1;  // members with this stride, >= min_size
  const int size = *rc::gen::inRange(min_size, most + 1);
  const int last = first + (size - 1) * stride;
  return {"range=" + std::to_string(first) + "." + std::to_string(last) + "." + std::to_string(stride), size};
}

Job misuse_job(const std::string& program, int np, std::vector<std::string> tokens, const Budget& b) {
  Job job;
  job.backend = kBackend;
  job.program = program;
  job.np = np;
  tokens.insert(tokens.begin(), {"np=" + std::to_string(np), "seed=" + std::to_string(*rc::gen::inRange(0, 1000))});
  job.tokens = tokens;
  job.summary = tokens.size() > 2 ? tokens[2] : "";
  job.platform = default_platform();
  // Short limits: the mismatch runs hang without the handshake, and every hang costs this.
  job.timeout_seconds = std::min(b.timeout_seconds(kBackend, np), kBackend == Backend::kMpi ? 40 : 30 + np / 4);
  return job;
}

// Runs a job that must fail with `expected` in its output (not a hang, not a silent success).
Verdict run_expect_failure(const Job& job, Stats& stats, const std::string& expected) {
  if (stats.budget_spent()) return Verdict{};
  const auto start = std::chrono::steady_clock::now();
  Verdict v = run_job(job);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  // (Under SMPI a rank that aborts while others wait may also get a deadlock report.)
  const bool ok = v.exit_code != 0 && v.kind != "hang" && contains(v.output, expected);
  stats.count(job.np, !ok, took.count());
  std::cout << "[props]   run " << stats.runs << ": " << name(job.backend) << " np=" << job.np << " "
            << job.summary << ": " << (ok ? "stopped as expected" : v.kind) << " in " << took.count() << " s"
            << std::endl;
  if (!ok) {
    std::cout << "[props]     tokens:";
    for (const auto& t : job.tokens) std::cout << " " << t;
    std::cout << std::endl;
    stats.last_failure = "expected the run to stop with \"" + expected + "\", got: " +
                         (contains(v.output, "SCENARIO UNDETECTED") ? std::string("silent completion") : v.kind) +
                         "\n" + report(job, v);
    RC_FAIL(stats.last_failure);
  }
  return v;
}

std::vector<std::string> trunc_tokens(int np, bool fatal_only) {
  const auto [range, size] = gen_range(np, 1);
  const int src = *rc::gen::inRange(0, size), dst = *rc::gen::inRange(0, size);
  const bool large = *rc::gen::arbitrary<bool>();
  const int recv = large ? *rc::gen::inRange(0, 3000) : *rc::gen::inRange(0, 500);
  const int send = recv + 1 + (large ? *rc::gen::inRange(1100, 3000) : *rc::gen::inRange(0, 200));
  std::string mode = *rc::gen::element<std::string>("b", "n");
  const bool fatal = fatal_only || *rc::gen::arbitrary<bool>();
  if (fatal && size > 1 && src != dst && *rc::gen::arbitrary<bool>()) mode = "c";
  return {"family=trunc", range, "src=" + std::to_string(src), "dst=" + std::to_string(dst),
          "send=" + std::to_string(send), "recv=" + std::to_string(recv), "mode=" + mode,
          std::string("handler=") + (fatal ? "fatal" : "ret")};
}

TEST(MisuseProperties, TruncationIsReported) {
  const Budget b = budget();
  Stats stats;
  expect_success(check_property("truncation_is_reported", kBackend, cases(b, 8, 14), stats, [&] {
    const int np = *gen_np(max_np(b));
    const auto tokens = trunc_tokens(np, false);
    const Job job = misuse_job("misuse_scenario", np, tokens, b);
    if (contains(tokens.back(), "fatal")) {
      // RBC's report before MPI_Abort (wire.cpp: raise), or MPI's own for large messages.
      run_expect_failure(job, stats, "MPI_ERR_TRUNCATE");
    } else {
      run_case(job, stats);
    }
  }));
}

TEST(MisuseProperties, FreedBaseCommunicatorIsReported) {
  const Budget b = budget();
  Stats stats;
  expect_success(check_property("freed_base_communicator_is_reported", kBackend, cases(b, 6, 10), stats, [&] {
    const int np = *gen_np(max_np(b));
    const auto [range, size] = gen_range(np, 1);
    (void)size;
    const std::string op =
        *rc::gen::element<std::string>("bcast", "allreduce", "barrier", "isend", "recv", "split", "iallreduce");
    run_case(misuse_job("misuse_scenario", np, {"family=freed", range, "op=" + op}, b), stats);
  }));
}

TEST(MisuseProperties, BadComparatorsGiveErrorsWithoutLoss) {
  const Budget b = budget();
  Stats stats;
  expect_success(check_property("bad_comparators_give_errors_without_loss", kBackend, cases(b, 8, 12), stats, [&] {
    const int np = *gen_np(std::min(max_np(b), kBackend == Backend::kMpi ? 5 : 24));
    const std::string cmp = *rc::gen::element<std::string>("le", "true", "random");
    const std::string layer = *rc::gen::element<std::string>("rbc", "mpi_split", "mpi_create_group");
    const int n = *rc::gen::inRange(0, 300);
    const int verify = *rc::gen::inRange(0, 2);
    std::vector<std::string> tokens = {"family=comparator", "cmp=" + cmp, "n=" + std::to_string(n), "layer=" + layer,
                                       "verify=" + std::to_string(verify)};
    const std::int64_t gather = *gen_gather_elements(static_cast<std::int64_t>(n) * np);
    if (gather >= 0) tokens.push_back("gather=" + std::to_string(gather));
    run_case(misuse_job("misuse_scenario", np, tokens, b), stats);
  }));
}

// A mismatch of kind, root or count on a split of at least two members.
std::vector<std::string> mismatch_tokens(int np) {
  const auto [range, size] = gen_range(np, 2);
  const std::string what = *rc::gen::element<std::string>("root", "count", "kind");
  std::string coll, other = "none";
  if (what == "root") {
    coll = *rc::gen::element<std::string>("bcast", "reduce", "gather");
  } else if (what == "count") {
    coll = *rc::gen::element<std::string>("bcast", "reduce", "allreduce", "scan", "exscan");
  } else {
    const std::vector<std::string> kinds = {"bcast", "reduce", "allreduce", "scan", "exscan", "gather", "allgather", "barrier"};
    coll = *rc::gen::elementOf(kinds);
    other = *rc::gen::suchThat(rc::gen::elementOf(kinds), [&](const std::string& k) { return k != coll; });
  }
  return {"family=mismatch", range, "coll=" + coll, "what=" + what, "other=" + other,
          "odd=" + std::to_string(*rc::gen::inRange(0, size)), "root=" + std::to_string(*rc::gen::inRange(0, size)),
          "shift=" + std::to_string(*rc::gen::inRange(0, 4)), "count=" + std::to_string(*rc::gen::inRange(1, 600)),
          "before=" + std::to_string(*rc::gen::inRange(0, 3))};
}

TEST(MisuseProperties, MismatchedCollectivesAreNamed) {
  const Budget b = budget();
  Stats stats;
  expect_success(check_property("mismatched_collectives_are_named", kBackend, cases(b, 8, 16), stats, [&] {
    const int np = *rc::gen::inRange(2, max_np(b) + 1);
    run_expect_failure(misuse_job("misuse_scenario_checked", np, mismatch_tokens(np), b), stats,
                       "rbc: mismatched collectives");
  }));
}

// The mismatch property must fail against the checked build without the signature handshake (it
// hangs or completes silently on root mismatches), and the shrunk counterexample must be named
// by the checked build.
TEST(MisuseProperties, MismatchOracle) {
  const Budget b = budget();
  Stats stats;
  stats.shrink_budget = kBackend == Backend::kMpi ? 8 : 30;
  stats.shrink_seconds = 200;
  Job last;
  const auto result = check_property("mismatch_oracle", kBackend, cases(b, 10, 20), stats, [&] {
    const int np = *rc::gen::inRange(2, max_np(b) + 1);
    Job job = misuse_job("misuse_scenario_noagree", np, mismatch_tokens(np), b);
    job.timeout_seconds = kBackend == Backend::kMpi ? 15 : 20 + np / 4;
    last = job;
    run_expect_failure(job, stats, "rbc: mismatched collectives");
  });
  ASSERT_TRUE(result.is<rc::detail::FailureResult>())
      << "the mismatch property did not catch the build without the handshake in " << stats.runs << " runs";
  const auto& failure = result.get<rc::detail::FailureResult>();
  std::cout << "=== The build without the handshake was caught after " << failure.numSuccess
            << " passing cases; shrunk counterexample:\n"
            << stats.last_failure << std::endl;
  // Replay the shrunk case (the last failing job) against the checked build.
  Job control = last;
  control.program = "misuse_scenario_checked";
  const Verdict v = run_job(control);
  EXPECT_TRUE(v.exit_code != 0 && contains(v.output, "rbc: mismatched collectives"))
      << "the counterexample is not named by the checked build:\n" << report(control, v);
  std::cout << "=== The same scenario against the checked build: "
            << (contains(v.output, "rbc: mismatched collectives") ? "named" : v.kind) << std::endl;
}

TEST(MisuseProperties, MismatchedJQuickLayersAreNamed) {
  const Budget b = budget();
  Stats stats;
  expect_success(check_property("mismatched_jquick_layers_are_named", kBackend, cases(b, 4, 8), stats, [&] {
    const int np = *rc::gen::inRange(2, std::min(max_np(b), kBackend == Backend::kMpi ? 5 : 16) + 1);
    const std::vector<std::string> layers = {"rbc", "mpi_split", "mpi_create_group"};
    const std::string layer = *rc::gen::elementOf(layers);
    const std::string other = *rc::gen::suchThat(rc::gen::elementOf(layers), [&](const std::string& l) { return l != layer; });
    run_case(misuse_job("misuse_scenario_checked", np,
                        {"family=layers", "layer=" + layer, "other=" + other,
                         "odd=" + std::to_string(*rc::gen::inRange(0, np)), "n=" + std::to_string(*rc::gen::inRange(0, 200))},
                        b),
             stats);
  }));
}

}  // namespace
}  // namespace props
