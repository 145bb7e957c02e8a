// Checks what the project assumes of every MPI backend (Open MPI, MPICH, SMPI): every rank
// starts, ranks are distinct, the tag space is at least the standard's 0..32767, and a ring
// exchange with the largest tag the library advertises (MPI_TAG_UB) arrives.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int failures = 0;

  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  if (!flag || *tag_ub < 32767) {
    std::printf("rank %d: MPI_TAG_UB is %d, expected at least 32767\n", rank, flag ? *tag_ub : -1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int largest_tag = *tag_ub;

  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int got = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, largest_tag, &got, 1, MPI_INT, left, largest_tag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (got != left) {
    std::printf("rank %d: ring message from %d carried %d\n", rank, left, got);
    ++failures;
  }

  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size - 1) / 2) {
    std::printf("rank %d: sum of ranks %d, expected %d\n", rank, sum, size * (size - 1) / 2);
    ++failures;
  }

  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("backend_test on %d ranks: %d failures\n", size, total_failures);
  MPI_Finalize();
  return total_failures == 0 ? 0 : 1;
}
