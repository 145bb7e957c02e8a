// Mismatched collectives, which hang in plain MPI: run against the checked build, a rank that
// receives a message of a different collective than its own stops with "rbc: mismatched
// collectives ...", naming both. Expected to FAIL (see expect_failure.sh in BUILD.bazel).
//   mismatch_run barrier_vs_bcast   rank 1 calls barrier, the others bcast from rank 0
//   mismatch_run count              rank 2 broadcasts 2 ints, the others 1
//   mismatch_run allgatherm_schedule rank 0 merges by halves, the others by the fold
// Mismatches no message of the collective itself reveals (its messages never meet, or only flow
// away from the odd rank); the checked build's signature handshake (collective.hpp) names them:
//   mismatch_run bcast_root         the last rank broadcasts from itself, the others from rank 0
//                                   (without the handshake: returns silently, messages left over)
//   mismatch_run reduce_root        the last rank reduces to rank 1, the others to rank 0 (hangs)
//   mismatch_run gather_root        rank 1 gathers to itself, the others to rank 0 (hangs)
// Calls nothing will ever match, whatever the build checks in the messages; the checked build on a
// real MPI reports the stalled wait after RBC_CHECK_TIMEOUT seconds (SMPI reports a deadlock):
//   mismatch_run extra_collective   rank 1 calls one more barrier than the others
//   mismatch_run extra_recv         rank 0 receives a message rank 1 never sends
//   mismatch_run extra_probe        rank 0 probes for it (rbc::probe blocks)
//   mismatch_run extra_probe_polling the same with a receive of rank 0's pending (rbc::probe polls)
// A request destroyed before it completed, whose completion fails (any build):
//   mismatch_run dropped_truncation rank 1 drops a receive too small for what rank 0 sends, with
//                                   MPI_ERRORS_RETURN: RBC names the error and ends the job
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
  } else if (mode == "bcast_root") {
    const int last = world.size() - 1;
    rbc::bcast(values, 1, MPI_INT, world.rank() == last ? last : 0, world);
  } else if (mode == "reduce_root") {
    int sum = 0;
    rbc::reduce(values, &sum, 1, MPI_INT, MPI_SUM, world.rank() == world.size() - 1 ? 1 : 0, world);
  } else if (mode == "gather_root") {
    int all[64] = {};
    rbc::gather(values, 1, MPI_INT, all, 1, MPI_INT, world.rank() == 1 ? 1 : 0, world);
  } else if (mode == "allgatherm_schedule") {
    int all[64] = {};
    const rbc::Merger keep = [](void*, void*, void*) {};
    rbc::allgatherm(values, 1, all, world.size(), MPI_INT, keep, world,
                    world.rank() == 0 ? rbc::AllgathermSchedule::halves : rbc::AllgathermSchedule::fold);
  } else if (mode == "extra_collective") {
    rbc::bcast(values, 1, MPI_INT, 0, world);
    if (world.rank() == 1) rbc::barrier(world);
  } else if (mode == "extra_recv") {
    if (world.rank() == 0) rbc::recv(values, 1, MPI_INT, 1, 5, world);
  } else if (mode == "extra_probe") {
    if (world.rank() == 0) rbc::probe(1, 5, world);
  } else if (mode == "extra_probe_polling") {
    if (world.rank() == 0) {
      rbc::Request pending = rbc::irecv(values + 1, 1, MPI_INT, 1, 6, world);
      rbc::probe(1, 5, world);
    }
  } else if (mode == "dropped_truncation") {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int four[4] = {1, 2, 3, 4};
    if (world.rank() == 0) rbc::send(four, 4, MPI_INT, 1, 5, world);
    if (world.rank() == 1) {
      rbc::Request dropped = rbc::irecv(values, 1, MPI_INT, 0, 5, world);
    }
  } else {
    std::fprintf(stderr,
                 "usage: mismatch_run barrier_vs_bcast|count|bcast_root|reduce_root|gather_root|extra_collective|"
                 "extra_recv|extra_probe|extra_probe_polling|dropped_truncation\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  // Keep every rank alive until the mismatch is reported (under SMPI a send to a rank that has
  // finalized aborts the simulation with a message of its own).
  MPI_Barrier(MPI_COMM_WORLD);
  std::printf("rank %d: no mismatch detected\n", world.rank());
  MPI_Finalize();
  return 0;
}
