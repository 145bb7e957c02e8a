#pragma once

// The MPI-free side of the property tests: runs a scenario program as a child job through
// sim/run_ranks.sh (Open MPI or SMPI, with a time limit), judges its output, prints the command
// that replays it, and runs RapidCheck properties with this project's budget, seed and
// statistics conventions.

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/sort_scenario.hpp"

namespace props {

enum class Backend { kMpi, kSmpi };
const char* name(Backend b);

// The backend this driver binary was built for (PROPS_BACKEND_SMPI selects SMPI).
constexpr Backend kBackend =
#ifdef PROPS_BACKEND_SMPI
    Backend::kSmpi;
#else
    Backend::kMpi;
#endif

// Default mode or soak mode (environment JANUS_SOAK=1): more cases, larger rank counts.
struct Budget {
  bool soak = false;
  int cases(int normal, int soak_cases) const { return soak ? soak_cases : normal; }
  int max_np(Backend b) const;    // largest rank count of ordinary scenarios
  int large_np(Backend b) const;  // largest rank count of the large-p property
  int timeout_seconds(Backend b, int np) const;
};
Budget budget();

// A platform for SMPI: a file in the workspace, or generated XML (then `xml` holds it, so the
// replay command can recreate it).
struct Platform {
  std::string path;
  std::string xml;
  std::string description;
};
Platform default_platform();
// A random flat / fat-tree / torus cluster with drawn latency and bandwidth, big enough for np,
// written to the test's temporary directory.
Platform perturbed_platform(int np, std::uint64_t seed);

struct Job {
  Backend backend = Backend::kMpi;
  std::string program;  // base name of the scenario program, e.g. "rbc_scenario"
  int np = 1;
  std::vector<std::string> tokens;  // the scenario's command-line form
  std::string summary;              // one line for progress output
  Platform platform;
  int timeout_seconds = 60;
};

// A job running an RBC scenario.
Job rbc_job(const Scenario& s, Backend backend, const std::string& program, const Budget& budget);
// A job running a sort scenario (program "sort_scenario").
Job sort_job(const SortScenario& s, Backend backend, const Budget& budget);

struct Verdict {
  bool ok = false;
  int exit_code = 0;
  std::string kind;    // "ok", "hang", "deadlock", "interference", "check failed", "bad scenario", "crash"
  std::string output;  // the job's whole output
  std::string digest;  // from "SCENARIO OK digest=..."
  std::string simulated_time;  // from "simulated_time=..." (SMPI)
};

Verdict run_job(const Job& job);

// One shell command, to be run from the workspace root, that replays the job (it recreates a
// generated platform first).
std::string replay_command(const Job& job);
// A failure report: verdict, the end of the output, and the replay command.
std::string report(const Job& job, const Verdict& v);

// Per-property bookkeeping, printed at the end of each property.
struct Stats {
  int runs = 0;           // child jobs started (cases and shrink steps)
  int largest_np = 0;
  int failing_runs = 0;
  int shrink_budget = 0;         // child jobs allowed after the first failure
  double shrink_seconds = 0;     // wall time allowed after the first failure
  double seconds_after_failure = 0;
  int runs_after_failure = 0;
  std::string last_failure;  // report() of the most recent failing job: the final counterexample
  bool budget_spent() const {
    return failing_runs > 0 && (runs_after_failure >= shrink_budget || seconds_after_failure >= shrink_seconds);
  }
  void count(int np, bool failed, double seconds = 0);
};

// Runs `property` (which uses *gen picks and RC_ASSERT/RC_FAIL) as a RapidCheck property with
// `cases` cases, the project's seed convention (fixed per property unless RC_PARAMS gives one,
// random in soak mode) and a shrink budget. Prints seed, cases, runs and largest p. Returns
// RapidCheck's result.
rc::detail::TestResult check_property(const std::string& name, Backend backend, int cases, Stats& stats,
                                      const std::function<void()>& property);

// The usual body of a property: run `job` (unless the shrink budget is spent, then pass) and
// fail the case with report() unless it succeeded. Returns the verdict.
Verdict run_case(const Job& job, Stats& stats);

// Prints the RapidCheck result and turns a failure into a GoogleTest failure.
void expect_success(const rc::detail::TestResult& result);

void showValue(const Scenario& s, std::ostream& os);
void showValue(const SortScenario& s, std::ostream& os);

}  // namespace props
