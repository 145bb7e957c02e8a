#include "driver/driver.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace props {

namespace {

// The exit code of RBC's interference aborts (core/rbc/src/wire.cpp).
constexpr int kInterferenceExitCode = 86;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Root of the runfiles tree: where `bazel test` runs us, or next to the binary otherwise.
std::string runfiles_root() {
  const std::string srcdir = env("TEST_SRCDIR");
  if (!srcdir.empty()) return srcdir + "/" + (env("TEST_WORKSPACE").empty() ? "janus" : env("TEST_WORKSPACE"));
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    return std::string(self) + ".runfiles/janus";
  }
  return ".";
}

std::string temp_dir() {
  const std::string t = env("TEST_TMPDIR");
  return t.empty() ? "/tmp" : t;
}

std::string resolved(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) ? std::string(real) : path;
}

// Path of a data file, relative to the workspace (its runfiles path).
std::string program_file(const std::string& program, Backend b) {
  return b == Backend::kMpi ? "property_tests/" + program + "_mpi"
                            : "property_tests/lib" + program + "_smpi.so";
}

std::uint64_t fnv(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<std::string> command(const Job& job, const std::string& run_ranks, const std::string& program,
                                 const std::string& platform) {
  std::vector<std::string> cmd = {run_ranks, "--backend", name(job.backend), "--np", std::to_string(job.np),
                                  "--timeout", std::to_string(job.timeout_seconds), "--platform", platform, program};
  for (const std::string& t : job.tokens) cmd.push_back(t);
  return cmd;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    const bool plain = w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./=_,:+-") ==
                       std::string::npos;
    out += (out.empty() ? "" : " ") + (plain ? w : "'" + w + "'");
  }
  return out;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::string value_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  const auto end = text.find_first_of(" \n", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

const char* name(Backend b) { return b == Backend::kMpi ? "mpi" : "smpi"; }

Budget budget() {
  Budget b;
  const std::string soak = env("JANUS_SOAK");
  b.soak = !soak.empty() && soak != "0";
  return b;
}

int Budget::max_np(Backend b) const {
  if (b == Backend::kMpi) return 8;  // oversubscribed Open MPI on a 2-core machine
  return soak ? 512 : 48;
}

int Budget::large_np(Backend b) const {
  if (b == Backend::kMpi) return 8;
  return soak ? 2048 : 320;
}

// Generous: the machine may be shared, and a slow run must not pass for a hang. A real hang
// costs this much per shrink step.
int Budget::timeout_seconds(Backend b, int np) const {
  const int base = b == Backend::kMpi ? 90 : 60;
  return base + np / 4 + (soak ? 120 : 0);
}

Platform default_platform() {
  return {"platforms/test_cluster.xml", "", "test_cluster (128 nodes x 16 cores, flat, 1us, 10GBps)"};
}

Platform perturbed_platform(int np, std::uint64_t seed) {
  const std::uint64_t h = mix(seed, 0x91a7f);
  const char* const kTopologies[] = {"FLAT", "FAT_TREE", "TORUS"};
  const char* topology = kTopologies[h % 3];
  const int nodes = 16;
  const int cores = std::max(1, (np + nodes - 1) / nodes);
  // Latency 0.1us..100us, bandwidth 0.1..100 GBps: spread over three orders of magnitude each.
  const double lat_us = 0.1 * static_cast<double>(1 + mix(h, 1) % 1000);
  const double bw_gbps = 0.1 * static_cast<double>(1 + mix(h, 2) % 1000);
  const double loop_lat_us = 0.01 * static_cast<double>(1 + mix(h, 3) % 100);
  std::ostringstream xml;
  xml << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<platform version=\"4.1\">\n  <cluster id=\"perturbed\" prefix=\"node-\" suffix=\"\" radical=\"0-"
      << nodes - 1 << "\" core=\"" << cores << "\" speed=\"1Gf\" bw=\"" << bw_gbps << "GBps\" lat=\"" << lat_us
      << "us\" loopback_bw=\"" << 2 * bw_gbps << "GBps\" loopback_lat=\"" << loop_lat_us << "us\"";
  if (std::string(topology) == "FAT_TREE") {
    xml << " topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,2;1,2\"";
  } else if (std::string(topology) == "TORUS") {
    xml << " topology=\"TORUS\" topo_parameters=\"4,2,2\"";
  } else {
    xml << " bb_bw=\"" << 4 * bw_gbps << "GBps\" bb_lat=\"" << lat_us / 2 << "us\"";
  }
  xml << "/>\n</platform>\n";
  Platform p;
  p.xml = xml.str();
  p.path = temp_dir() + "/janus-platform-" + std::to_string(fnv(p.xml) % 100000000) + ".xml";
  std::ostringstream d;
  d << topology << " 16 nodes x " << cores << " cores, lat " << lat_us << "us, bw " << bw_gbps << "GBps";
  p.description = d.str();
  std::ofstream(p.path) << p.xml;
  return p;
}

Verdict run_job(const Job& job) {
  const std::string root = runfiles_root();
  const std::string platform =
      job.platform.xml.empty() ? root + "/" + job.platform.path : job.platform.path;
  const auto cmd = command(job, root + "/sim/run_ranks.sh", root + "/" + program_file(job.program, job.backend), platform);
  const std::string log = temp_dir() + "/janus-job-" + std::to_string(getpid()) + ".log";

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    std::FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
    std::vector<char*> argv;
    for (const std::string& w : cmd) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("execv run_ranks.sh");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);

  Verdict v;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  v.output = text.str();
  std::remove(log.c_str());
  v.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  v.digest = value_after(v.output, "SCENARIO OK digest=");
  v.simulated_time = value_after(v.output, "simulated_time=");
  // RBC's interference checks abort with exit code 86 after printing their line; MPICH's mpiexec
  // can lose the aborting rank's last output when it tears the job down, so the code counts too.
  if (contains(v.output, "rbc: interference:") || v.exit_code == kInterferenceExitCode) {
    v.kind = "interference";
  } else if (contains(v.output, "HANG:")) {
    v.kind = "hang";
  } else if (contains(v.output, "DEADLOCK")) {
    v.kind = "deadlock";
  } else if (contains(v.output, "bad scenario")) {
    v.kind = "bad scenario";
  } else if (contains(v.output, " FAIL: ")) {
    v.kind = "check failed";
  } else if (v.exit_code != 0) {
    v.kind = "crash";
  } else if (v.digest.empty()) {
    v.kind = "no verdict";
  } else {
    v.kind = "ok";
  }
  v.ok = v.kind == "ok" && v.exit_code == 0;
  return v;
}

std::string replay_command(const Job& job) {
  std::string prefix;
  std::string platform = job.platform.path;
  if (!job.platform.xml.empty()) {
    platform = "/tmp/janus-replay-platform.xml";
    std::string escaped;
    for (char c : job.platform.xml) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
    prefix = "printf '" + escaped + "' > " + platform + " && ";
  }
  const std::string root = runfiles_root();
  const std::string program = resolved(root + "/" + program_file(job.program, job.backend));
  return prefix + shell_join(command(job, "sim/run_ranks.sh", program, platform));
}

std::string report(const Job& job, const Verdict& v) {
  std::ostringstream out;
  out << "scenario " << v.kind << " (exit code " << v.exit_code << ") on " << name(job.backend) << " with "
      << job.np << " ranks, platform " << job.platform.description << "\n";
  std::istringstream lines(v.output);
  std::string line;
  std::vector<std::string> all, notable;
  while (std::getline(lines, line)) {
    all.push_back(line);
    if (contains(line, "FAIL") || contains(line, "interference") || contains(line, "HANG") ||
        contains(line, "DEADLOCK") || contains(line, "ABORT") || contains(line, "bad scenario") ||
        contains(line, "rror")) {
      notable.push_back(line);
    }
  }
  out << "--- notable output lines:\n";
  for (std::size_t i = 0; i < notable.size() && i < 25; ++i) out << notable[i] << "\n";
  out << "--- last lines of output:\n";
  for (std::size_t i = all.size() > 12 ? all.size() - 12 : 0; i < all.size(); ++i) out << all[i] << "\n";
  out << "--- replay (from the workspace root; the program path is this build's):\n" << replay_command(job) << "\n";
  return out.str();
}

void Stats::count(int np, bool failed, double seconds) {
  ++runs;
  largest_np = std::max(largest_np, np);
  if (failing_runs > 0) {
    ++runs_after_failure;
    seconds_after_failure += seconds;
  }
  if (failed) ++failing_runs;
}

Job rbc_job(const Scenario& s, Backend backend, const std::string& program, const Budget& budget) {
  Job job;
  job.backend = backend;
  job.program = program;
  job.np = s.np;
  job.tokens = to_tokens(s);
  job.summary = std::to_string(s.comms.size()) + " comms, " + std::to_string(s.colls.size()) + " collectives, " +
                std::to_string(s.messages.size()) + " messages, " + std::to_string(s.bad.size()) + " bad calls";
  job.platform = default_platform();
  job.timeout_seconds = budget.timeout_seconds(backend, s.np);
  return job;
}

Job sort_job(const SortScenario& s, Backend backend, const Budget& budget) {
  Job job;
  job.backend = backend;
  job.program = "sort_scenario";
  job.np = s.np;
  job.tokens = to_tokens(s);
  job.summary = s.algorithm + "/" + s.layer + " " + s.distribution + " n/p=" + std::to_string(s.n_per_pe) + " " + s.type +
                " on " + std::to_string(sort_members(s).size()) + " ranks";
  job.platform = default_platform();
  job.timeout_seconds = budget.timeout_seconds(backend, s.np) + (budget.soak ? 300 : 60);
  return job;
}

Verdict run_case(const Job& job, Stats& stats) {
  if (stats.budget_spent()) {
    Verdict skipped;
    skipped.ok = true;
    skipped.kind = "skipped (shrink budget spent)";
    return skipped;
  }
  const auto start = std::chrono::steady_clock::now();
  Verdict v = run_job(job);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  stats.count(job.np, !v.ok, took.count());
  std::cout << "[props]   run " << stats.runs << (stats.failing_runs > (v.ok ? 0 : 1) ? " (shrinking)" : "") << ": "
            << name(job.backend) << " np=" << job.np << " " << job.summary << ": " << v.kind << " in " << took.count()
            << " s" << std::endl;
  if (!v.ok || took.count() > 10) std::cout << "[props]     " << join(job.tokens) << std::endl;
  if (!v.ok) {
    stats.last_failure = report(job, v);
    RC_FAIL(stats.last_failure);
  }
  return v;
}

rc::detail::TestResult check_property(const std::string& name, Backend backend, int cases, Stats& stats,
                                      const std::function<void()>& property) {
  const rc::detail::Configuration& config = rc::detail::configuration();
  rc::detail::TestParams params = config.testParams;
  const std::string rc_params = env("RC_PARAMS");
  const Budget b = budget();
  if (!contains(rc_params, "max_success")) params.maxSuccess = cases;
  if (!contains(rc_params, "seed") && !b.soak) params.seed = fnv(name);
  if (stats.shrink_budget == 0) stats.shrink_budget = b.soak ? 400 : 60;
  if (stats.shrink_seconds == 0) stats.shrink_seconds = b.soak ? 3600 : 150;
  std::cout << "[props] " << name << " on " << props::name(backend) << ": " << params.maxSuccess
            << " cases, seed " << params.seed << (b.soak ? " (soak mode)" : "") << "; replay this property with "
            << "RC_PARAMS=\"seed=" << params.seed << "\"" << std::endl;
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  metadata.description = name;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty([&] { property(); }), metadata, params);
  int passed = 0;
  if (result.template is<rc::detail::SuccessResult>()) passed = result.template get<rc::detail::SuccessResult>().numSuccess;
  if (result.template is<rc::detail::FailureResult>()) passed = result.template get<rc::detail::FailureResult>().numSuccess;
  std::cout << "[props] " << name << " on " << props::name(backend) << ": " << passed << " cases passed, "
            << stats.runs << " scenario runs, largest p = " << stats.largest_np << ", seed " << params.seed
            << std::endl;
  if (!result.template is<rc::detail::SuccessResult>() && !stats.last_failure.empty()) {
    std::cout << "[props] " << name << ": the smallest failing scenario found:\n" << stats.last_failure << std::endl;
  }
  return result;
}

void expect_success(const rc::detail::TestResult& result) {
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  if (result.template is<rc::detail::SuccessResult>()) {
    std::cout << message.str() << std::endl;
  } else {
    ADD_FAILURE() << message.str();
  }
}

void showValue(const Scenario& s, std::ostream& os) { os << describe(s); }
void showValue(const SortScenario& s, std::ostream& os) { os << join(to_tokens(s)); }

}  // namespace props
