#pragma once

#include <mpi.h>

#include "collective.hpp"
#include "tree.hpp"

#include <variant>

namespace rbc::detail {

// Whether a broadcast of `bytes` on p ranks takes the latency tree (tree.hpp, a send costing a
// third of a hop): below 4 KiB on 8 or more ranks, where latency, not size, is the cost; else the
// binomial tree. On a split of 16 to 256 simulated ranks (supermuc, juqueen; one and 64 doubles)
// it took 0.80-1.06x the 4-nomial tree's time, which took 0.74-0.98x the binomial tree's, and
// 0.85-1.18x the library's (binomial) against the 4-nomial's 0.87-1.33x; delays of 2 and 4 did
// worse on one profile or the other (docs/benchmarks.md, "A latency tree for short broadcasts").
// The price is the root's sends (6 on 16 ranks, 12 on 256, as the 4-nomial tree's, against
// log2 p): broadcasts back to back from one root queue behind them.
inline bool bcast_latency_tree(long long bytes, int p) { return bytes < 4096 && p >= 8; }
inline constexpr int kBcastDelay = 3;
static_assert(kBcastDelay >= 1 && kBcastDelay <= 4, "LatencyTree takes delays 1 to 4");

// A broadcast's tree, either kind. Children in ascending order, the last one's subtree the largest.
class BcastTree {
 public:
  BcastTree(long long bytes, int p, int root, int rank) : tree_(make(bytes, p, root, rank)) {}

  bool is_root() const { return std::visit([](const auto& t) { return t.is_root(); }, tree_); }
  int parent() const { return std::visit([](const auto& t) { return t.parent(); }, tree_); }
  int absolute(int r) const { return std::visit([r](const auto& t) { return t.absolute(r); }, tree_); }
  std::size_t child_count() const { return std::visit([](const auto& t) { return t.children().size(); }, tree_); }
  int child(std::size_t i) const { return std::visit([i](const auto& t) { return t.children()[i]; }, tree_); }

 private:
  using Tree = std::variant<BinomialTree, LatencyTree>;
  static Tree make(long long bytes, int p, int root, int rank) {
    if (bcast_latency_tree(bytes, p)) return Tree(std::in_place_type<LatencyTree>, p, root, rank, kBcastDelay);
    return Tree(std::in_place_type<BinomialTree>, p, root, rank);
  }

  Tree tree_;
};

// Tree broadcast: receive from the parent, then send to the children, largest subtree first.
// Large messages go to one child after the other: sent at once they would share the sender's
// link, and the child with the most forwarding left would get its copy late.
class Bcast : public Collective {
 public:
  Bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm)
      : Collective(comm, Kind::bcast, root, count),
        buf_(buf),
        count_(count),
        type_(type),
        bytes_(static_cast<long long>(TypeInfo(type).size) * count),
        tree_(bytes_, CommAccess::size(comm), root, CommAccess::rank(comm)) {
    sends_along_tree();
  }

 private:
  static constexpr long long kOneAtATimeBytes = 4096;

  void step() override {
    if (state_ == 0) {
      ++state_;
      if (!tree_.is_root()) receive(buf_, count_, type_, tree_.absolute(tree_.parent()), kDown);
      return;
    }
    const std::size_t children = tree_.child_count();
    const std::size_t sent = static_cast<std::size_t>(state_ - 1);
    if (sent < children) {
      const std::size_t batch = bytes_ >= kOneAtATimeBytes ? 1 : children - sent;
      for (std::size_t i = sent; i < sent + batch; ++i) {
        send(buf_, count_, type_, tree_.absolute(tree_.child(children - 1 - i)), kDown);
      }
      state_ += static_cast<int>(batch);
      return;
    }
    finish();
  }

  void* buf_;
  int count_;
  MPI_Datatype type_;
  long long bytes_;  // the message's; declared before tree_, whose kind depends on it
  BcastTree tree_;
};

}  // namespace rbc::detail
