// Scenario program for the sort properties: generates an input (core/inputs) on a range of
// MPI_COMM_WORLD, sorts it with JQuick or hypercube quicksort on the chosen layer, sorts the
// same input again with the same seed, and checks: locally sorted, sorted across PE boundaries,
// an exact permutation of the input (gathered and compared at the first PE), the same output
// both times, and for JQuick the exact balance floor(n/p) + [i < n mod p]; for hypercube
// quicksort the PEs beyond the largest power of two <= p end empty. Rank 0 prints
// "SCENARIO OK digest=<hex>" (a hash of the sorted output) only if every rank passed.
//
//   sort_scenario np=6 seed=9 algo=jquick layer=rbc dist=all-to-one n=100 type=f64 range=1.5.2 gather=17
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hypercube/hypercube.hpp"
#include "inputs/inputs.hpp"
#include "jquick/jquick.hpp"
#include "rbc/rbc.hpp"
#include "scenario/sort_scenario.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
MPI_Datatype mpi_type_of() {
  if (std::is_same<T, std::int32_t>::value) return MPI_INT32_T;
  if (std::is_same<T, std::int64_t>::value) return MPI_INT64_T;
  return MPI_DOUBLE;
}

// One sort of `data` as the scenario says, on the members' communicators.
template <class T>
void sort_once(std::vector<T>& data, const props::SortScenario& s, const rbc::RangeComm& range, MPI_Comm comm) {
  if (s.algorithm == "jquick") {
    jquick::Config config;
    config.seed = s.seed;
    if (s.gather_elements >= 0) config.gather_elements = s.gather_elements;
    if (s.layer == "rbc" || s.layer == "rbc-probe") {
      config.layer = jquick::Layer::rbc;
      config.wildcard = s.layer == "rbc" ? jquick::Wildcard::posted : jquick::Wildcard::probe;
      jquick::sort(data, mpi_type_of<T>(), range, std::less<T>(), config);
    } else {
      config.layer = s.layer == "mpi-split" ? jquick::Layer::mpi_split : jquick::Layer::mpi_create_group;
      jquick::sort(data, mpi_type_of<T>(), comm, std::less<T>(), config);
    }
  } else {
    hypercube::Options options;
    options.seed = s.seed;
    if (s.layer == "rbc") {
      hypercube::sort_rbc(data, range, options);
    } else {
      hypercube::sort_mpi(data, comm, hypercube::parse_comm_creation(s.layer), options);
    }
  }
}

