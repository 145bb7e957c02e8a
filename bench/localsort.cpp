// Local sorting kernels against std::sort, in one run (ratios are what to read; the machine
// is shared). One JSON object per line:
//   {"bench":"localsort","type":"double","shape":"uniform","n":65536,"reps":..,
//    "std_sort_s":..,"localsort_s":..,"speedup":..}
// Times are the minimum over `reps` runs of each, alternated so that noise hits both, on inputs
// that change from one repetition to the next (up to 8 of them per point).
// --merge measures localsort::merge against std::merge instead, on two sorted runs of n / 2
// uniform doubles each ({"bench":"merge",...,"std_merge_s":..,"localsort_s":..}): the mean over
// repetitions that cycle through 8 different inputs, so that no branch predictor learns one.
// --partition measures localsort::partition against std::partition the same way, n uniform
// doubles split at 0.5 ({"bench":"partition",...,"std_partition_s":..,"localsort_s":..}).
//
//   localsort [--min-log 10] [--max-log 24] [--budget 0.5] [--merge | --partition]
// --budget: seconds of std::sort (std::merge, std::partition) per point that set the repetitions (>= 3).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "localsort/localsort.hpp"
#include "localsort/merge.hpp"
#include "localsort/partition.hpp"

namespace {

using Pair = std::pair<std::int64_t, std::int64_t>;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class T>
T draw(std::mt19937_64& rng, std::uint64_t range) {
  const std::uint64_t x = range ? rng() % range : rng();
  if constexpr (std::is_same<T, double>::value) {
    return range ? static_cast<double>(x) : std::uniform_real_distribution<double>(0, 1)(rng);
  } else if constexpr (std::is_same<T, Pair>::value) {
    return Pair(static_cast<std::int64_t>(x), static_cast<std::int64_t>(rng()));
  } else {
    return static_cast<T>(x);
  }
}

template <class T>
std::vector<T> input(const std::string& shape, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  const std::uint64_t range = shape == "few" ? 16 : shape == "equal" ? 1 : 0;
  for (auto& x : v) x = draw<T>(rng, range);
  if (shape == "sorted") std::sort(v.begin(), v.end());
  if (shape == "reverse") std::sort(v.begin(), v.end(), std::greater<T>());
  return v;
}

// Repetitions cycle through up to 8 different inputs (at most 256 MiB of them): sorting one
// input again and again lets the branch predictor learn it, which flatters small sizes.
template <class T>
void measure(const char* type, const std::string& shape, std::size_t n, double budget) {
  const std::size_t count = std::max<std::size_t>(1, std::min<std::size_t>(8, (std::size_t(1) << 28) / (n * sizeof(T))));
  std::vector<std::vector<T>> originals;
  for (std::size_t k = 0; k < count; ++k) originals.push_back(input<T>(shape, n, n * 31 + shape.size() + 1000003 * k));
  std::vector<T> a, b;
  double best_std = 1e30, best_ours = 1e30;
  int reps = 0;
  double spent = 0;
  while (reps < 3 || (spent < budget && reps < 1000)) {
    const std::vector<T>& original = originals[static_cast<std::size_t>(reps) % count];
    a = original;
    double t0 = now();
    std::sort(a.begin(), a.end());
    const double t_std = now() - t0;
    b = original;
    t0 = now();
    localsort::sort(b.data(), b.data() + n, std::less<T>());
    const double t_ours = now() - t0;
    if (a != b && !std::is_same<T, double>::value) {
      std::fprintf(stderr, "localsort: wrong result (%s %s n=%zu)\n", type, shape.c_str(), n);
      std::exit(1);
    }
    if (!std::is_sorted(b.begin(), b.end())) {
      std::fprintf(stderr, "localsort: unsorted result (%s %s n=%zu)\n", type, shape.c_str(), n);
      std::exit(1);
    }
    best_std = std::min(best_std, t_std);
    best_ours = std::min(best_ours, t_ours);
    spent += t_std;
    ++reps;
  }
  std::printf(
      "{\"bench\":\"localsort\",\"type\":\"%s\",\"shape\":\"%s\",\"n\":%zu,\"reps\":%d,"
      "\"std_sort_s\":%.9g,\"localsort_s\":%.9g,\"speedup\":%.4g}\n",
      type, shape.c_str(), n, reps, best_std, best_ours, best_std / best_ours);
  std::fflush(stdout);
}

// Inputs per point that the repetitions of measure_merge and measure_partition cycle through,
// so that no branch predictor learns one.
constexpr int kInputs = 8;

// Times std_call(i) and ours_call(i) alternately on input i = repetition % kInputs (prepare(i),
// untimed, first), until std_call has taken `budget` seconds; stops the program when correct()
// says the last pair disagreed. Prints the mean times as one JSON line.
template <class Prepare, class Std, class Ours, class Correct>
void alternate(const char* bench, const char* std_field, std::size_t n, double budget,
               Prepare prepare, Std std_call, Ours ours_call, Correct correct) {
  double sum_std = 0, sum_ours = 0;
  int reps = 0;
  while (reps < kInputs || (sum_std < budget && reps < 100000)) {
    const int input = reps % kInputs;
    prepare(input);
    double t0 = now();
    std_call(input);
    sum_std += now() - t0;
    t0 = now();
    ours_call(input);
    sum_ours += now() - t0;
    if (!correct()) {
      std::fprintf(stderr, "localsort: wrong %s (n=%zu)\n", bench, n);
      std::exit(1);
    }
    ++reps;
  }
  std::printf(
      "{\"bench\":\"%s\",\"type\":\"double\",\"shape\":\"uniform\",\"n\":%zu,\"reps\":%d,"
      "\"%s\":%.9g,\"localsort_s\":%.9g,\"speedup\":%.4g}\n",
      bench, n, reps, std_field, sum_std / reps, sum_ours / reps, sum_std / sum_ours);
  std::fflush(stdout);
}

std::vector<double> uniform_doubles(std::size_t n, std::mt19937_64& rng) {
  std::vector<double> v(n);
  for (auto& x : v) x = std::uniform_real_distribution<double>(0, 1)(rng);
  return v;
}

void measure_merge(std::size_t n, double budget) {
  std::vector<std::vector<double>> runs(2 * kInputs);
  std::mt19937_64 rng(n);
  for (auto& run : runs) {
    run = uniform_doubles(n / 2, rng);
    std::sort(run.begin(), run.end());
  }
  std::vector<double> a(n), b(n);
  const auto x = [&](int i) -> const std::vector<double>& { return runs[static_cast<std::size_t>(2 * i)]; };
  const auto y = [&](int i) -> const std::vector<double>& { return runs[static_cast<std::size_t>(2 * i + 1)]; };
  alternate(
      "merge", "std_merge_s", n, budget, [](int) {},
      [&](int i) { std::merge(x(i).begin(), x(i).end(), y(i).begin(), y(i).end(), a.begin()); },
      [&](int i) {
        localsort::merge(x(i).data(), x(i).size(), y(i).data(), y(i).size(), b.data(), std::less<double>());
      },
      [&] { return a == b; });
}

void measure_partition(std::size_t n, double budget) {
  std::vector<std::vector<double>> inputs(kInputs);
  std::mt19937_64 rng(n);
  for (auto& v : inputs) v = uniform_doubles(n, rng);
  const auto small = [](double x) { return x < 0.5; };
  std::vector<double> a(n), b(n);
  std::ptrdiff_t split_std = 0, split_ours = 0;
  alternate(
      "partition", "std_partition_s", n, budget,
      [&](int i) {
        const auto& v = inputs[static_cast<std::size_t>(i)];
        std::copy(v.begin(), v.end(), a.begin());
        std::copy(v.begin(), v.end(), b.begin());
      },
      [&](int) { split_std = std::partition(a.begin(), a.end(), small) - a.begin(); },
      [&](int) { split_ours = localsort::partition(b.data(), b.data() + n, small) - b.data(); },
      [&] { return split_std == split_ours && std::is_partitioned(b.begin(), b.end(), small); });
}

}  // namespace

