// The paper's Figure 1: split the ranks into two halves without any communication, then
// broadcast from the first rank of each half to its half with a nonblocking broadcast.
//
//   ./janus run --program //examples:figure1 ...   (simulated)   or
//   mpirun -np 8 bazel-bin/examples/figure1_mpi                (real MPI)
#include <mpi.h>

#include <cstdio>

#include "rbc/rbc.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
  const int rank = world.rank();
  const int size = world.size();

  const double start = MPI_Wtime();
  // Local: no message is sent to create the halves.
  const int first = rank < size / 2 ? 0 : size / 2;
  const int last = rank < size / 2 ? size / 2 - 1 : size - 1;
  const rbc::RangeComm half = world.split(first, last);
  const double created = MPI_Wtime();

  int value = half.rank() == 0 ? 1000 + rank : -1;
  rbc::Request request = rbc::ibcast(&value, 1, MPI_INT, 0, half);
  int polls = 1;
  while (!request.test()) ++polls;  // other work would go here
  const double done = MPI_Wtime();

  const int expected = 1000 + first;
  int wrong = value == expected ? 0 : 1, wrong_total = 0;
  double elapsed = done - start, slowest = 0;
  rbc::allreduce(&wrong, &wrong_total, 1, MPI_INT, MPI_SUM, world);
  rbc::reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, world);

  if (rank == first) {
    std::printf("half [%d..%d]: rank %d received %d from rank %d after %d tests; split took %.3g s\n",
                first, last, rank, value, first, polls, created - start);
  }
  if (rank == 0) {
    std::printf("figure1: %d ranks, two halves, %s; slowest rank finished after %.3g s (MPI_Wtime)\n",
                size, wrong_total == 0 ? "every rank got its half's value" : "SOME RANKS GOT WRONG VALUES",
                slowest);
  }
  MPI_Finalize();
  return wrong_total == 0 ? 0 : 1;
}
