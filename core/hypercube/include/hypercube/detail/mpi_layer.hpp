#pragma once

#include <mpi.h>

#include <optional>

#include "hypercube/options.hpp"

namespace hypercube::detail {

// Communication layer on native MPI communicators. Move-only: a layer made by half() or
// prefix() owns its communicator and frees it; a borrowed one does not.
class MpiLayer {
 public:
  // A send in flight; waits for it on wait() or destruction.
  class PendingSend {
   public:
    explicit PendingSend(MPI_Request request) : request_(request) {}
    PendingSend(PendingSend&& other) noexcept : request_(other.request_) {
      other.request_ = MPI_REQUEST_NULL;
    }
    PendingSend& operator=(PendingSend&&) = delete;
    PendingSend(const PendingSend&) = delete;
    ~PendingSend() { wait(); }
    void wait();

   private:
    MPI_Request request_;
  };

  static MpiLayer borrow(MPI_Comm comm, MpiCommCreation creation);
  MpiLayer(MpiLayer&& other) noexcept;
  MpiLayer& operator=(MpiLayer&& other) noexcept;
  MpiLayer(const MpiLayer&) = delete;
  MpiLayer& operator=(const MpiLayer&) = delete;
  ~MpiLayer();

  int rank() const { return rank_; }
  int size() const { return size_; }

  PendingSend isend(const void* buf, int count, MPI_Datatype type, int dest, int tag) const;
  // Blocks until a message from `source` with `tag` is pending; returns its element count.
  int probe_count(int source, int tag, MPI_Datatype type) const;
  void recv(void* buf, int count, MPI_Datatype type, int source, int tag) const;
  // Receives a message of at most `capacity` elements; returns how many arrived.
  int recv_bounded(void* buf, int capacity, MPI_Datatype type, int source, int tag) const;

  // The half of this communicator (ranks [0, size/2) or [size/2, size)) that holds the caller.
  // Every member calls it; size must be even.
  MpiLayer half() const;
  // Ranks [0, count) as a communicator; every member of this one calls it, those outside the
  // prefix get nothing.
  std::optional<MpiLayer> prefix(int count) const;

 private:
  MpiLayer(MPI_Comm comm, MpiCommCreation creation, bool owned);
  // Ranks [first, first + count) as a new communicator; `member` says whether the caller is
  // one of them. With kSplit every rank of this communicator must call it.
  std::optional<MpiLayer> sub(int first, int count, bool member) const;
  void release();

  MPI_Comm comm_ = MPI_COMM_NULL;
  MpiCommCreation creation_ = MpiCommCreation::kSplit;
  bool owned_ = false;
  int rank_ = -1;
  int size_ = 0;
};

}  // namespace hypercube::detail
