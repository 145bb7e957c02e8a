#pragma once

// Entry points for the demo and the benchmarks: one sort of doubles with a chosen layer, the
// slowest PE's phase times, and a cheap distributed check of the result.

#include <mpi.h>

#include <string>
#include <vector>

#include "jquick/config.hpp"

namespace jquick {

// jquick::sort(data, MPI_DOUBLE, comm, std::less<double>(), config); returns this PE's stats.
Stats sort_doubles(std::vector<double>& data, MPI_Comm comm, const Config& config);

// Field-wise maximum over the PEs of `comm` (collective); every PE gets the result.
Stats max_stats(const Stats& local, MPI_Comm comm);

// Collective: every PE holds exactly its share of `n` (floor(n/p) + [rank < n mod p]), its
// elements are sorted, and the last element of each non-empty PE is <= the first element of the
// next non-empty PE. The same answer on every PE. (Not a permutation check: that needs the input.)
bool sorted_and_balanced(const std::vector<double>& data, long long n, MPI_Comm comm);

// "total 0.001234 s | pivot ... | levels 7 ..." for printing.
std::string describe(const Stats& stats);

}  // namespace jquick
