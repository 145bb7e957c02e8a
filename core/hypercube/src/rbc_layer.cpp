#include "hypercube/detail/rbc_layer.hpp"

#include <stdexcept>

#include "rbc/point_to_point.hpp"

namespace hypercube::detail {

RbcLayer::RbcLayer(rbc::RangeComm comm) : comm_(std::move(comm)), rank_(-1), size_(0) {
  if (!comm_.is_member()) {
    throw std::invalid_argument("hypercube: the calling PE is not a member of the communicator");
  }
  rank_ = comm_.rank();
  size_ = comm_.size();
}

RbcLayer::PendingSend RbcLayer::isend(const void* buf, int count, MPI_Datatype type, int dest,
                                      int tag) const {
  return PendingSend(rbc::isend(buf, count, type, dest, tag, comm_));
}

int RbcLayer::probe_count(int source, int tag, MPI_Datatype type) const {
  const int count = rbc::probe(source, tag, comm_).count(type);
  if (count == MPI_UNDEFINED) {
    throw std::runtime_error(
        "hypercube: received a message that is not a whole number of elements");
  }
  return count;
}

void RbcLayer::recv(void* buf, int count, MPI_Datatype type, int source, int tag) const {
  rbc::recv(buf, count, type, source, tag, comm_);
}

int RbcLayer::recv_bounded(void* buf, int capacity, MPI_Datatype type, int source,
                           int tag) const {
  return rbc::recv(buf, capacity, type, source, tag, comm_).count(type);
}

RbcLayer RbcLayer::half() const {
  const int half_size = size_ / 2;
  return rank_ < half_size ? RbcLayer(comm_.split(0, half_size - 1))
                           : RbcLayer(comm_.split(half_size, size_ - 1));
}

std::optional<RbcLayer> RbcLayer::prefix(int count) const {
  if (rank_ >= count) return std::nullopt;
  return RbcLayer(comm_.split(0, count - 1));
}

}  // namespace hypercube::detail