int main(int argc, char** argv) {
  int min_log = 10, max_log = 24;
  double budget = 0.5;
  bool merge = false, partition = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--merge" || flag == "--partition") {
      (flag == "--merge" ? merge : partition) = true;
      --i;
    } else if (i + 1 >= argc) {
      std::fprintf(stderr, "localsort: %s needs a value\n", flag.c_str());
      return 2;
    } else if (flag == "--min-log") {
      min_log = std::atoi(argv[i + 1]);
    } else if (flag == "--max-log") {
      max_log = std::atoi(argv[i + 1]);
    } else if (flag == "--budget") {
      budget = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: localsort [--min-log L] [--max-log L] [--budget S] [--merge | --partition]\n");
      return 2;
    }
  }
  if (merge || partition) {
    for (int lg = min_log; lg <= max_log; lg += 2) {
      (merge ? measure_merge : measure_partition)(std::size_t(1) << lg, budget);
    }
    return 0;
  }
  const char* shapes[] = {"uniform", "sorted", "reverse", "equal", "few"};
  for (int lg = min_log; lg <= max_log; lg += 2) {
    const std::size_t n = std::size_t(1) << lg;
    for (const char* shape : shapes) {
      measure<double>("double", shape, n, budget);
      measure<std::int64_t>("int64", shape, n, budget);
      measure<Pair>("pair", shape, n, budget);
    }
  }
  return 0;
}
