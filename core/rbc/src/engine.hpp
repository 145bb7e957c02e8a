#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "block_pool.hpp"
#include "inline_vector.hpp"
#include "key.hpp"
#include "operation.hpp"
#include "tags.hpp"

namespace rbc::detail {

// A message that arrived before the receive it belongs to was posted (or that a receive of
// another communicator took because their tags coincide): its envelope and, for a small
// message, its payload. A large message's payload is still with MPI, under its payload tag.
struct Parked {
  int mpi_source = MPI_PROC_NULL;
  Bytes wire;  // envelope + packed payload
};

// A receive posted to MPI (its MPI request is op->awaited()[slot]), with what it expects.
struct Posted {
  Operation* op;
  std::size_t slot;
  CommKey key;
  Label label;
  int mpi_source;  // MPI_ANY_SOURCE for a wildcard receive
  int mpi_tag;
  std::uint64_t order;  // posting order: MPI matches older receives first
};

// Per MPI communicator, on one rank, shared by all from_mpi handles made on it: the incomplete
// nonblocking operations of every RBC communicator derived from them (any wait progresses all of
// them, as MPI's progress engine does), the receives posted to MPI and the messages parked for
// receives not posted yet (all handles share MPI's matching on the communicator, so a message
// one handle's receive took may belong to another's), and what makes keys and tags. Owned by the
// communicators through shared_ptr.
class Engine {
 public:
  Engine(MPI_Comm comm, int mpi_size, int mpi_rank, int tag_ub)
      : comm_(comm), mpi_size_(mpi_size), mpi_rank_(mpi_rank), layout_(tag_ub) {}
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  MPI_Comm comm() const { return comm_; }
  int mpi_size() const { return mpi_size_; }
  int mpi_rank() const { return mpi_rank_; }
  const TagLayout& layout() const { return layout_; }

  // Generation of a new communicator over `key`'s member set on its handle (see CommKey).
  std::uint64_t next_generation(const CommKey& key) { return handles_[key.handle].generations[key.group()]++; }

  // A communicator of `handle` is live on this rank (hold) or has gone (release). When the last
  // one goes, this rank can never create another of that handle (creation needs a live parent,
  // and no handle is drawn twice), so its generation counts go too: a program that makes
  // handles all the time keeps a bounded engine.
  void hold(std::uint64_t handle) { ++handles_[handle].live; }
  void release(std::uint64_t handle) {
    const auto it = handles_.find(handle);
    if (it != handles_.end() && --it->second.live <= 0) handles_.erase(it);
  }
  // Communicators this rank created as first member of a listed group.
  std::uint64_t next_creation() { return creations_++; }

  // Set by the delete callback of the attribute on the base communicator: it was freed.
  bool base_freed() const { return base_freed_; }
  void mark_base_freed() { base_freed_ = true; }
  void set_keyval(int keyval) { keyval_ = keyval; }

  // Every aligned block of 2^node_bits ranks of the base communicator is on one node (nodes
  // start only at multiples of it); 0 where nothing is known. Agreed by all ranks in from_mpi,
  // so collectives may schedule by it.
  int node_bits() const { return node_bits_; }
  void set_node_bits(int bits) { node_bits_ = bits; }
  // Every rank of the base communicator is on one node (of any size, where node_bits can only
  // say a power of two).
  bool one_node() const { return one_node_; }
  void set_one_node(bool one) { one_node_ = one; }

  // Seconds a wait of the checked build may go without progress before it reports a stall (0:
  // never); see kWatchStalls in wire.hpp.
  double stall_limit() const { return stall_limit_; }
  void set_stall_limit(double seconds) { stall_limit_ = seconds; }

  void add(Operation* op) { active_.push_back(op); }
  void remove(Operation* op) {
    active_.erase(std::remove(active_.begin(), active_.end(), op), active_.end());
    ++removals_;
  }
  bool idle() const { return active_.empty(); }

  // Advances every active operation; completed ones leave the list (their requests see the
  // completion when they next look).
  void progress_all(bool may_test) {
    // A snapshot: an operation's progress may wait (a nested wait advances and removes
    // operations, and new ones may start). Inline, so a round allocates nothing. Only after a
    // removal can a snapshot entry have left the list (and its operation be gone).
    const InlineVector<Operation*, 32> snapshot(active_.data(), active_.size());
    const std::uint64_t removals = removals_;
    for (Operation* op : snapshot) {
      if (removals_ != removals && std::find(active_.begin(), active_.end(), op) == active_.end()) continue;
      if (op->failed()) {  // frozen: only its receives are drained
        if (may_test) op->drain_failed();
        continue;
      }
      // Without testing, an operation advances only once all its requests are complete.
      if (!may_test && op->waiting()) continue;
      // Another request's wait may advance this operation: an error of its own stays with it
      // and its request reports it (Operation::failed), not the wait that happened to run it.
      bool complete = false;
      try {
        complete = op->progress(may_test);
      } catch (...) {
        op->fail(std::current_exception());
        continue;
      }
      if (complete) remove(op);
    }
  }

