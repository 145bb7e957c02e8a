#pragma once

// The two communication layers JQuick runs on. The algorithm (sorter.hpp) is written once
// against this small interface:
//
//   Comm                      a group communicator (value type)
//   Pool                      the pending nonblocking operations of one PE; progress() blocks
//                             until at least one completes and runs its continuation; poll()
//                             (RBC layer) advances them once without blocking, for local work
//                             between calls
//   gather_merge, allgather_merge, bcast, scan_and_bcast, allgather, isend, irecv
//                             start an operation in a Pool; the continuation runs on completion.
//                             With `now` (the first level's collectives, which every member calls
//                             with nothing else of the sort in flight) the RBC layer runs the
//                             blocking collective and the continuation at once: no request, and
//                             on a from_mpi handle bare messages (the MPI layer ignores it)
//   scan_and_bcast_now        the same scan, blocking (the sort's first and last agreement, when
//                             nothing else is in flight: no pool, request or continuation)
//   create_child, release     group communicators for the next level
//
// Pools never spin on test: when nothing has completed they block in wait_any (RBC) or
// MPI_Waitany, so simulated time advances under SMPI.

#include <mpi.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "rbc/rbc.hpp"

namespace jquick::detail {

// Throws jquick::Error naming `what` unless `code` is MPI_SUCCESS.
void check_mpi(int code, const char* what);

using Done = std::function<void()>;
using RecvDone = std::function<void(int source, int count)>;

class MpiPool {
 public:
  using Callback = std::function<void(const MPI_Status&)>;
  void add(MPI_Request request, Callback callback);
  bool empty() const { return pending_ == 0; }
  void progress();
  void poll();  // RbcPool::poll's part: one MPI_Testany, never blocks

 private:
  void compact();
  void run(int index, const MPI_Status& status);  // the continuation of requests_[index]

  std::vector<MPI_Request> requests_;
  std::vector<Callback> callbacks_;
  std::vector<Callback> completed_;  // operations that completed when they were started
  std::size_t pending_ = 0;
};

// Progress policy (deadlock-free): run what has completed; otherwise, while RBC collectives
// (or RBC receives that are posted to MPI) are pending, block in rbc::wait_any on them (sends and
// posted receives progress inside MPI meanwhile); then block in MPI_Waitany on posted MPI
// requests; then, if only probe-based wildcard receives remain, block in rbc::probe for one and
// receive it; with only RBC sends left, wait for those. A PE never blocks in a probe while a
// collective needs it, and never waits on its sends while a probe-based receive is open.
class RbcPool {
 public:
  using Callback = std::function<void(const rbc::Status*)>;
  void add_send(rbc::Request request);
  void add(rbc::Request request, Callback callback, bool wants_status = false);
  void add_posted(MPI_Request request, MpiPool::Callback callback) {
    posted_.add(request, std::move(callback));
  }
  // One message from any member of `comm` with `tag`, at most `capacity` elements, into buf.
  void add_wildcard_receive(const rbc::RangeComm& comm, int tag, void* buf, int capacity,
                            MPI_Datatype type, RecvDone done);
  bool empty() const {
    return others_.pending == 0 && sends_.pending == 0 && posted_.empty() && slots_.empty();
  }
  // Runs the continuation of at least one completed operation, blocking until one completes.
  void progress();
  // Advances every pending operation once and runs the continuations of those that completed;
  // never blocks (for local work between calls, while messages travel).
  void poll();

 private:
  struct Requests {
    // What to do once requests[i] completes.
    struct Entry {
      Callback callback;
      bool handled;
      bool wants_status;
    };
    std::vector<rbc::Request> requests;  // contiguous for rbc::wait_any
    std::vector<Entry> entries;          // parallel to requests
    std::size_t pending = 0;
    void add(rbc::Request request, Callback callback, bool wants_status);
    bool run_completed();
    void test_each();
    void run(std::size_t index);
    void wait_one();
    void compact();
  };
  struct Slot {
    rbc::RangeComm comm;
    int tag;
    void* buf;
    int capacity;
    MPI_Datatype type;
    RecvDone done;
  };
  void receive_one();

