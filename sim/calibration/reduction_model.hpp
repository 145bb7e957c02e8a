#pragma once

#include <cstddef>
#include <string>
#include <vector>

// The reduction operator applications an MPI library's own reduce, allreduce, scan and exscan
// make on one rank, for charging them under SMPI, which applies the operator without advancing
// time (RBC's own applications are charged by core/cost). Counts follow the algorithm SMPI 3.32
// runs for the call under `coll-selector:ompi`: its tables of Open MPI's decision function
// (updated 02/2022 in SimGrid) for reduce and allreduce, its linear scan and exscan (rank r
// combines the vectors of all lower ranks). Other selectors: no model, nothing charged.
namespace reduction_model {

enum class Call { reduce, allreduce, scan, exscan };

// `count` applications of the operator to `bytes` bytes each.
struct Term {
  double count;
  std::size_t bytes;
};

// The calling rank's applications to `count` elements of `bytes` bytes in all (`rank` and
// `root` in the communicator of size `p`; `root` is ignored for the calls without one). Empty
// where the selector has no model.
std::vector<Term> applications(const std::string& selector, Call call, int count, std::size_t bytes, int p,
                               int rank, int root, bool commutative);

}  // namespace reduction_model
