// PEs passing different Configs to one sort (issue 18, class 7). Expected to FAIL with
// "jquick: the PEs passed different Configs" on every PE (see the sh_tests in BUILD.bazel):
//   config_mismatch_run seed    the last PE sorts with another seed: caught in every build by the
//                               Config digest on the sort's first collective
//   config_mismatch_run layer   PE 1 sorts with Layer::mpi_split, the others with Layer::rbc:
//                               caught by the checked build's agreement before the layer
//                               (jquick_checked); hangs in the others
//   config_mismatch_run range   like `seed`, on an rbc::RangeComm over all but the last PE
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "jquick/jquick.hpp"
#include "rbc/rbc.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> data;
  for (int i = 0; i < 50; ++i) data.push_back((rank * 7919 + i * 104729) % 1000 / 10.0);
  jquick::Config config;
  int failed = 0;
  std::string what;
  try {
    if (mode == "seed") {
      if (rank == size - 1) config.seed = 12345;
      jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD, std::less<double>(), config);
    } else if (mode == "layer") {
      if (rank == 1 % size) config.layer = jquick::Layer::mpi_split;
      jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD, std::less<double>(), config);
    } else if (mode == "range") {
      const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
      const int last = size > 1 ? size - 2 : 0;
      const rbc::RangeComm part = world.split(0, last);
      if (rank == last) config.seed = 777;
      if (part.is_member()) jquick::sort(data, MPI_DOUBLE, part, std::less<double>(), config);
    } else {
      std::fprintf(stderr, "usage: config_mismatch_run seed|layer|range\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } catch (const std::exception& e) {
    std::printf("rank %d: %s\n", rank, e.what());
    std::fflush(stdout);
    what = e.what();
    failed = 1;
  }
  // Every PE must have failed: a PE that went on would have hung the others.
  int all = 0;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int expected = mode == "range" ? (size > 1 ? size - 1 : 1) : size;
  if (rank == 0) std::printf("%d of %d PEs threw (expected %d)\n", all, size, expected);
  if (rank == 0 && all == expected) std::printf("every PE threw: %s\n", what.c_str());
  MPI_Finalize();
  return all == expected ? 1 : 0;
}