  Requests others_;
  Requests sends_;
  MpiPool posted_;
  std::vector<Slot> slots_;
};

// Collectives and group splits are RBC's. The data exchange either uses posted receives from
// MPI_ANY_SOURCE on one channel over all of the root's ranks (posted = true), or rbc::probe +
// rbc::recv on the group's RangeComm (posted = false). Both are correct; they differ under SMPI,
// whose MPI_Probe (like RBC's wildcard receive on a sub-range, which polls MPI_Iprobe) is a
// polling loop that injects smpi/iprobe seconds of simulated time per failed probe, while a
// posted receive lets the PE block until the message arrives. The channel is an RBC
// communicator over the whole root when the root spans its MPI communicator (RBC posts its
// wildcard receives to MPI there; no per-rank copy of the group, which matters at 2^15 simulated
// ranks), else an MPI communicator over the root's members. On the channel the tag tells apart
// the kind, the level's parity and which of the receiver's (at most two) groups the data
// belongs to, so no message can match a receive of another group or level.
class RbcLayer {
 public:
  using Comm = rbc::RangeComm;
  using Pool = RbcPool;

  RbcLayer(const rbc::RangeComm& root, bool posted);
  // A layer over `part`, a range of `whole`'s root, that sends its data on `whole`'s channel
  // (no communicator to make; `whole` must outlive it). The part's messages need tags that
  // `whole`'s other traffic in flight does not use.
  RbcLayer(const RbcLayer& whole, const rbc::RangeComm& part);
  static constexpr bool kParts = true;
  ~RbcLayer();
  RbcLayer(const RbcLayer&) = delete;
  RbcLayer& operator=(const RbcLayer&) = delete;
  const Comm& root() const { return root_; }
  // Where a sort's buffers borrow their memory (detail::Buffer).
  const rbc::RangeComm* scratch_home() const { return &root_; }
  static int rank(const Comm& comm) { return comm.rank(); }
  static int size(const Comm& comm) { return comm.size(); }

  // Every member contributes a sorted run; the root receives all `total` elements sorted.
  void gather_merge(Pool& pool, const Comm& comm, const void* send, int count, void* recv,
                    int total, MPI_Datatype type, const rbc::Merger& merge, Done done, bool now = false);
  // The same, every member receiving them (rbc::iallgatherm, one collective). Its schedule is
  // halves where every member calls it with nothing else of the sort in flight (`now`) on one
  // node, the fold otherwise: deeper, a janus PE (its right group's first member) may be busy in
  // its other group, and the fold needs it only at the start and the end (halves made a sort on
  // the simulated 16-core node, n/p = 65536, 2.6% slower); across nodes the fold's butterfly
  // crosses in fewer rounds.
  static constexpr bool kMergingAllgather = true;
  // Whether all of `comm`'s members share one node (rbc::RangeComm::on_one_node).
  bool within_node(const Comm& comm) const;
  void allgather_merge(Pool& pool, const Comm& comm, const void* send, int count, void* recv,
                       int total, MPI_Datatype type, const rbc::Merger& merge, Done done, bool now = false);
  // Which call of allgather_merge's merge function is its last, whose result is only kept
  // (rbc::allgatherm_partial_call; 0: none), for `total_bytes` in all.
  int allgather_partial_call(const Comm& comm, std::int64_t total_bytes, bool now) const;
  void bcast(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type, int root,
             Done done);
  // Inclusive prefix sums and totals of `count` long longs.
  void scan_and_bcast(Pool& pool, const Comm& comm, const long long* send, long long* prefix,
                      long long* total, int count, Done done, bool now = false);
  static void scan_and_bcast_now(const Comm& comm, const long long* send, long long* prefix,
                                 long long* total, int count);
  // Every member's `count` long longs, in rank order, to every member: with `now`
  // rbc::allgather; otherwise allgatherm's fold with a merge that keeps runs, for the reason
  // allgather_merge takes it there (rbc::iallgather by halves on one node made sorts up to 1.2%
  // slower: docs/benchmarks.md, "The allgather by halves on one node").
  void allgather(Pool& pool, const Comm& comm, const long long* send, long long* recv, int count,
                 Done done, bool now = false);
  void isend(Pool& pool, const Comm& comm, const void* buf, int count, MPI_Datatype type,
             int dest, int tag);
  void irecv(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type, int source,
             int tag, RecvDone done);
  // One message from any member; `capacity` bounds it, it may be shorter.
  void receive_any(Pool& pool, const Comm& comm, void* buf, int capacity, MPI_Datatype type,
                   int tag, RecvDone done);

