#pragma once

// A sort scenario: one distributed sort (JQuick or hypercube quicksort) of a generated input on
// a range of MPI_COMM_WORLD, as command-line tokens (same conventions as scenario.hpp):
//
//   np=6 seed=9 algo=jquick layer=rbc dist=all-to-one n=100 type=f64 range=1.5.2 gather=17

#include <cstdint>
#include <string>
#include <vector>

namespace props {

struct SortScenario {
  int np = 1;
  std::uint64_t seed = 0;
  std::string algorithm = "jquick";  // jquick | hypercube
  // jquick: rbc, rbc-probe, mpi-create-group, mpi-split; hypercube: rbc, split, create-group
  std::string layer = "rbc";
  std::string distribution = "uniform";  // an inputs::name()
  std::uint64_t n_per_pe = 0;
  std::string type = "i64";  // i32 | i64 | f64
  // The sort runs on world ranks first..last (stride); the other ranks only watch.
  int first = 0;
  int last = 0;
  int stride = 1;
  // JQuick's Config::gather_elements; -1: the library's default (and no token).
  std::int64_t gather_elements = -1;
};

std::vector<std::string> layers_of(const std::string& algorithm);

std::vector<std::string> to_tokens(const SortScenario& s);
// Throws std::invalid_argument naming the bad token.
SortScenario sort_from_tokens(const std::vector<std::string>& tokens);
// World ranks that take part, in order.
std::vector<int> sort_members(const SortScenario& s);

}  // namespace props
