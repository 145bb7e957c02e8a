#include "bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace bench {

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// The environment's JSON objects are pasted into records; insist on the outer braces so a
// mistake there shows up as a clear error, not as broken output.
std::string require_object(const std::string& text, const char* what) {
  std::size_t b = text.find_first_not_of(" \t\n");
  std::size_t e = text.find_last_not_of(" \t\n");
  if (b == std::string::npos || text[b] != '{' || text[e] != '}') {
    throw std::invalid_argument(std::string(what) + " must be a JSON object, got '" + text + "'");
  }
  return text.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::int64_t parse_int(const std::string& key, const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) {
    throw std::invalid_argument("--" + key + ": '" + text + "' is not an integer");
  }
  return value;
}

}  // namespace

Args::Args(int argc, char** argv, const std::vector<std::string>& known) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      throw std::invalid_argument("unexpected argument '" + arg + "' (options are --key=value)");
    }
    std::size_t eq = arg.find('=');
    std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string value = eq == std::string::npos ? "1" : arg.substr(eq + 1);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "--" : ", --") + k;
      throw std::invalid_argument("unknown option --" + key + "; known: " + list);
    }
    values_[key] = value;
  }
}

std::string Args::get(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

int Args::get_int(const std::string& key, int fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : static_cast<int>(parse_int(key, it->second));
}

std::vector<std::string> Args::get_list(const std::string& key,
                                        const std::vector<std::string>& fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  auto parts = split_commas(it->second);
  if (parts.empty()) throw std::invalid_argument("--" + key + " needs at least one value");
  return parts;
}

std::vector<std::int64_t> Args::get_int_list(const std::string& key,
                                             const std::vector<std::int64_t>& fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::vector<std::int64_t> out;
  for (const auto& part : split_commas(it->second)) {
    std::size_t dots = part.find("..");
    if (dots == std::string::npos) {
      out.push_back(parse_int(key, part));
      continue;
    }
    std::int64_t lo = parse_int(key, part.substr(0, dots));
    std::int64_t hi = parse_int(key, part.substr(dots + 2));
    if (lo < 1 || hi < lo) {
      throw std::invalid_argument("--" + key + ": range '" + part + "' needs 1 <= a <= b");
    }
    for (std::int64_t v = lo; v <= hi; v *= 2) out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("--" + key + " needs at least one value");
  return out;
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Measurement::Measurement(MPI_Comm world, int warmup, int repetitions)
    : world_(world), warmup_(warmup), repetitions_(repetitions) {
  if (warmup < 0) throw std::invalid_argument("--warmup must be >= 0");
  if (repetitions < 1) throw std::invalid_argument("--reps must be >= 1");
  MPI_Comm_rank(world, &rank_);
}

void Measurement::synchronize() {
  // MPI_Barrier (SMPI: recursive doubling), as in the paper: every PE leaves at about the same
  // time. A cheaper reduce + broadcast was tried and rejected: it releases PEs in binomial-tree
  // order, which pre-positions them for tree-shaped operations (a broadcast then looks nearly
  // free) and so understates their time.
  MPI_Barrier(world_);
}

Summary Measurement::run(const std::function<void()>& op, const std::function<void()>& setup,
                         const std::function<void()>& teardown) {
  std::vector<double> unused;
  return run_phased(
      [&op]() {
        op();
        return std::vector<double>();
      },
      unused, setup, teardown);
}

// Real MPI: every measurement gets at least this many warm-up rounds, whatever --warmup says.
// On the development VM a measurement's first rounds ran slower in each new record, not only
// in a program's first: with one warm-up round (what `janus validate` passed for sorts), Open
// MPI 4.1.4 at np = 2 took 3.95 against 3.13 us for hypercube quicksort at n/p = 1 and 2.73
// against 2.42 for JQuick at n/p = 16; MPICH 4.0.2 (ch4:ucx) took 4.0 against 2.6 us for JQuick
// at n/p = 4 when it was not the program's first record. A program's first record under MPICH
// needed the most: JQuick at n/p = 1 took 3.4-3.8 us after 60 warm-up rounds and 2.3-2.5 after
// 80 to 400. Under SMPI nothing warms up, and extra rounds would cost simulation time at scale.
#ifdef JANUS_SMPI
constexpr int kMinWarmup = 0;
#else
constexpr int kMinWarmup = 100;
#endif

Summary Measurement::run_phased(const std::function<std::vector<double>()>& op,
                                std::vector<double>& phase_medians,
                                const std::function<void()>& setup,
                                const std::function<void()>& teardown) {
  std::vector<double> times;
  std::vector<std::vector<double>> phases;
  std::size_t phase_count = 0;
  const int warmup = std::max(warmup_, kMinWarmup);
  for (int round = 0; round < warmup + repetitions_; ++round) {
    if (setup) setup();
    synchronize();
    const double start = MPI_Wtime();
    std::vector<double> local = op();
    const double elapsed = MPI_Wtime() - start;
    if (teardown) teardown();
    // The reduction below needs the same count on every PE and in every round; a program
    // whose op() varies it is broken, so fail loudly rather than reduce mismatched counts.
    if (round == 0) phase_count = local.size();
    if (local.size() != phase_count) throw std::logic_error("op() changed its number of phase times");
    local.insert(local.begin(), elapsed);
    const int count = static_cast<int>(local.size());
    std::vector<double> global(local.size());
    MPI_Reduce(local.data(), global.data(), count, MPI_DOUBLE, MPI_MAX, 0, world_);
    if (round < warmup || rank_ != 0) continue;
    times.push_back(global[0]);
    phases.emplace_back(global.begin() + 1, global.end());
  }
  Summary summary;
  summary.warmup = warmup;  // the rounds this record actually ran
  summary.repetitions = repetitions_;
  phase_medians.clear();
  if (rank_ != 0) return summary;
  summary.median = median(times);
  summary.min = *std::min_element(times.begin(), times.end());
  summary.max = *std::max_element(times.begin(), times.end());
  for (std::size_t i = 0; i < phases.front().size(); ++i) {
    std::vector<double> column;
    for (const auto& row : phases) column.push_back(row[i]);
    phase_medians.push_back(median(column));
  }
  return summary;
}

double Measurement::host_cost(const std::function<void()>& op,
                              const std::function<void()>& teardown, int rounds) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < rounds; ++i) {
    const auto start = std::chrono::steady_clock::now();
    op();
    const auto stop = std::chrono::steady_clock::now();
    if (teardown) teardown();
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
  }
  double worst = 0;
  MPI_Reduce(&best, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, world_);
  return rank_ == 0 ? worst : 0.0;
}

Record& Record::add(const std::string& key, const std::string& value) {
  members_.emplace_back(key, json_string(value));
  return *this;
}

Record& Record::add(const std::string& key, std::int64_t value) {
  members_.emplace_back(key, std::to_string(value));
  return *this;
}

Record& Record::add(const std::string& key, double value) {
  members_.emplace_back(key, json_number(value));
  return *this;
}

Record& Record::add_raw(const std::string& key, const std::string& json) {
  members_.emplace_back(key, json);
  return *this;
}

Record& Record::add_summary(const Summary& summary) {
  add("warmup", summary.warmup);
  add("repetitions", summary.repetitions);
  add("median_s", summary.median);
  add("min_s", summary.min);
  add("max_s", summary.max);
  return *this;
}

std::string Record::json() const {
  std::string out = "{";
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (i > 0) out += ",";
    const std::string& value = members_[i].second;
    if (members_[i].first.empty()) {
      // Pasted members of an object (the environment's extra context), braces stripped.
      out += value;
    } else {
      out += json_string(members_[i].first) + ":" + value;
    }
  }
  return out + "}";
}

