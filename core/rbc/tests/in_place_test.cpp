// MPI_IN_PLACE for every collective that takes it, on the paths each algorithm has: short
// vectors (recursive doubling) and long ones (trees), commutative and
// non-commutative operations, gathers assembled in the receive buffer or packed.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// a op b = a: associative, not commutative; a reduction over ranks lo..hi yields rank lo's value.
void leftmost(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i];
}

long long value(int rank, int i) { return 1000LL * rank + i; }

std::vector<long long> own(int rank, int n) {
  std::vector<long long> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(rank, i);
  return v;
}

// Sum of value(r, i) over ranks lo..hi.
long long sum(int lo, int hi, int i) {
  long long s = 0;
  for (int r = lo; r <= hi; ++r) s += value(r, i);
  return s;
}

int wrong(const std::vector<long long>& got, int n, long long (*expect)(int, int, int), int a, int b) {
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += got[static_cast<std::size_t>(i)] != expect(a, b, i);
  return bad;
}

long long first_of(int lo, int, int i) { return value(lo, i); }

void reductions(Checker& check, const rbc::RangeComm& comm, MPI_Op left, int n) {
  Context c(check, "reductions in place, ", n, " elements");
  const int p = comm.size(), me = comm.rank();
  for (bool commutative : {true, false}) {
    const MPI_Op op = commutative ? MPI_SUM : left;
    auto expect = commutative ? sum : first_of;
    const std::string what = commutative ? " (sum)" : " (leftmost)";
    std::vector<long long> v = own(me, n);
    rbc::allreduce(MPI_IN_PLACE, v.data(), n, MPI_LONG_LONG, op, comm);
    check.equal(wrong(v, n, expect, 0, p - 1), 0, "allreduce" + what);
    for (int root : {0, p - 1}) {
      v = own(me, n);
      rbc::reduce(me == root ? MPI_IN_PLACE : v.data(), v.data(), n, MPI_LONG_LONG, op, root, comm);
      if (me == root) check.equal(wrong(v, n, expect, 0, p - 1), 0, "reduce to " + std::to_string(root) + what);
    }
    v = own(me, n);
    rbc::scan(MPI_IN_PLACE, v.data(), n, MPI_LONG_LONG, op, comm);
    check.equal(wrong(v, n, expect, 0, me), 0, "scan" + what);
    v = own(me, n);
    rbc::exscan(MPI_IN_PLACE, v.data(), n, MPI_LONG_LONG, op, comm);
    if (me > 0) check.equal(wrong(v, n, expect, 0, me - 1), 0, "exscan" + what);
    v = own(me, n);
    std::vector<long long> total(static_cast<std::size_t>(n), -1);
    rbc::scan_and_bcast(MPI_IN_PLACE, v.data(), total.data(), n, MPI_LONG_LONG, op, comm);
    check.equal(wrong(v, n, expect, 0, me), 0, "scan_and_bcast prefix" + what);
    check.equal(wrong(total, n, expect, 0, p - 1), 0, "scan_and_bcast total" + what);
  }
}

void gathers(Checker& check, const rbc::RangeComm& comm, int n) {
  Context c(check, "gathers in place, ", n, " elements per rank");
  const int p = comm.size(), me = comm.rank();
  auto all_wrong = [&](const std::vector<long long>& got) {
    int bad = 0;
    for (int r = 0; r < p; ++r) {
      for (int i = 0; i < n; ++i) bad += got[static_cast<std::size_t>(r * n + i)] != value(r, i);
    }
    return bad;
  };
  std::vector<long long> all(static_cast<std::size_t>(p) * n, -1);
  std::copy_n(own(me, n).begin(), n, all.begin() + static_cast<std::ptrdiff_t>(me) * n);
  rbc::allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), n, MPI_LONG_LONG, comm);
  check.equal(all_wrong(all), 0, "allgather");
  for (int root : {0, p - 1}) {
    std::vector<long long> mine = own(me, n);
    std::vector<long long> at_root(static_cast<std::size_t>(p) * n, -1);
    if (me == root) std::copy(mine.begin(), mine.end(), at_root.begin() + static_cast<std::ptrdiff_t>(me) * n);
    rbc::gather(me == root ? MPI_IN_PLACE : mine.data(), n, MPI_LONG_LONG, at_root.data(), n, MPI_LONG_LONG, root,
                comm);
    if (me == root) check.equal(all_wrong(at_root), 0, "gather to " + std::to_string(root));
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "in_place_test", [](Checker& check) {
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    MPI_Op left;
    MPI_Op_create(&leftmost, 0, &left);
    // Scans: 1 and 3 elements go on the butterfly, 40 (320 bytes) by Hillis and Steele, 1000
    // (8000 bytes) by the trees (above 16 ranks); the other reductions double up to 4 KiB.
    for (int n : {1, 3, 40, 1000}) {
      reductions(check, world, left, n);
      gathers(check, world, n);
    }
    if (world.size() >= 3) {
      const rbc::RangeComm tail = world.split(1, world.size() - 1);
      if (world.rank() >= 1) {
        reductions(check, tail, left, 3);
        gathers(check, tail, 1000);
      }
    }
    MPI_Op_free(&left);
  });
}
