// The example of docs/groupcomm.md: the odd ranks of MPI_COMM_WORLD, highest first, make a
// communicator among themselves while the even ranks do not take part. Exits nonzero if the new
// rank or the sum is not what the example promises.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "groupcomm/groupcomm.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  if (!groupcomm::available()) {
    if (rank == 0) std::printf("example: skipped (%s)\n", groupcomm::kUnsupportedMessage);
  } else if (rank % 2 == 1) {
    std::vector<int> odd;  // the new communicator's rank order: highest odd world rank first
    for (int r = size - 1; r >= 0; --r) {
      if (r % 2 == 1) odd.push_back(r);
    }
    MPI_Group world_group;
    MPI_Group group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, static_cast<int>(odd.size()), odd.data(), &group);
    {
      const groupcomm::Comm odd_comm = groupcomm::create(MPI_COMM_WORLD, group, /*tag=*/0);
      int new_rank = -1;
      int sum = 0;
      MPI_Comm_rank(odd_comm.get(), &new_rank);
      MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, odd_comm.get());
      int expected_sum = 0;
      for (int r : odd) expected_sum += r;
      std::printf("world rank %d is rank %d of %zu odd ranks; their sum is %d\n", rank, new_rank,
                  odd.size(), sum);
      if (odd[new_rank] != rank || sum != expected_sum) status = 1;
    }  // odd_comm is freed here
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
  }
  MPI_Finalize();
  return status;
}
