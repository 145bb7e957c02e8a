#include "hypercube/detail/mpi_layer.hpp"

#include <stdexcept>
#include <string>

namespace hypercube::detail {

namespace {

// Tag of MPI_Comm_create_group; creations on one parent happen one after another per member.
constexpr int kCreateGroupTag = 4242;

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    throw std::runtime_error(std::string("hypercube: ") + call + " failed with MPI error " +
                             std::to_string(code));
  }
}

}  // namespace

void MpiLayer::PendingSend::wait() {
  if (request_ != MPI_REQUEST_NULL) check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
}

MpiLayer MpiLayer::borrow(MPI_Comm comm, MpiCommCreation creation) {
  if (comm == MPI_COMM_NULL) throw std::invalid_argument("hypercube: communicator is MPI_COMM_NULL");
  return MpiLayer(comm, creation, false);
}

MpiLayer::MpiLayer(MPI_Comm comm, MpiCommCreation creation, bool owned)
    : comm_(comm), creation_(creation), owned_(owned) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiLayer::MpiLayer(MpiLayer&& other) noexcept
    : comm_(other.comm_),
      creation_(other.creation_),
      owned_(other.owned_),
      rank_(other.rank_),
      size_(other.size_) {
  other.comm_ = MPI_COMM_NULL;
  other.owned_ = false;
}

MpiLayer& MpiLayer::operator=(MpiLayer&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = other.comm_;
    creation_ = other.creation_;
    owned_ = other.owned_;
    rank_ = other.rank_;
    size_ = other.size_;
    other.comm_ = MPI_COMM_NULL;
    other.owned_ = false;
  }
  return *this;
}

MpiLayer::~MpiLayer() { release(); }

void MpiLayer::release() {
  if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
  owned_ = false;
}

MpiLayer::PendingSend MpiLayer::isend(const void* buf, int count, MPI_Datatype type, int dest,
                                      int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Isend(buf, count, type, dest, tag, comm_, &request), "MPI_Isend");
  return PendingSend(request);
}

int MpiLayer::probe_count(int source, int tag, MPI_Datatype type) const {
  MPI_Status status;
  check(MPI_Probe(source, tag, comm_, &status), "MPI_Probe");
  int count = 0;
  check(MPI_Get_count(&status, type, &count), "MPI_Get_count");
  if (count == MPI_UNDEFINED) {
    throw std::runtime_error("hypercube: received a message that is not a whole number of elements");
  }
  return count;
}

void MpiLayer::recv(void* buf, int count, MPI_Datatype type, int source, int tag) const {
  check(MPI_Recv(buf, count, type, source, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
}

int MpiLayer::recv_bounded(void* buf, int capacity, MPI_Datatype type, int source,
                           int tag) const {
  MPI_Status status;
  check(MPI_Recv(buf, capacity, type, source, tag, comm_, &status), "MPI_Recv");
  int count = 0;
  check(MPI_Get_count(&status, type, &count), "MPI_Get_count");
  return count;
}

std::optional<MpiLayer> MpiLayer::sub(int first, int count, bool member) const {
  MPI_Comm out = MPI_COMM_NULL;
  if (creation_ == MpiCommCreation::kSplit) {
    // Every rank of the parent takes part; the color names the part (its first rank).
    check(MPI_Comm_split(comm_, member ? first : MPI_UNDEFINED, rank_, &out), "MPI_Comm_split");
  } else if (member) {
    MPI_Group parent_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
    check(MPI_Comm_group(comm_, &parent_group), "MPI_Comm_group");
    int range[1][3] = {{first, first + count - 1, 1}};
    check(MPI_Group_range_incl(parent_group, 1, range, &group), "MPI_Group_range_incl");
    check(MPI_Comm_create_group(comm_, group, kCreateGroupTag, &out), "MPI_Comm_create_group");
    MPI_Group_free(&group);
    MPI_Group_free(&parent_group);
  }
  if (!member) return std::nullopt;
  return MpiLayer(out, creation_, true);
}

MpiLayer MpiLayer::half() const {
  const int half_size = size_ / 2;
  return rank_ < half_size ? *sub(0, half_size, true) : *sub(half_size, size_ - half_size, true);
}

std::optional<MpiLayer> MpiLayer::prefix(int count) const {
  return sub(0, count, rank_ < count);
}

}  // namespace hypercube::detail
