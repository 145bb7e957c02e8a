#include "testing/check.hpp"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <thread>

#ifdef JANUS_SMPI
#include <simgrid/s4u/Engine.hpp>
#endif

namespace janus::testing {

namespace {
// Beyond this many failures a rank only counts them, so a broken run at 1024 ranks stays
// readable.
constexpr long long kPrintedFailuresPerRank = 20;
}  // namespace

Checker::Checker(MPI_Comm comm, std::string test_name, std::FILE* out)
    : comm_(comm), name_(std::move(test_name)), out_(out) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Checker::record_failure(const std::string& message) {
  ++failures_;
  if (failures_ > kPrintedFailuresPerRank) return;
  std::string line = "[" + name_ + "] rank " + std::to_string(rank_) + "/" +
                     std::to_string(size_) + " FAIL: ";
  for (const std::string& c : context_) line += c + " | ";
  line += message;
  if (failures_ == kPrintedFailuresPerRank) line += " (further failures on this rank not printed)";
  line += "\n";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void Checker::abort(const std::string& why) {
  std::string line = "[" + name_ + "] rank " + std::to_string(rank_) + "/" +
                     std::to_string(size_) + " ABORT: ";
  for (const std::string& c : context_) line += c + " | ";
  line += why + "\n";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
#ifdef JANUS_SMPI
  std::_Exit(3);  // SMPI's MPI_Abort ends the simulation with exit code 0
#else
  // MPICH's launcher can tear down its output forwarding before it has passed on what this rank
  // wrote just now (the abort's reason went missing in 3 of 40 runs): give it a moment first.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);
#endif
}

int Checker::finish() {
  long long local[2] = {checks_, failures_};
  long long total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, comm_);
  const bool passed = total[1] == 0 && total[0] > 0;
  if (rank_ == 0) {
    std::fprintf(out_, "[%s] %s on %d ranks: %lld checks, %lld failures%s\n", name_.c_str(),
                 passed ? "PASSED" : "FAILED", size_, total[0], total[1],
                 total[0] == 0 ? " (nothing was checked)" : "");
    std::fflush(out_);
  }
  return passed ? 0 : 1;
}

void fail_on_simulated_deadlock(const std::string& test_name) {
#ifdef JANUS_SMPI
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;  // one callback per simulation is enough
  simgrid::s4u::Engine::on_deadlock_cb([test_name] {
    std::fprintf(stdout, "[%s] DEADLOCK: the simulation stopped with ranks still waiting\n",
                 test_name.c_str());
    std::fflush(stdout);
    std::_Exit(2);
  });
#else
  (void)test_name;
#endif
}

int run_test(int argc, char** argv, const std::string& test_name,
             const std::function<void(Checker&)>& body) {
  MPI_Init(&argc, &argv);
  fail_on_simulated_deadlock(test_name);
  int code = 1;
  {
    Checker checker(MPI_COMM_WORLD, test_name);
    try {
      body(checker);
    } catch (const std::exception& e) {
      checker.abort(std::string("unexpected exception: ") + e.what());
    }
    code = checker.finish();
  }
  MPI_Finalize();
  return code;
}

}  // namespace janus::testing
