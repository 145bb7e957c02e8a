#pragma once

#include <mpi.h>

#include "collective.hpp"
#include "tree.hpp"

namespace rbc::detail {

// The radix of a broadcast's tree for a message of `bytes` on p ranks: 4 below 4 KiB on 8 or
// more ranks, where latency, not size, is the cost and half the levels beat one send per level
// (a send's own cost is a fraction of a message's latency); 2 (binomial) otherwise. Open MPI 4.1
// takes its 4-nomial tree there too; on the real 16-core node RBC's binomial tree took 1.4-1.5x
// Open MPI's time (8 B-1 KiB, 16 ranks), in the calibrated simulation of that node the 4-nomial
// tree takes 1.00-1.02x; on a split of 24 to 256 simulated ranks (supermuc, juqueen) 0.74-0.98x
// the binomial tree's time at one and 64 doubles. The price is the root's sends (1.5 log2 p
// against log2 p): ten broadcasts back to back from one root take 1.12-1.24x (docs/benchmarks.md,
// "A 4-nomial broadcast beyond one node").
inline int bcast_radix(long long bytes, int p) { return bytes < 4096 && p >= 8 ? 4 : 2; }

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
        tree_(CommAccess::size(comm), root, CommAccess::rank(comm), bcast_radix(bytes_, CommAccess::size(comm))) {
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
    const auto& children = tree_.children();
    const std::size_t sent = static_cast<std::size_t>(state_ - 1);
    if (sent < children.size()) {
      const std::size_t batch = bytes_ >= kOneAtATimeBytes ? 1 : children.size() - sent;
      for (std::size_t i = sent; i < sent + batch; ++i) {
        send(buf_, count_, type_, tree_.absolute(children[children.size() - 1 - i]), kDown);
      }
      state_ += static_cast<int>(batch);
      return;
    }
    finish();
  }

  void* buf_;
  int count_;
  MPI_Datatype type_;
  long long bytes_;  // the message's; declared before tree_, whose radix depends on it
  KnomialTree tree_;
};

}  // namespace rbc::detail
