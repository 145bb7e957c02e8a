#pragma once

#include <mpi.h>

#include "collective.hpp"
#include "tree.hpp"

namespace rbc::detail {

// Binomial-tree broadcast: receive from the parent, then send to the children, largest
// subtree first. Large messages go to one child after the other: sent at once they would share
// the sender's link, and the child with the most forwarding left would get its copy late.
class Bcast : public Collective {
 public:
  Bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm)
      : Collective(comm, Kind::bcast, root, count),
        buf_(buf),
        count_(count),
        type_(type),
        tree_(CommAccess::size(comm), root, CommAccess::rank(comm)) {
    one_at_a_time_ = static_cast<long long>(TypeInfo(type).size) * count >= kOneAtATimeBytes;
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
      const std::size_t batch = one_at_a_time_ ? 1 : children.size() - sent;
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
  BinomialTree tree_;
  bool one_at_a_time_ = false;
};

}  // namespace rbc::detail
