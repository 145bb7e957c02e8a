// Why groupcomm is off under SMPI: this program creates and merges one intercommunicator
// (ranks of even and odd world rank). Under Open MPI it must succeed; under SimGrid SMPI 3.32 the
// simulation aborts with "Not yet implemented: PMPI_Intercomm_create" (tests/expect_run.sh
// checks both). If a SimGrid release implements intercommunicators, the SMPI test fails and
// groupcomm::available() can be revisited.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  if (size != 2) {
    if (rank == 0) std::printf("intercomm_probe: needs exactly 2 ranks, got %d\n", size);
    status = 1;
  } else {
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &local);
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank, 7, &inter);
    MPI_Comm merged = MPI_COMM_NULL;
    MPI_Intercomm_merge(inter, rank, &merged);
    int merged_rank = -1;
    MPI_Comm_rank(merged, &merged_rank);
    if (merged_rank != rank) {
      std::printf("intercomm_probe: rank %d has rank %d in the merged communicator\n", rank,
                  merged_rank);
      status = 1;
    } else if (rank == 0) {
      std::printf("intercomm_probe: intercommunicator created and merged\n");
    }
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  MPI_Finalize();
  return status;
}
