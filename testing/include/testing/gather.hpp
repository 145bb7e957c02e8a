#pragma once

// Test-side gather of variable-sized blocks.

#include <mpi.h>

#include <vector>

namespace janus::testing {

// Every rank's `local` elements concatenated in rank order at rank 0 (empty elsewhere), along a
// binomial tree of blocking point-to-point messages with `tag` on `comm`: SMPI's own
// MPI_Gather(v) costs far more simulation time at a few hundred ranks. T must be trivially
// copyable; the caller must not use `tag` on `comm` concurrently.
template <class T>
std::vector<T> gather_at_root(const std::vector<T>& local, MPI_Comm comm, int tag) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  std::vector<T> collected = local;  // the elements of ranks [rank, rank + mask)
  std::vector<T> part;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rank & mask) {
      MPI_Send(collected.data(), static_cast<int>(collected.size() * sizeof(T)), MPI_BYTE,
               rank - mask, tag, comm);
      return {};
    }
    if (rank + mask < p) {
      MPI_Status status;
      MPI_Probe(rank + mask, tag, comm, &status);
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      part.resize(static_cast<std::size_t>(bytes) / sizeof(T));
      MPI_Recv(part.data(), bytes, MPI_BYTE, rank + mask, tag, comm, MPI_STATUS_IGNORE);
      collected.insert(collected.end(), part.begin(), part.end());
    }
  }
  return collected;
}

}  // namespace janus::testing
