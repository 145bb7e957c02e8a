#include "rbc/comm.hpp"

#include <string>

#include "engine.hpp"
#include "member_table.hpp"
#include "rbc/error.hpp"
#include "sequencer.hpp"
#include "tags.hpp"

namespace rbc {

namespace {
// Context of a communicator spanning a whole MPI communicator.
constexpr std::uint64_t kRootId = 1;
constexpr std::uint64_t kLeftSalt = 0x5bd1e9955bd1e995ull;
constexpr std::uint64_t kRightSalt = 0xc2b2ae3d27d4eb4full;
}  // namespace

RangeComm::RangeComm(MPI_Comm comm, Range range, int rank, std::uint64_t id,
                     std::shared_ptr<detail::Engine> engine,
                     std::shared_ptr<const detail::MemberTable> table)
    : mpi_comm_(comm),
      range_(range),
      rank_(rank),
      id_(id),
      sequencer_(rank >= 0 ? std::make_shared<detail::Sequencer>() : nullptr),
      engine_(std::move(engine)),
      table_(std::move(table)) {}

RangeComm RangeComm::from_list(std::shared_ptr<const detail::MemberTable> table, std::uint64_t id) const {
  int me = 0;
  MPI_Comm_rank(mpi_comm_, &me);
  const int size = static_cast<int>(table->ranks.size());
  const int rank = table->index_of(me);
  return RangeComm(mpi_comm_, Range(0, size - 1), rank, id, engine_, std::move(table));
}

const std::shared_ptr<detail::Engine>& RangeComm::engine() const {
  require_member();
  return engine_;
}

int RangeComm::mpi_rank(int rank) const {
  const int index = range().at(rank);
  return table_ ? table_->ranks[static_cast<std::size_t>(index)] : index;
}

int RangeComm::rank_of_mpi(int mpi_rank) const {
  const int index = table_ ? table_->index_of(mpi_rank) : mpi_rank;
  return index < 0 ? -1 : range().rank_of(index);
}

RangeComm RangeComm::from_mpi(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw Error("from_mpi: MPI_COMM_NULL is not a communicator");
  // MPI_TAG_UB is an attribute of MPI_COMM_WORLD (Open MPI does not copy it to derived
  // communicators); its value holds for every communicator.
  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  if (!flag || *tag_ub < detail::kRequiredTagUb) {
    throw Error("MPI_TAG_UB of this MPI library is " + std::to_string(flag ? *tag_ub : -1) +
                "; RBC needs 2^31-1 to keep communicators apart in the tag");
  }
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  return RangeComm(comm, Range(0, size - 1), rank, kRootId, std::make_shared<detail::Engine>(size));
}

void RangeComm::require_member() const {
  if (rank_ < 0) {
    if (mpi_comm_ == MPI_COMM_NULL) throw Error("operation on an empty RangeComm (default-constructed)");
    throw Error("the calling process is not a member of the communicator over MPI ranks [" +
                std::to_string(range_.first()) + ".." + std::to_string(range_.last()) +
                " stride " + std::to_string(range_.stride()) + "]");
  }
}

int RangeComm::rank() const {
  require_member();
  return rank_;
}

int RangeComm::size() const {
  require_member();
  return range_.size();
}

const Range& RangeComm::range() const {
  require_member();
  return range_;
}

detail::Sequencer& RangeComm::sequencer() const {
  require_member();
  return *sequencer_;
}

std::uint32_t RangeComm::context() const { return static_cast<std::uint32_t>(id_) & detail::kContextMask; }

RangeComm RangeComm::child(const Range& members, std::uint64_t salt) const {
  int my_mpi_rank = 0;
  MPI_Comm_rank(mpi_comm_, &my_mpi_rank);
  const int my_index = table_ ? table_->index_of(my_mpi_rank) : my_mpi_rank;
  return RangeComm(mpi_comm_, members, members.rank_of(my_index), detail::child_id(id_ ^ salt, members),
                   engine_, table_);
}

RangeComm RangeComm::split(int first, int last, int stride) const {
  require_member();
  return child(range_.sub(first, last, stride), 0);
}

std::pair<RangeComm, RangeComm> RangeComm::janus_split(int left_last, int right_first) const {
  require_member();
  const int p = range_.size();
  if (left_last < 0 || left_last >= p || right_first < 0 || right_first >= p) {
    throw Error("janus_split(" + std::to_string(left_last) + ", " + std::to_string(right_first) +
                "): both bounds must be ranks of the communicator of size " + std::to_string(p));
  }
  if (right_first > left_last + 1) {
    throw Error("janus_split(" + std::to_string(left_last) + ", " + std::to_string(right_first) +
                "): the halves must cover every rank (right_first <= left_last + 1)");
  }
  // Salted apart from plain splits and from each other, so the halves stay distinct even where
  // they span the same ranks.
  return {child(range_.sub(0, left_last), kLeftSalt), child(range_.sub(right_first, p - 1), kRightSalt)};
}

}  // namespace rbc
