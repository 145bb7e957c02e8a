#include "rbc/comm.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "access.hpp"
#include "cost/charge.hpp"
#include "engine.hpp"
#include "key.hpp"
#include "member_table.hpp"
#include "rbc/error.hpp"
#include "rbc/point_to_point.hpp"
#include "rbc/request.hpp"
#include "sequencer.hpp"
#include "wire.hpp"

namespace rbc {

namespace detail {

namespace {

// Delete callback of the attribute a handle puts on its base communicator: MPI calls it when
// the user frees the communicator, and RBC's next operation then reports it instead of using a
// dead handle.
int on_base_freed(MPI_Comm, int, void* attribute, void*) {
  static_cast<Engine*>(attribute)->mark_base_freed();
  return MPI_SUCCESS;
}

// The engine of (MPI communicator, calling process), and on the communicator's rank 0 the
// identity of a new handle. All handles on one communicator must share the engine, and MPI
// offers no way to find state a previous handle left on a communicator without a key known in
// advance, so this is the one piece of process-wide state in RBC. It is keyed by the caller's
// MPI_COMM_WORLD rank as well: under SMPI, all simulated ranks share one copy of it, and each
// finds only its own engines.
//
// The handle counter outlives the engine: when rank 0 drops its last handle on a communicator
// its engine goes, while other ranks may keep communicators of that handle; a counter that
// restarted with the next engine would hand the next from_mpi the same identity. One slot per
// MPI communicator value this rank has used RBC on (MPI reuses the values of freed ones).
struct SharedEngine {
  std::shared_ptr<Engine> engine;
  std::uint64_t handle = 0;  // drawn on rank 0 only
};

SharedEngine shared_engine(MPI_Comm comm, int size, int rank, int tag_ub) {
  struct Slot {
    std::weak_ptr<Engine> engine;
    std::uint64_t handles = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<MPI_Comm, int>, Slot> slots;
  int world_rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  const std::lock_guard<std::mutex> lock(mutex);
  Slot& slot = slots[{comm, world_rank}];
  SharedEngine shared;
  if (rank == 0) shared.handle = slot.handles++;
  shared.engine = slot.engine.lock();
  if (shared.engine && !shared.engine->base_freed()) return shared;
  const double stall_limit = kWatchStalls ? stall_limit_from_environment() : 0.0;
  shared.engine = std::make_shared<Engine>(comm, size, rank, tag_ub);
  shared.engine->set_stall_limit(stall_limit);
  slot.engine = shared.engine;
  int keyval = MPI_KEYVAL_INVALID;
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_base_freed, &keyval, nullptr), "MPI_Comm_create_keyval");
  shared.engine->set_keyval(keyval);
  check_mpi(MPI_Comm_set_attr(comm, keyval, shared.engine.get()), "MPI_Comm_set_attr");
  return shared;
}

// A 32-bit FNV-1a digest of this process's MPI_Get_processor_name: its node, for schedules
// only (a collision hides a node boundary from them; results never depend on it).
std::uint32_t node_digest() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check_mpi(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  std::uint32_t digest = 2166136261u;
  for (int i = 0; i < length; ++i) digest = (digest ^ static_cast<unsigned char>(name[i])) * 16777619u;
  return digest;
}

}  // namespace

Engine::~Engine() {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized || keyval_ == MPI_KEYVAL_INVALID) return;
  if (!base_freed_) MPI_Comm_delete_attr(comm_, keyval_);
  MPI_Comm_free_keyval(&keyval_);
}

}  // namespace detail

RangeComm::RangeComm(MPI_Comm comm, Range range, int rank, const detail::CommKey& key,
                     std::shared_ptr<detail::Engine> engine,
                     std::shared_ptr<const detail::MemberTable> table)
    : mpi_comm_(comm),
      range_(range),
      rank_(rank),
      id_(detail::digest(key)),
      sequencer_(rank >= 0 ? std::make_shared<detail::Sequencer>(key, engine) : nullptr),
      engine_(std::move(engine)),
      table_(std::move(table)) {}

