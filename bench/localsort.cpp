// Local sorting kernels against std::sort, in one run (ratios are what to read; the machine
// is shared). One JSON object per line:
//   {"bench":"localsort","type":"double","shape":"uniform","n":65536,"reps":..,
//    "std_sort_s":..,"localsort_s":..,"speedup":..}
// Times are the minimum over `reps` runs of each, alternated so that noise hits both.
//
//   localsort [--min-log 10] [--max-log 24] [--budget 0.5]
// --budget: seconds of std::sort per (type, shape, n) point that set the repetitions (>= 1).

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

template <class T>
void measure(const char* type, const std::string& shape, std::size_t n, double budget) {
  const std::vector<T> original = input<T>(shape, n, n * 31 + shape.size());
  std::vector<T> a, b;
  double best_std = 1e30, best_ours = 1e30;
  int reps = 0;
  double spent = 0;
  while (reps < 3 || (spent < budget && reps < 1000)) {
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

}  // namespace

int main(int argc, char** argv) {
  int min_log = 10, max_log = 24;
  double budget = 0.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--min-log") {
      min_log = std::atoi(argv[i + 1]);
    } else if (flag == "--max-log") {
      max_log = std::atoi(argv[i + 1]);
    } else if (flag == "--budget") {
      budget = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: localsort [--min-log L] [--max-log L] [--budget S]\n");
      return 2;
    }
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
