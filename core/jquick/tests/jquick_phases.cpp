// Prints the slowest PE's phase times of one JQuick run per layer (uniform doubles), for
// looking at where time goes on either backend. Usage: jquick_phases [n/p] [repetitions]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "jquick/run.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long long per_pe = argc > 1 ? std::atoll(argv[1]) : 1000;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 1;
  std::mt19937_64 rng(1234 + rank);
  std::uniform_real_distribution<double> key(0.0, 1.0);
  std::vector<double> input(static_cast<std::size_t>(per_pe));
  for (double& x : input) x = key(rng);
  for (jquick::Layer layer : {jquick::Layer::rbc, jquick::Layer::mpi_create_group,
                              jquick::Layer::mpi_split}) {
    for (jquick::Schedule schedule : {jquick::Schedule::alternating, jquick::Schedule::cascaded}) {
      // The RBC layer has no communicator schedule; its second round uses probe receives.
      const bool probe = layer == jquick::Layer::rbc && schedule == jquick::Schedule::cascaded;
      for (int r = 0; r < repetitions; ++r) {
        jquick::Config config;
        config.layer = layer;
        config.schedule = schedule;
        if (probe) config.wildcard = jquick::Wildcard::probe;
        std::vector<double> data = input;
        MPI_Barrier(MPI_COMM_WORLD);
        const jquick::Stats stats = jquick::max_stats(jquick::sort_doubles(data, MPI_COMM_WORLD, config),
                                                      MPI_COMM_WORLD);
        const bool ok = jquick::sorted_and_balanced(data, per_pe * p, MPI_COMM_WORLD);
        if (rank == 0) {
          std::printf("p=%d n/p=%lld %-16s %-11s %s %s\n", p, per_pe, jquick::layer_name(layer),
                      probe ? "probe" : jquick::schedule_name(schedule), ok ? "ok" : "WRONG",
                      jquick::describe(stats).c_str());
        }
      }
    }
  }
  MPI_Finalize();
  return 0;
}
