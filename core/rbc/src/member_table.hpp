#pragma once

#include <unordered_map>
#include <vector>

namespace rbc::detail {

// Members of a communicator made from a list of ranks: list position -> MPI rank and back.
struct MemberTable {
  explicit MemberTable(std::vector<int> list) : ranks(std::move(list)) {
    for (std::size_t i = 0; i < ranks.size(); ++i) index.emplace(ranks[i], static_cast<int>(i));
  }
  int index_of(int mpi_rank) const {
    const auto it = index.find(mpi_rank);
    return it == index.end() ? -1 : it->second;
  }

  std::vector<int> ranks;
  std::unordered_map<int, int> index;
};

}  // namespace rbc::detail
