#pragma once

// What every Janus benchmark program shares: command-line options, the measurement loop
// (barrier, time one operation on every PE, maximum over PEs, median of the repetitions after
// warm-up) and the output format (one JSON record per measurement, one line each, prefixed
// with "JANUS_BENCH " so the driver can pick them out of smpirun's or mpirun's output).
//
// Records carry the run's context, which the driver passes through the environment (program
// arguments under smpirun must not contain spaces or quotes):
//   JANUS_BENCH_PLATFORM         platform name (e.g. "supermuc", "openmpi-local")
//   JANUS_BENCH_PLATFORM_PARAMS  JSON object of the platform's parameters
//   JANUS_BENCH_REV              the project's git revision
//   JANUS_BENCH_EXTRA            JSON object whose members are copied into every record
// --platform=NAME and --rev=REV on the command line override the first and third. Every record
// also names the MPI library it ran on ("mpi_library", the first line of
// MPI_Get_library_version), so records of Open MPI, MPICH and SMPI runs can be told apart.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bench {

// --key=value options (a bare --flag means "1"). Unknown keys are an error, so a typo never
// silently runs the default.
class Args {
 public:
  Args(int argc, char** argv, const std::vector<std::string>& known);

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback) const;
  int get_int(const std::string& key, int fallback) const;
  // Comma-separated lists; "a..b" in an integer list means the powers of two from a to b.
  std::vector<std::string> get_list(const std::string& key,
                                    const std::vector<std::string>& fallback) const;
  std::vector<std::int64_t> get_int_list(const std::string& key,
                                         const std::vector<std::int64_t>& fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

// Times of one measurement: per repetition, the maximum over PEs (valid on rank 0 only).
struct Summary {
  int warmup = 0;
  int repetitions = 0;
  double median = 0;
  double min = 0;
  double max = 0;
};

// Median of a non-empty list (mean of the two middle values for an even count).
double median(std::vector<double> values);

// Runs one measurement collectively over `world`: for each of warmup + repetitions rounds,
// calls setup() (untimed), synchronises (synchronize()), times op() on every PE, calls
// teardown() (untimed) and reduces the local time with MAX to rank 0. Rank 0 gets the summary
// of the timed rounds; other ranks get zeros.
class Measurement {
 public:
  Measurement(MPI_Comm world, int warmup, int repetitions);

  Summary run(const std::function<void()>& op, const std::function<void()>& setup = {},
              const std::function<void()>& teardown = {});

  // Like run(), but op() also reports named phase times of this PE (seconds); each phase is
  // reduced with MAX over PEs and summarised by its median over the timed rounds.
  Summary run_phased(const std::function<std::vector<double>()>& op,
                     std::vector<double>& phase_medians,
                     const std::function<void()>& setup = {},
                     const std::function<void()>& teardown = {});

  // Host CPU cost of op() on this machine: each PE times `rounds` calls with a steady clock
  // (teardown() untimed in between) and keeps its fastest, which filters out preemption on a
  // busy host; returns the maximum over PEs on rank 0. For purely local operations (an RBC
  // split) under SMPI with computation not charged, whose simulated time is therefore ~0.
  double host_cost(const std::function<void()>& op, const std::function<void()>& teardown,
                   int rounds);

  // A barrier (MPI_Barrier; see harness.cpp for why not something cheaper).
  void synchronize();

  int warmup() const { return warmup_; }
  int repetitions() const { return repetitions_; }

 private:
  MPI_Comm world_;
  int rank_;
  int warmup_;
  int repetitions_;
};

// One JSON object, built member by member; print() writes it as one line on rank 0.
class Record {
 public:
  Record& add(const std::string& key, const std::string& value);
  Record& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  Record& add(const std::string& key, std::int64_t value);
  Record& add(const std::string& key, int value) { return add(key, std::int64_t{value}); }
  Record& add(const std::string& key, double value);
  Record& add_raw(const std::string& key, const std::string& json);
  Record& add_summary(const Summary& summary);

  std::string json() const;

 private:
  std::vector<std::pair<std::string, std::string>> members_;
};

// "mpi" or "smpi": which library this binary was built against.
const char* backend_name();

// The first line of MPI_Get_library_version, blanks collapsed (e.g. "MPICH Version: 4.0.2",
// "Open MPI v4.1.4, package: Debian OpenMPI, ...").
std::string mpi_library_version();

// Everything a benchmark program needs to describe its records: the run context from the
// environment and arguments, the world size and rank.
class Context {
 public:
  Context(const Args& args, MPI_Comm world);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm world() const { return world_; }

  // A record with benchmark, backend, platform, platform_params, rev, p and the extra members
  // filled in.
  Record record(const std::string& benchmark) const;
  // Prints the record as "JANUS_BENCH {...}" on rank 0 (no-op elsewhere).
  void emit(const Record& record) const;
  // Progress for humans, on rank 0, to stderr.
  void note(const std::string& text) const;

  // The MPI collective algorithm the driver configured for `collective` (from
  // --mpi-algorithms=bcast:binomial_tree,reduce:binomial,...), or "library default".
  std::string mpi_algorithm(const std::string& collective) const;

 private:
  MPI_Comm world_;
  int rank_ = 0;
  int size_ = 1;
  std::string platform_;
  std::string platform_params_;
  std::string rev_;
  std::string extra_;
  std::string mpi_library_;
  std::map<std::string, std::string> algorithms_;
};

// Option names every program accepts (in addition to its own).
std::vector<std::string> common_options();

// Runs body(args) between MPI_Init and MPI_Finalize and turns an escaped exception into a
// message and MPI_Abort, so a bad option fails every rank clearly instead of hanging.
int main_with_mpi(int argc, char** argv, const std::vector<std::string>& options,
                  const std::function<void(const Args&, const Context&)>& body);

}  // namespace bench
