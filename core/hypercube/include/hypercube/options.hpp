#pragma once

#include <cstdint>
#include <string>

namespace hypercube {

// How the MPI-communicator variant creates each level's halves.
enum class MpiCommCreation {
  kSplit,        // MPI_Comm_split, collective over the parent communicator
  kCreateGroup,  // MPI_Group_range_incl + MPI_Comm_create_group, collective over the half only
};

// "split" / "create-group"; parse throws std::invalid_argument for anything else.
std::string name(MpiCommCreation creation);
MpiCommCreation parse_comm_creation(const std::string& text);

struct Options {
  // Seeds the reshuffle (each PE draws from (seed, its rank)). Same seed,
  // same input: same output, on either communication layer.
  std::uint64_t seed = 1;
  // Samples each PE contributes per level, and the cap on the merged sample list; >= 1.
  // Larger means better balance for slightly longer sample messages (24 bytes + sizeof(T)
  // per sample, log2 of the subcube size messages per level).
  int samples_per_pe = 63;
  // The random reshuffle before sorting; without it the algorithm is plain hypercube quicksort
  // (still correct, but its balance then depends on the input's arrangement).
  bool reshuffle = true;
};

// Seconds (MPI_Wtime, i.e. simulated time under SMPI) this PE spent in each phase of one sort.
struct PhaseTimes {
  double fold = 0;             // p not a power of two: handing data into the subcube
  double reshuffle = 0;
  double local_sort = 0;
  double pivot_selection = 0;  // sampling and the butterfly over the samples
  double partition = 0;
  double exchange = 0;         // sending and receiving the partner's part
  double merge = 0;
  double comm_creation = 0;    // creating the subcube / half communicators
  double total = 0;
  int levels = 0;              // recursion levels this PE took part in (log2 of its subcube)
};

}  // namespace hypercube