const char* backend_name() {
#ifdef JANUS_SMPI
  return "smpi";
#else
  return "mpi";
#endif
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Get_library_version failed");
  }
  std::string line;
  for (int i = 0; i < length && text[i] != '\0' && text[i] != '\n'; ++i) {
    const bool blank = text[i] == ' ' || text[i] == '\t';
    if (blank && (line.empty() || line.back() == ' ')) continue;
    line += blank ? ' ' : text[i];
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line.empty() ? std::string("unknown") : line;
}

std::vector<std::string> common_options() {
  return {"platform", "rev", "warmup", "reps", "mpi-algorithms", "help"};
}

Context::Context(const Args& args, MPI_Comm world) : world_(world) {
  MPI_Comm_rank(world, &rank_);
  MPI_Comm_size(world, &size_);
  platform_ = args.get("platform", env_or("JANUS_BENCH_PLATFORM", "unspecified"));
  platform_params_ =
      require_object(env_or("JANUS_BENCH_PLATFORM_PARAMS", "{}"), "JANUS_BENCH_PLATFORM_PARAMS");
  rev_ = args.get("rev", env_or("JANUS_BENCH_REV", "unknown"));
  mpi_library_ = mpi_library_version();
  std::string extra = require_object(env_or("JANUS_BENCH_EXTRA", "{}"), "JANUS_BENCH_EXTRA");
  extra_ = extra.substr(1, extra.size() - 2);
  if (extra_.find_first_not_of(" \t\n") == std::string::npos) extra_.clear();
  for (const auto& item : split_commas(args.get("mpi-algorithms", ""))) {
    std::size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      throw std::invalid_argument("--mpi-algorithms: '" + item +
                                  "' is not collective:algorithm (e.g. bcast:binomial_tree)");
    }
    algorithms_[item.substr(0, colon)] = item.substr(colon + 1);
  }
}

Record Context::record(const std::string& benchmark) const {
  Record r;
  r.add("benchmark", benchmark)
      .add("backend", backend_name())
      .add("platform", platform_)
      .add_raw("platform_params", platform_params_)
      .add("rev", rev_)
      .add("mpi_library", mpi_library_)
      .add("p", size_);
  if (!extra_.empty()) r.add_raw("", extra_);
  return r;
}

void Context::emit(const Record& record) const {
  if (rank_ != 0) return;
  std::string line = "JANUS_BENCH " + record.json() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

void Context::note(const std::string& text) const {
  if (rank_ != 0) return;
  std::fprintf(stderr, "bench: %s\n", text.c_str());
  std::fflush(stderr);
}

std::string Context::mpi_algorithm(const std::string& collective) const {
  auto it = algorithms_.find(collective);
  return it == algorithms_.end() ? std::string("library default") : it->second;
}

int main_with_mpi(int argc, char** argv, const std::vector<std::string>& options,
                  const std::function<void(const Args&, const Context&)>& body) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    std::vector<std::string> known = common_options();
    known.insert(known.end(), options.begin(), options.end());
    Args args(argc, argv, known);
    if (args.has("help")) {
      if (rank == 0) {
        std::string list;
        for (const auto& k : known) list += " [--" + k + "=...]";
        std::fprintf(stderr, "usage: %s%s\n", argv[0], list.c_str());
      }
    } else {
      Context context(args, MPI_COMM_WORLD);
      body(args, context);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: error on rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  MPI_Finalize();
  return 0;
}

}  // namespace bench
