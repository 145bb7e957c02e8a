// Mismatched collectives, which hang in plain MPI: run against the checked build, a rank that
// receives a message of a different collective than its own stops with "rbc: mismatched
// collectives ...", naming both. Expected to FAIL (see expect_failure.sh in BUILD.bazel).
//   mismatch_run barrier_vs_bcast   rank 1 calls barrier, the others bcast from rank 0
//   mismatch_run count              rank 2 broadcasts 2 ints, the others 1
#include <mpi.h>

#include <cstdio>
#include <string>

#include "rbc/rbc.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
  int values[2] = {7, 7};
  if (mode == "barrier_vs_bcast") {
    if (world.rank() == 1) {
      rbc::barrier(world);
    } else {
      rbc::bcast(values, 1, MPI_INT, 0, world);
    }
  } else if (mode == "count") {
    rbc::bcast(values, world.rank() == 2 ? 2 : 1, MPI_INT, 0, world);
  } else {
    std::fprintf(stderr, "usage: mismatch_run barrier_vs_bcast|count\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  // Keep every rank alive until the mismatch is reported (under SMPI a send to a rank that has
  // finalized aborts the simulation with a message of its own).
  MPI_Barrier(MPI_COMM_WORLD);
  std::printf("rank %d: no mismatch detected\n", world.rank());
  MPI_Finalize();
  return 0;
}