RangeComm RangeComm::from_list(std::shared_ptr<const detail::MemberTable> table, std::uint64_t list,
                               bool counted) const {
  const int size = static_cast<int>(table->ranks.size());
  const int rank = table->index_of(engine_->mpi_rank());
  detail::CommKey key;
  key.handle = sequencer_->key().handle;
  key.list = list;
  key.first = 0;
  key.last = size - 1;
  key.stride = 1;
  if (rank >= 0 && counted) key.generation = engine_->next_generation(key);
  return RangeComm(mpi_comm_, Range(0, size - 1), rank, key, engine_, std::move(table));
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
  // communicators); its value holds for every communicator. The standard guarantees 32767.
  int* tag_ub = nullptr;
  int flag = 0;
  detail::check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag), "MPI_Comm_get_attr");
  if (!flag || *tag_ub < 32767) {
    throw Error("MPI_TAG_UB of this MPI library is " + std::to_string(flag ? *tag_ub : -1) +
                ", below the 32767 the MPI standard guarantees");
  }
  int size = 0, rank = 0;
  detail::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  detail::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  auto [engine, handle] = detail::shared_engine(comm, size, rank, *tag_ub);
  // The handle's identity: a number rank 0 draws for this communicator, never twice while the
  // process lives, so handles on one MPI communicator always differ; handles on different MPI
  // communicators are kept apart by MPI itself.
  detail::check_mpi(MPI_Bcast(&handle, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  detail::CommKey key;
  key.handle = handle;
  key.first = 0;
  key.last = size - 1;
  key.stride = 1;
  key.generation = engine->next_generation(key);
  RangeComm world(comm, Range(0, size - 1), rank, key, engine);
  // The largest 2^a (up to size) such that every aligned block of 2^a ranks shares a node
  // (Engine::node_bits): nodes start only at multiples of it. Each rank compares its node with
  // its left neighbour's (an RBC message on the new handle: nothing else can take it), and one
  // MPI reduction agrees; an MPI_Exscan would be linear in p under SMPI.
  const std::uint32_t mine = detail::node_digest();
  std::uint32_t left = mine;
  Request to_right;
  if (rank + 1 < size) to_right = isend(&mine, 1, MPI_UINT32_T, rank + 1, 0, world);
  if (rank > 0) recv(&left, 1, MPI_UINT32_T, rank - 1, 0, world);
  to_right.wait();
  int twos = 30;  // how many times two divides the first rank of a node starting here
  if (left != mine) {
    twos = 0;
    while (rank % (2 << twos) == 0) ++twos;
  }
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &twos, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  int bits = 0;
  while ((2 << bits) <= size && bits < twos) ++bits;
  engine->set_node_bits(bits);
  engine->set_one_node(twos == 30);
  return world;
}

namespace {

// Out of line, so that the check every operation makes several times stays a few instructions.
[[noreturn]] __attribute__((noinline, cold)) void refuse(MPI_Comm comm, const Range& range, int rank) {
  if (rank < 0) {
    if (comm == MPI_COMM_NULL) throw Error("operation on an empty RangeComm (default-constructed or moved from)");
    throw Error("the calling process is not a member of the communicator over MPI ranks [" +
                std::to_string(range.first()) + ".." + std::to_string(range.last()) + " stride " +
                std::to_string(range.stride()) + "]");
  }
  throw Error("the MPI communicator this RangeComm was made from has been freed", MPI_ERR_COMM);
}

}  // namespace

void RangeComm::require_member() const {
  if (rank_ < 0 || engine_->base_freed()) [[unlikely]] refuse(mpi_comm_, range_, rank_);
}

int RangeComm::rank() const {
  require_member();
  return rank_;
}

int RangeComm::size() const {
  require_member();
  return range_.size();
}

int RangeComm::node_members() const {
  require_member();
  return 1 << detail::CommAccess::node_bits(*this);
}

bool RangeComm::on_one_node() const {
  require_member();
  if (engine_->one_node()) return true;
  const int a = engine_->node_bits();
  if (a == 0 || table_) return false;
  return range_.first() >> a == range_.last() >> a;
}

const Range& RangeComm::range() const {
  require_member();
  return range_;
}

detail::Sequencer& RangeComm::sequencer() const {
  require_member();
  return *sequencer_;
}

const detail::CommKey& RangeComm::key() const {
  require_member();
  return sequencer_->key();
}

RangeComm RangeComm::child(const Range& members, std::uint32_t tag_salt) const {
  const int my_mpi_rank = engine_->mpi_rank();
  const int my_index = table_ ? table_->index_of(my_mpi_rank) : my_mpi_rank;
  const int rank = members.rank_of(my_index);
  detail::CommKey key = sequencer_->key();
  key.first = members.first();
  key.last = members.last();
  key.stride = members.stride();
  key.tag = tag_salt;
  key.generation = rank >= 0 ? engine_->next_generation(key) : 0;
  cost::charge(cost::Kernel::communicator, 1);  // simulation only: the local work of a split
  return RangeComm(mpi_comm_, members, rank, key, engine_, table_);
}

RangeComm RangeComm::split(int first, int last, int stride) const {
  require_member();
  return child(range_.sub(first, last, stride));
}

RangeComm RangeComm::split_tagged(int first, int last, int stride, int tag) const {
  require_member();
  return child(range_.sub(first, last, stride), static_cast<std::uint32_t>(tag) + 1);
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
  RangeComm left = child(range_.sub(0, left_last));
  RangeComm right = child(range_.sub(right_first, p - 1));
  return {std::move(left), std::move(right)};
}

}  // namespace rbc
