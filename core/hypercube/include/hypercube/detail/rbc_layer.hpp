#pragma once

#include <mpi.h>

#include <optional>
#include <utility>

#include "rbc/comm.hpp"
#include "rbc/request.hpp"

namespace hypercube::detail {

// Communication layer on RBC range communicators: halves and prefixes are O(1) splits.
class RbcLayer {
 public:
  class PendingSend {
   public:
    explicit PendingSend(rbc::Request request) : request_(std::move(request)) {}
    void wait() { request_.wait(); }

   private:
    rbc::Request request_;  // waits on destruction if still running
  };

  // Throws std::invalid_argument if the caller is not a member of `comm`.
  explicit RbcLayer(rbc::RangeComm comm);

  int rank() const { return rank_; }
  int size() const { return size_; }

  PendingSend isend(const void* buf, int count, MPI_Datatype type, int dest, int tag) const;
  int probe_count(int source, int tag, MPI_Datatype type) const;
  void recv(void* buf, int count, MPI_Datatype type, int source, int tag) const;
  int recv_bounded(void* buf, int capacity, MPI_Datatype type, int source, int tag) const;

  RbcLayer half() const;
  std::optional<RbcLayer> prefix(int count) const;

 private:
  rbc::RangeComm comm_;
  int rank_;
  int size_;
};

}  // namespace hypercube::detail
