// Network probe for the platform tests and for scale runs. Rank 0 prints one "RESULT ..." line per
// measurement; times are MPI_Wtime differences (simulated time under SMPI).
//
//   netcheck pingpong PEER BYTES...   rank 0 <-> rank PEER round trips; reports one-way time
//   netcheck shift BYTES S G          ranks in blocks of G; every rank sends BYTES to the rank S
//                                     further on in its block (cyclically) and receives from the
//                                     one S before, all at once; reports the slowest rank's time
//   netcheck barrier                  cheap whole-machine exercise (barrier, allreduce, ring)
//   netcheck deadlock                 ranks 0 and 1 both wait for each other (runner test)
//   netcheck livelock                 rank 0 polls forever for a message nobody sends (runner test)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct World {
  int rank = 0;
  int size = 0;
};

bool parse_long(const char* text, long* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0) return false;
  *out = value;
  return true;
}

int usage(const World& world, const char* message) {
  if (world.rank == 0) {
    std::fprintf(stderr,
                 "netcheck: %s\nusage: netcheck pingpong PEER BYTES... | shift BYTES S G | barrier | deadlock | livelock\n",
                 message);
  }
  return 2;
}

int pingpong(const World& world, int argc, char** argv) {
  long peer = 0;
  if (argc < 4 || !parse_long(argv[2], &peer)) return usage(world, "pingpong needs PEER and BYTES");
  if (peer < 1 || peer >= world.size) return usage(world, "PEER must be a rank other than 0");
  for (int i = 3; i < argc; ++i) {
    long bytes = 0;
    if (!parse_long(argv[i], &bytes) || bytes > (1L << 30)) return usage(world, "BYTES must be 0..2^30");
    const bool active = world.rank == 0 || world.rank == peer;
    std::vector<char> buffer(active ? static_cast<size_t>(bytes) + 1 : 1, 'x');
    const int count = static_cast<int>(bytes);
    const int rounds = 4;
    MPI_Barrier(MPI_COMM_WORLD);
    // Round 0 is untimed: ranks leave the barrier at different times, and the first round trip
    // brings the peer to its next receive before rank 0 starts the clock.
    double start = 0;
    for (int round = 0; round <= rounds; ++round) {
      if (round == 1) start = MPI_Wtime();
      if (world.rank == 0) {
        MPI_Send(buffer.data(), count, MPI_CHAR, static_cast<int>(peer), round, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), count, MPI_CHAR, static_cast<int>(peer), round, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (world.rank == peer) {
        MPI_Recv(buffer.data(), count, MPI_CHAR, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), count, MPI_CHAR, 0, round, MPI_COMM_WORLD);
      }
    }
    const double one_way = (MPI_Wtime() - start) / (2.0 * rounds);
    if (world.rank == 0) {
      std::printf("RESULT pingpong peer=%ld bytes=%ld oneway=%.12e\n", peer, bytes, one_way);
    }
  }
  return 0;
}

int shift(const World& world, int argc, char** argv) {
  long bytes = 0, distance = 0, block = 0;
  if (argc != 5 || !parse_long(argv[2], &bytes) || !parse_long(argv[3], &distance) ||
      !parse_long(argv[4], &block)) {
    return usage(world, "shift needs BYTES S G");
  }
  if (block < 1 || world.size % block != 0) return usage(world, "G must divide the rank count");
  if (bytes > (1L << 30)) return usage(world, "BYTES must be 0..2^30");
  const long base = world.rank / block * block;
  const int to = static_cast<int>(base + (world.rank - base + distance) % block);
  const int from = static_cast<int>(base + (world.rank - base + block - distance % block) % block);
  std::vector<char> out(static_cast<size_t>(bytes) + 1, 'x'), in(static_cast<size_t>(bytes) + 1);
  const int count = static_cast<int>(bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  MPI_Request requests[2];
  MPI_Irecv(in.data(), count, MPI_CHAR, from, 7, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out.data(), count, MPI_CHAR, to, 7, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  const double mine = MPI_Wtime() - start;
  double slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (world.rank == 0) {
    std::printf("RESULT shift bytes=%ld distance=%ld block=%ld time=%.12e\n", bytes, distance, block,
                slowest);
  }
  return 0;
}

int barrier(const World& world) {
  MPI_Barrier(MPI_COMM_WORLD);
  long sum = 0, mine = world.rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const int right = (world.rank + 1) % world.size, left = (world.rank + world.size - 1) % world.size;
  int got = -1;
  MPI_Sendrecv(&world.rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  const long expected = static_cast<long>(world.size) * (world.size - 1) / 2;
  const int bad = (sum != expected || got != left) ? 1 : 0;
  int total_bad = 0;
  MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (world.rank == 0) {
    std::printf("RESULT barrier ranks=%d failures=%d time=%.12e\n", world.size, total_bad, MPI_Wtime());
  }
  return total_bad == 0 ? 0 : 1;
}

// Ranks 0 and 1 each wait for the other; the rest wait in a barrier that can never complete.
int deadlock(const World& world) {
  int value = 0;
  if (world.rank < 2 && world.size >= 2) {
    MPI_Recv(&value, 1, MPI_INT, 1 - world.rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

// Simulated time advances with every probe, so this never deadlocks: only a wall-clock limit ends it.
int livelock(const World& world) {
  if (world.rank == 0) {
    int flag = 0;
    while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  World world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  int status = 2;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "pingpong") {
    status = pingpong(world, argc, argv);
  } else if (mode == "shift") {
    status = shift(world, argc, argv);
  } else if (mode == "barrier") {
    status = barrier(world);
  } else if (mode == "deadlock") {
    status = deadlock(world);
  } else if (mode == "livelock") {
    status = livelock(world);
  } else {
    status = usage(world, "unknown or missing mode");
  }
  MPI_Finalize();
  return status;
}