template <class T>
std::uint64_t run(const props::SortScenario& s, Checker& check) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const std::vector<int> members = props::sort_members(s);
  const auto it = std::find(members.begin(), members.end(), world_rank);
  const int rank = it == members.end() ? -1 : static_cast<int>(it - members.begin());
  const int p = static_cast<int>(members.size());

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank >= 0 ? 0 : MPI_UNDEFINED, rank, &comm);
  const rbc::RangeComm range = rbc::RangeComm::from_mpi(MPI_COMM_WORLD).split(s.first, s.last, s.stride);
  check.equal(range.is_member(), rank >= 0, "membership of the sorting range");
  if (rank < 0) return 0;

  inputs::Params params;
  params.seed = s.seed;
  params.rank = rank;
  params.p = p;
  params.n_per_pe = s.n_per_pe;
  const inputs::Distribution distribution = inputs::parse_distribution(s.distribution);
  const std::vector<T> input = inputs::generate<T>(distribution, params);

  std::vector<T> out = input;
  sort_once(out, s, range, comm);
  std::vector<T> again = input;
  sort_once(again, s, range, comm);
  check.check(out == again, "a second sort with the same seed gave a different output on this PE");

  check.check(std::is_sorted(out.begin(), out.end()), "local output is not sorted");

  // Counts, boundaries and the balance.
  long long mine[3] = {static_cast<long long>(input.size()), static_cast<long long>(out.size()), 0};
  long long totals[3] = {0, 0, 0};
  MPI_Allreduce(mine, totals, 2, MPI_LONG_LONG, MPI_SUM, comm);
  check.equal(totals[1], totals[0], "elements after the sort (all PEs)");
  const long long n = totals[0];
  if (s.algorithm == "jquick") {
    const long long share = n / p + (rank < n % p ? 1 : 0);
    check.equal(static_cast<long long>(out.size()), share, "JQuick share of PE ", rank, " of ", p, " (n = ", n, ")");
  } else {
    int q = 1;
    while (2 * q <= p) q *= 2;
    if (rank >= q) check.equal(out.size(), std::size_t{0}, "hypercube: PE beyond the power-of-two subcube");
  }

  // Everything gathered at the first PE: the output in rank order must be the sorted input.
  std::vector<int> in_counts(p), out_counts(p);
  const int in_count = static_cast<int>(input.size()), out_count = static_cast<int>(out.size());
  MPI_Gather(&in_count, 1, MPI_INT, in_counts.data(), 1, MPI_INT, 0, comm);
  MPI_Gather(&out_count, 1, MPI_INT, out_counts.data(), 1, MPI_INT, 0, comm);
  std::vector<int> in_displs(p), out_displs(p);
  for (int r = 1; r < p; ++r) {
    in_displs[r] = in_displs[r - 1] + in_counts[r - 1];
    out_displs[r] = out_displs[r - 1] + out_counts[r - 1];
  }
  std::vector<T> all_in(rank == 0 ? n : 0), all_out(rank == 0 ? n : 0);
  MPI_Gatherv(input.data(), in_count, mpi_type_of<T>(), all_in.data(), in_counts.data(), in_displs.data(),
              mpi_type_of<T>(), 0, comm);
  MPI_Gatherv(out.data(), out_count, mpi_type_of<T>(), all_out.data(), out_counts.data(), out_displs.data(),
              mpi_type_of<T>(), 0, comm);
  std::uint64_t digest = 0;
  if (rank == 0) {
    std::sort(all_in.begin(), all_in.end());
    check.check(std::is_sorted(all_out.begin(), all_out.end()), "the output is not sorted across PE boundaries");
    check.equal_ranges(all_out, all_in, "output (concatenated in rank order) vs the sorted input");
    for (const T& x : all_out) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof x);
      digest = mix(digest, bits);
    }
    digest = mix(digest, static_cast<std::uint64_t>(n));
  }
  MPI_Comm_free(&comm);
  return digest;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  janus::testing::fail_on_simulated_deadlock("sort_scenario");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  props::SortScenario scenario;
  try {
    scenario = props::sort_from_tokens(std::vector<std::string>(argv + 1, argv + argc));
    if (scenario.np != size) throw std::invalid_argument("the scenario is for np=" + std::to_string(scenario.np));
    inputs::parse_distribution(scenario.distribution);
  } catch (const std::exception& e) {
    if (rank == 0) std::printf("sort_scenario: bad scenario: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  Checker check(MPI_COMM_WORLD, "sort_scenario");
  std::uint64_t digest = 0;
  try {
    Context c(check, scenario.algorithm, "/", scenario.layer, " ", scenario.distribution, " n/p=", scenario.n_per_pe,
              " ", scenario.type);
    if (scenario.type == "i32") {
      digest = run<std::int32_t>(scenario, check);
    } else if (scenario.type == "i64") {
      digest = run<std::int64_t>(scenario, check);
    } else {
      digest = run<double>(scenario, check);
    }
  } catch (const std::exception& e) {
    check.abort(std::string("unexpected exception: ") + e.what());
  }
  const int code = check.finish();
  // The first sorting PE holds the digest; hand it to world rank 0 for the verdict line.
  const int holder = scenario.first;
  unsigned long long d = digest;
  if (holder != 0) {
    if (rank == holder) MPI_Send(&d, 1, MPI_UNSIGNED_LONG_LONG, 0, 0, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(&d, 1, MPI_UNSIGNED_LONG_LONG, holder, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double end_time = MPI_Wtime();
  if (rank == 0 && code == 0) {
    std::printf("SCENARIO OK digest=%016llx simulated_time=%.9f\n", d, end_time);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return code;
}