  // Local: members of parent range [first, last] (parent ranks) call it; no one else needs to.
  bool creation_needs_all_parent_members() const { return false; }
  Comm create_child(const Comm& parent, int first, int last, bool member, int which);
  void release(Comm& comm) { comm = Comm(); }

 private:
  // Rank on the channel of member `rank` of `comm`, and back.
  int data_rank(const Comm& comm, int rank) const { return numbering_.rank_of_mpi(comm.mpi_rank(rank)); }
  static int group_rank(const Comm& comm, const Comm& numbering, int data_rank) {
    return comm.rank_of_mpi(numbering.mpi_rank(data_rank));
  }

  rbc::RangeComm root_;
  rbc::RangeComm numbering_;        // whose ranks the channel's are: the root, or the whole's
  rbc::RangeComm channel_;          // posted, root spans its MPI communicator
  MPI_Comm data_ = MPI_COMM_NULL;  // posted, root is a part of its MPI communicator
  bool owns_data_ = true;
};

// A native MPI communicator of one group.
struct MpiGroupComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1;
  int size = 0;
};

class MpiLayer {
 public:
  using Comm = MpiGroupComm;
  using Pool = MpiPool;

  // Duplicates `comm` for the top level (freed by the destructor). use_split selects
  // MPI_Comm_split instead of MPI_Comm_create_group for the groups of later levels.
  MpiLayer(MPI_Comm comm, bool use_split);
  ~MpiLayer();
  MpiLayer(const MpiLayer&) = delete;
  MpiLayer& operator=(const MpiLayer&) = delete;

  const Comm& root() const { return root_; }
  const rbc::RangeComm* scratch_home() const { return nullptr; }  // plain vectors
  static int rank(const Comm& comm) { return comm.rank; }
  static int size(const Comm& comm) { return comm.size; }

  // MPI_Igather of the counts, MPI_Igatherv of the runs, then a local merge at the root.
  void gather_merge(Pool& pool, const Comm& comm, const void* send, int count, void* recv,
                    int total, MPI_Datatype type, const rbc::Merger& merge, Done done, bool now = false);
  // gather_merge, then MPI_Ibcast of the result.
  static constexpr bool kMergingAllgather = false;
  static constexpr bool kParts = false;
  bool within_node(const Comm&) const { return false; }
  void allgather_merge(Pool& pool, const Comm& comm, const void* send, int count, void* recv,
                       int total, MPI_Datatype type, const rbc::Merger& merge, Done done, bool now = false);
  // Every merge call's result is sent on or kept whole.
  int allgather_partial_call(const Comm&, std::int64_t, bool) const { return 0; }
  void bcast(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type, int root,
             Done done);
  // MPI_Iscan, then MPI_Ibcast of the last rank's prefix.
  void scan_and_bcast(Pool& pool, const Comm& comm, const long long* send, long long* prefix,
                      long long* total, int count, Done done, bool now = false);
  // MPI_Scan, then MPI_Bcast of the last rank's prefix.
  static void scan_and_bcast_now(const Comm& comm, const long long* send, long long* prefix,
                                 long long* total, int count);
  // MPI_Iallgather.
  void allgather(Pool& pool, const Comm& comm, const long long* send, long long* recv, int count,
                 Done done, bool now = false);
  void isend(Pool& pool, const Comm& comm, const void* buf, int count, MPI_Datatype type,
             int dest, int tag);
  void irecv(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type, int source,
             int tag, RecvDone done);
  // MPI_Irecv from MPI_ANY_SOURCE with the capacity as count: MPI_Waitany covers it.
  void receive_any(Pool& pool, const Comm& comm, void* buf, int capacity, MPI_Datatype type,
                   int tag, RecvDone done) {
    irecv(pool, comm, buf, capacity, type, MPI_ANY_SOURCE, tag, std::move(done));
  }

  // MPI_Comm_split is collective over the parent, so with it non-members call too.
  bool creation_needs_all_parent_members() const { return use_split_; }
  Comm create_child(const Comm& parent, int first, int last, bool member, int which);
  void release(Comm& comm);

 private:
  Comm root_;
  bool use_split_;
};

}  // namespace jquick::detail