  const std::vector<Operation*>& active() const { return active_; }

  // Receives posted to MPI.
  void register_posted(Posted posted) {
    posted.order = next_order_++;
    posted_.push_back(posted);
  }
  void unregister_posted(const Operation* op, std::size_t slot) {
    posted_.erase(std::remove_if(posted_.begin(), posted_.end(),
                                 [&](const Posted& p) { return p.op == op && p.slot == slot; }),
                  posted_.end());
  }
  void unregister_all(const Operation* op) {
    if (posted_.empty()) return;  // every operation's end asks; most never posted to MPI
    posted_.erase(std::remove_if(posted_.begin(), posted_.end(), [&](const Posted& p) { return p.op == op; }),
                  posted_.end());
  }
  std::vector<Posted>& posted() { return posted_; }

  std::deque<Parked>& parked() { return parked_; }

  // Wire buffers of `bytes` (small messages: envelope + payload), reused so that a message costs
  // no allocation in the steady state. Contents are undefined.
  Bytes buffer(std::size_t bytes) {
    if (!pool_.empty()) {
      Bytes b = std::move(pool_.back());
      pool_.pop_back();
      if (b.capacity() >= bytes) {
        b.resize(bytes);
        return b;
      }
    }
    Bytes b;
    b.reserve(bytes < kPooledBytes ? kPooledBytes : bytes);
    b.resize(bytes);
    return b;
  }
  void recycle(Bytes&& b) {
    if (b.capacity() >= kPooledBytes && pool_.size() < kPoolSize) pool_.push_back(std::move(b));
  }
  static constexpr std::size_t kPooledBytes = 4096 + 256;
  static constexpr std::size_t kPoolSize = 64;

  // The request and transit lists of finished operations, for new ones: an operation's first
  // await would otherwise allocate both lists afresh (and regrow them).
  void take_lists(std::vector<MPI_Request>& awaited, std::vector<Transit>& transits) {
    if (lists_.empty()) return;
    awaited = std::move(lists_.back().awaited);
    transits = std::move(lists_.back().transits);
    lists_.pop_back();
  }
  void recycle_lists(std::vector<MPI_Request>&& awaited, std::vector<Transit>&& transits) {
    if (awaited.capacity() == 0 || lists_.size() >= kPoolSize) return;
    awaited.clear();
    transits.clear();
    lists_.push_back(Lists{std::move(awaited), std::move(transits)});
  }

  // Large temporaries of collectives.
  ScratchPool& scratch() { return scratch_; }

  // Memory of operations (make_operation).
  BlockPool& operations() { return operations_; }

  // Transfer number of the next large message to `mpi_dest`.
  std::uint64_t next_transfer(int mpi_dest) { return transfers_[mpi_dest]++; }
  // The number of the next payload this process receives from `mpi_source` under a tag it
  // announced itself (post_exchange).
  std::uint64_t next_announced(int mpi_source) { return announced_[mpi_source]++; }

 private:
  MPI_Comm comm_;
  int mpi_size_;
  int mpi_rank_;
  TagLayout layout_;
  struct HandleState {
    int live = 0;
    std::map<decltype(std::declval<CommKey>().group()), std::uint64_t> generations;
  };
  std::map<std::uint64_t, HandleState> handles_;
  std::uint64_t creations_ = 0;
  bool base_freed_ = false;
  int node_bits_ = 0;
  bool one_node_ = false;
  int keyval_ = MPI_KEYVAL_INVALID;
  double stall_limit_ = 0;
  std::vector<Operation*> active_;
  std::uint64_t removals_ = 0;
  std::vector<Posted> posted_;
  std::uint64_t next_order_ = 0;
  std::deque<Parked> parked_;
  std::map<int, std::uint64_t> transfers_;
  std::map<int, std::uint64_t> announced_;
  std::vector<Bytes> pool_;
  struct Lists {
    std::vector<MPI_Request> awaited;
    std::vector<Transit> transits;
  };
  std::vector<Lists> lists_;
  ScratchPool scratch_;
  BlockPool operations_;
};

// A new operation of type Op in memory from the engine's pool; Op's constructor gets `args`.
template <class Op, class... Args>
OperationPtr make_operation(Engine& engine, Args&&... args) {
  void* block = engine.operations().allocate(sizeof(Op));
  Op* op = nullptr;
  try {
    op = new (block) Op(std::forward<Args>(args)...);
  } catch (...) {
    engine.operations().release(block, sizeof(Op));
    throw;
  }
  Operation* base = op;
  base->owned_ = *base->comm_;
  base->comm_ = &base->owned_;
  base->memory_ = block;
  base->memory_bytes_ = sizeof(Op);
  return OperationPtr(base);
}

}  // namespace rbc::detail
