#pragma once

#include <mpi.h>

#include "collective.hpp"
#include "tree.hpp"

namespace rbc::detail {

// Binomial-tree broadcast: receive from the parent, then send to the children, largest
// subtree first.
class Bcast : public Collective {
 public:
  Bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm)
      : Collective(comm), buf_(buf), count_(count), type_(type), tree_(comm.size(), root, comm.rank()) {}

 private:
  void step() override {
    if (state_++ == 0) {
      if (!tree_.is_root()) receive(buf_, count_, type_, tree_.absolute(tree_.parent()), kDown);
      return;
    }
    const auto& children = tree_.children();
    for (auto c = children.rbegin(); c != children.rend(); ++c) {
      send(buf_, count_, type_, tree_.absolute(*c), kDown);
    }
    finish();
  }

  void* buf_;
  int count_;
  MPI_Datatype type_;
  BinomialTree tree_;
};

}  // namespace rbc::detail
