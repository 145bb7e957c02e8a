// Sorts N doubles with JQuick on RBC and checks the result the way a user would: every PE's
// part is sorted, parts are in order across PEs, PE i holds exactly floor(N/p) + [i < N mod p]
// elements, and no element was lost or duplicated (sum and sum of squares of the input's bit
// patterns, exact in 64-bit wrap-around arithmetic). The input is deliberately uneven: PE i
// starts with a share that depends on i.
//   sort_check [N]     (default 2^20)
// Output, on rank 0:  sort_check: 1048576 doubles on 4 ranks: sorted and exactly balanced
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "jquick/jquick.hpp"

namespace {

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

struct Fingerprint {
  std::uint64_t sum = 0, squares = 0;
  void add(double x) {
    sum += bits(x);
    squares += bits(x) * bits(x);
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long long n = argc > 1 ? std::atoll(argv[1]) : (1LL << 20);
  // Uneven input: PE i gets a share proportional to i + 1.
  const long long weight_total = static_cast<long long>(p) * (p + 1) / 2;
  const long long before = n * (static_cast<long long>(rank) * (rank + 1) / 2) / weight_total;
  const long long upto = n * (static_cast<long long>(rank + 1) * (rank + 2) / 2) / weight_total;
  std::mt19937_64 rng(42 + static_cast<std::uint64_t>(rank));
  std::uniform_real_distribution<double> key(-1.0, 1.0);
  std::vector<double> data(static_cast<std::size_t>(upto - before));
  Fingerprint in;
  for (double& x : data) {
    x = key(rng);
    in.add(x);
  }

  jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD);

  Fingerprint out;
  for (double x : data) out.add(x);
  int ok = std::is_sorted(data.begin(), data.end()) ? 1 : 0;
  const long long expected = n / p + (rank < n % p ? 1 : 0);
  if (static_cast<long long>(data.size()) != expected) ok = 0;
  // Boundaries: my first element is not below the previous PE's last.
  double last = data.empty() ? -2.0 : data.back(), previous = -2.0;
  MPI_Sendrecv(&last, 1, MPI_DOUBLE, rank + 1 < p ? rank + 1 : MPI_PROC_NULL, 0, &previous, 1, MPI_DOUBLE,
               rank > 0 ? rank - 1 : MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!data.empty() && data.front() < previous) ok = 0;
  std::uint64_t local[4] = {in.sum, in.squares, out.sum, out.squares}, total[4];
  MPI_Allreduce(local, total, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const bool same = total[0] == total[2] && total[1] == total[3];
  if (rank == 0) {
    if (all_ok && same) {
      std::printf("sort_check: %lld doubles on %d ranks: sorted and exactly balanced\n", n, p);
    } else {
      std::printf("sort_check: %lld doubles on %d ranks: FAILED (%s)\n", n, p,
                  !all_ok ? "order or balance" : "elements lost or duplicated");
    }
  }
  MPI_Finalize();
  return all_ok && same ? 0 : 1;
}
