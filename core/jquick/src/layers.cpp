#include "jquick/detail/layers.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cost/charge.hpp"
#include "jquick/config.hpp"

namespace jquick::detail {

namespace {

// Above every data tag the sorter uses on a group communicator.
constexpr int kCreateGroupTag = 1000;

}  // namespace

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(what) + " failed: " + std::string(text, length));
}

namespace {

// MPI_Comm_create_group over ranks first..last (stride) of `parent`; every step checked, the
// groups freed whatever fails.
MPI_Comm create_range_group(MPI_Comm parent, int first, int last, int stride, int tag) {
  MPI_Group parent_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(parent, &parent_group), "MPI_Comm_group");
  int range[1][3] = {{first, last, stride}};
  const int included = MPI_Group_range_incl(parent_group, 1, range, &group);
  MPI_Comm created = MPI_COMM_NULL;
  const int code = included == MPI_SUCCESS ? MPI_Comm_create_group(parent, group, tag, &created) : included;
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  MPI_Group_free(&parent_group);
  check_mpi(included, "MPI_Group_range_incl");
  check_mpi(code, "MPI_Comm_create_group");
  return created;
}

void rank_and_size(MPI_Comm comm, int& rank, int& size) {
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
}

int received_count(const MPI_Status& status, MPI_Datatype type) {
  int received = 0;
  check_mpi(MPI_Get_count(&status, type, &received), "MPI_Get_count");
  return received;
}

}  // namespace

// ---------------------------------------------------------------------------------- RbcPool

void RbcPool::Requests::add(rbc::Request request, Callback callback, bool status) {
  // Most pools hold a few operations: reserve once rather than regrow from one element.
  if (requests.capacity() == 0) {
    requests.reserve(8);
    entries.reserve(8);
  }
  requests.push_back(std::move(request));
  entries.push_back(Entry{std::move(callback), false, status});
  ++pending;
}

void RbcPool::Requests::run(std::size_t index) {
  Entry& entry = entries[index];
  entry.handled = true;
  --pending;
  // The continuation may add operations (reallocating the vectors): take what it needs first.
  Callback callback = std::move(entry.callback);
  rbc::Status status;
  const bool with_status = entry.wants_status;
  if (with_status) status = requests[index].status();
  cost::charge(cost::Kernel::continuation, 1);  // simulation only
  if (callback) callback(with_status ? &status : nullptr);
}

void RbcPool::Requests::compact() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (entries[i].handled) continue;
    if (kept != i) {
      requests[kept] = std::move(requests[i]);
      entries[kept] = std::move(entries[i]);
    }
    ++kept;
  }
  requests.resize(kept);
  entries.resize(kept);
}

// Operations completed as a side effect of an earlier wait are not reported by wait_any again:
// their continuations run here. Looks only at flags, calls no MPI function.
bool RbcPool::Requests::run_completed() {
  if (requests.size() > 32 && pending * 2 < requests.size()) compact();
  bool ran = false;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!entries[i].handled && requests[i].done()) {
      run(i);
      ran = true;
    }
  }
  return ran;
}

void RbcPool::Requests::test_each() {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!entries[i].handled && requests[i].test()) run(i);
  }
}

void RbcPool::Requests::wait_one() {
  const int index = rbc::wait_any(requests);
  if (index >= 0) run(static_cast<std::size_t>(index));
}

void RbcPool::add_send(rbc::Request request) { sends_.add(std::move(request), nullptr, false); }

void RbcPool::add(rbc::Request request, Callback callback, bool wants_status) {
  others_.add(std::move(request), std::move(callback), wants_status);
}

void RbcPool::add_wildcard_receive(const rbc::RangeComm& comm, int tag, void* buf, int capacity,
                                   MPI_Datatype type, RecvDone done) {
  slots_.push_back(Slot{comm, tag, buf, capacity, type, std::move(done)});
}

void RbcPool::receive_one() {
  Slot slot = std::move(slots_.front());
  slots_.erase(slots_.begin());
  const rbc::Status found = rbc::probe(MPI_ANY_SOURCE, slot.tag, slot.comm);
  const int count = found.count(slot.type);
  if (count > slot.capacity) {
    throw Error("internal: a data message of " + std::to_string(count) +
                " elements exceeds the receiver's remaining share " +
                std::to_string(slot.capacity));
  }
  rbc::recv(slot.buf, count, slot.type, found.source, slot.tag, slot.comm);
  cost::charge(cost::Kernel::continuation, 1);
  slot.done(found.source, count);
}

void RbcPool::progress() {
  if (others_.run_completed() | sends_.run_completed()) return;
  if (others_.pending > 0) {
    others_.wait_one();
  } else if (!posted_.empty()) {
    posted_.progress();
    cost::charge(cost::Kernel::continuation, 1);
  } else if (!slots_.empty()) {
    receive_one();
  } else if (sends_.pending > 0) {
    sends_.wait_one();
  }
}

void RbcPool::poll() {
  posted_.poll();
  others_.test_each();
  sends_.test_each();
}

// ---------------------------------------------------------------------------------- MpiPool

void MpiPool::add(MPI_Request request, Callback callback) {
  // Some MPIs (SMPI on one rank) complete a nonblocking collective at once and return
  // MPI_REQUEST_NULL, which MPI_Waitany would never report: run it at the next progress().
  if (request == MPI_REQUEST_NULL) {
    completed_.push_back(std::move(callback));
    ++pending_;
    return;
  }
  requests_.push_back(request);
  callbacks_.push_back(std::move(callback));
  ++pending_;
}

void MpiPool::compact() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    callbacks_[kept] = std::move(callbacks_[i]);
    ++kept;
  }
  requests_.resize(kept);
  callbacks_.resize(kept);
}

void MpiPool::progress() {
  if (pending_ == 0) return;
  if (!completed_.empty()) {
    Callback callback = std::move(completed_.front());
    completed_.erase(completed_.begin());
    --pending_;
    MPI_Status status{};
    status.MPI_SOURCE = MPI_PROC_NULL;
    status.MPI_TAG = MPI_ANY_TAG;
    if (callback) callback(status);
    return;
  }
  if (requests_.size() > 32 && pending_ * 2 < requests_.size()) compact();
  int index = MPI_UNDEFINED;
  MPI_Status status;
  check_mpi(MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index, &status),
            "MPI_Waitany");
  if (index == MPI_UNDEFINED) throw Error("internal: MPI pool has no active request");
  run(index, status);
}

void MpiPool::run(int index, const MPI_Status& status) {
  --pending_;
  Callback callback = std::move(callbacks_[index]);
  if (callback) callback(status);
}

void MpiPool::poll() {
  if (pending_ == 0) return;
  if (!completed_.empty()) {
    progress();
    return;
  }
  int index = MPI_UNDEFINED;
  int flag = 0;
  MPI_Status status;
  check_mpi(MPI_Testany(static_cast<int>(requests_.size()), requests_.data(), &index, &flag, &status),
            "MPI_Testany");
  if (flag && index != MPI_UNDEFINED) run(index, status);
}

// --------------------------------------------------------------------------------- RbcLayer

RbcLayer::RbcLayer(const rbc::RangeComm& root, bool posted) : root_(root), numbering_(root) {
  if (!posted) return;
  int mpi_size = 0;
  check_mpi(MPI_Comm_size(root_.mpi_comm(), &mpi_size), "MPI_Comm_size");
  if (root_.size() == mpi_size) {
    channel_ = root_.split(0, root_.size() - 1);
    return;
  }
  // A range of a larger communicator: collective over the members only.
  data_ = create_range_group(root_.mpi_comm(), root_.first(), root_.last(), root_.stride(), kCreateGroupTag + 7);
}

RbcLayer::RbcLayer(const RbcLayer& whole, const rbc::RangeComm& part)
    : root_(part), numbering_(whole.numbering_), channel_(whole.channel_), data_(whole.data_), owns_data_(false) {}

RbcLayer::~RbcLayer() {
  if (owns_data_ && data_ != MPI_COMM_NULL) MPI_Comm_free(&data_);
}

bool RbcLayer::within_node(const Comm& comm) const { return comm.on_one_node(); }

void RbcLayer::gather_merge(Pool& pool, const Comm& comm, const void* send, int count,
                            void* recv, int total, MPI_Datatype type, const rbc::Merger& merge,
                            Done done, bool now) {
  if (now) {
    rbc::gatherm(send, count, recv, total, type, 0, merge, comm);
    done();
    return;
  }
  pool.add(rbc::igatherm(send, count, recv, total, type, 0, merge, comm),
           [done = std::move(done)](const rbc::Status*) { done(); });
}

namespace {
rbc::AllgathermSchedule merge_schedule(const rbc::RangeComm& comm, bool now) {
  return now && comm.on_one_node() ? rbc::AllgathermSchedule::halves : rbc::AllgathermSchedule::fold;
}
}  // namespace

void RbcLayer::allgather_merge(Pool& pool, const Comm& comm, const void* send, int count,
                               void* recv, int total, MPI_Datatype type, const rbc::Merger& merge,
                               Done done, bool now) {
  const rbc::AllgathermSchedule schedule = merge_schedule(comm, now);
  if (now) {
    rbc::allgatherm(send, count, recv, total, type, merge, comm, schedule);
    done();
    return;
  }
  pool.add(rbc::iallgatherm(send, count, recv, total, type, merge, comm, schedule),
           [done = std::move(done)](const rbc::Status*) { done(); });
}

int RbcLayer::allgather_partial_call(const Comm& comm, std::int64_t total_bytes, bool now) const {
  return rbc::allgatherm_partial_call(comm.size(), comm.rank(), total_bytes, merge_schedule(comm, now));
}

void RbcLayer::bcast(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type,
                     int root, Done done) {
  pool.add(rbc::ibcast(buf, count, type, root, comm),
           [done = std::move(done)](const rbc::Status*) { done(); });
}

void RbcLayer::scan_and_bcast(Pool& pool, const Comm& comm, const long long* send,
                              long long* prefix, long long* total, int count, Done done, bool now) {
  if (now) {
    scan_and_bcast_now(comm, send, prefix, total, count);
    done();
    return;
  }
  pool.add(rbc::iscan_and_bcast(send, prefix, total, count, MPI_LONG_LONG, MPI_SUM, comm),
           [done = std::move(done)](const rbc::Status*) { done(); });
}

void RbcLayer::scan_and_bcast_now(const Comm& comm, const long long* send, long long* prefix,
                                  long long* total, int count) {
  rbc::scan_and_bcast(send, prefix, total, count, MPI_LONG_LONG, MPI_SUM, comm);
}

void RbcLayer::allgather(Pool& pool, const Comm& comm, const long long* send, long long* recv,
                         int count, Done done, bool now) {
  if (now) {
    rbc::allgather(send, count, MPI_LONG_LONG, recv, count, MPI_LONG_LONG, comm);
    done();
    return;
  }
  // The fold, as allgather_merge's below the first level: a janus PE is needed only at its start
  // and end. A merge that keeps both runs leaves each member's counts in their place.
  const rbc::Merger keep = [](void*, void*, void*) {};
  pool.add(rbc::iallgatherm(send, count, recv, count * comm.size(), MPI_LONG_LONG, keep, comm,
                            rbc::AllgathermSchedule::fold),
           [done = std::move(done)](const rbc::Status*) { done(); });
}

void RbcLayer::isend(Pool& pool, const Comm& comm, const void* buf, int count, MPI_Datatype type,
                     int dest, int tag) {
  if (channel_.is_member()) {
    pool.add_send(rbc::isend(buf, count, type, data_rank(comm, dest), tag, channel_));
    return;
  }
  if (data_ == MPI_COMM_NULL) {
    pool.add_send(rbc::isend(buf, count, type, dest, tag, comm));
    return;
  }
  MPI_Request request;
  check_mpi(MPI_Isend(buf, count, type, data_rank(comm, dest), tag, data_, &request), "MPI_Isend");
  pool.add_posted(request, nullptr);
}

void RbcLayer::irecv(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type,
                     int source, int tag, RecvDone done) {
  if (channel_.is_member()) {
    const int from = source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : data_rank(comm, source);
    pool.add(
        rbc::irecv(buf, count, type, from, tag, channel_),
        // The layer outlives its pools: `this` instead of a copy of the root keeps the capture
        // (allocated with the callback) small.
        [this, comm, type, done = std::move(done)](const rbc::Status* status) {
          done(group_rank(comm, numbering_, status->source), status->count(type));
        },
        true);
    return;
  }
  if (data_ == MPI_COMM_NULL) {
    pool.add(
        rbc::irecv(buf, count, type, source, tag, comm),
        [type, done = std::move(done)](const rbc::Status* status) {
          done(status->source, status->count(type));
        },
        true);
    return;
  }
  const int from = source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : data_rank(comm, source);
  MPI_Request request;
  check_mpi(MPI_Irecv(buf, count, type, from, tag, data_, &request), "MPI_Irecv");
  pool.add_posted(request, [this, comm, type, done = std::move(done)](const MPI_Status& status) {
    done(group_rank(comm, numbering_, status.MPI_SOURCE), received_count(status, type));
  });
}

void RbcLayer::receive_any(Pool& pool, const Comm& comm, void* buf, int capacity,
                           MPI_Datatype type, int tag, RecvDone done) {
  if (data_ == MPI_COMM_NULL && !channel_.is_member()) {
    pool.add_wildcard_receive(comm, tag, buf, capacity, type, std::move(done));
  } else {
    irecv(pool, comm, buf, capacity, type, MPI_ANY_SOURCE, tag, std::move(done));
  }
}

RbcLayer::Comm RbcLayer::create_child(const Comm& parent, int first, int last, bool member,
                                      int /*which*/) {
  if (!member) return Comm();
  return parent.split(first, last);
}

// --------------------------------------------------------------------------------- MpiLayer

MpiLayer::MpiLayer(MPI_Comm comm, bool use_split) : use_split_(use_split) {
  check_mpi(MPI_Comm_dup(comm, &root_.comm), "MPI_Comm_dup");
  rank_and_size(root_.comm, root_.rank, root_.size);
}

MpiLayer::~MpiLayer() {
  if (root_.comm != MPI_COMM_NULL) MPI_Comm_free(&root_.comm);
}

void MpiLayer::gather_merge(Pool& pool, const Comm& comm, const void* send, int count,
                            void* recv, int total, MPI_Datatype type, const rbc::Merger& merge,
                            Done done, bool) {
  // State that must outlive the nonblocking calls.
  struct State {
    int count;
    std::vector<int> counts;
    std::vector<int> displs;
  };
  auto state = std::make_shared<State>();
  state->count = count;
  if (comm.rank == 0) state->counts.assign(comm.size, 0);
  MPI_Request request;
  check_mpi(MPI_Igather(&state->count, 1, MPI_INT, state->counts.data(), 1, MPI_INT, 0,
                        comm.comm, &request),
            "MPI_Igather");
  pool.add(request, [&pool, comm, send, recv, total, type, merge, state,
                     done = std::move(done)](const MPI_Status&) mutable {
    if (comm.rank == 0) {
      state->displs.assign(comm.size + 1, 0);
      for (int i = 0; i < comm.size; ++i) state->displs[i + 1] = state->displs[i] + state->counts[i];
      if (state->displs[comm.size] != total) throw Error("internal: sample count mismatch");
    }
    MPI_Request request2;
    check_mpi(MPI_Igatherv(send, state->count, type, recv, state->counts.data(),
                           state->displs.data(), type, 0, comm.comm, &request2),
              "MPI_Igatherv");
    pool.add(request2, [comm, recv, type, merge, state, done = std::move(done)](const MPI_Status&) {
      if (comm.rank == 0) {
        // Pairwise merges of the gathered sorted runs, O(total log p).
        MPI_Aint lb = 0, extent = 0;
        check_mpi(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
        char* base = static_cast<char*>(recv);
        std::vector<int> bounds(state->displs.begin(), state->displs.end());
        while (bounds.size() > 2) {
          std::vector<int> next;
          for (std::size_t i = 0; i + 1 < bounds.size(); i += 2) {
            next.push_back(bounds[i]);
            if (i + 2 < bounds.size()) {
              merge(base + bounds[i] * extent, base + bounds[i + 1] * extent,
                    base + bounds[i + 2] * extent);
            }
          }
          next.push_back(bounds.back());
          bounds.swap(next);
        }
      }
      done();
    });
  });
}

void MpiLayer::allgather_merge(Pool& pool, const Comm& comm, const void* send, int count,
                               void* recv, int total, MPI_Datatype type, const rbc::Merger& merge,
                               Done done, bool) {
  gather_merge(pool, comm, send, count, recv, total, type, merge,
               [this, &pool, comm, recv, total, type, done = std::move(done)]() mutable {
                 bcast(pool, comm, recv, total, type, 0, std::move(done));
               });
}

void MpiLayer::bcast(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type,
                     int root, Done done) {
  MPI_Request request;
  check_mpi(MPI_Ibcast(buf, count, type, root, comm.comm, &request), "MPI_Ibcast");
  pool.add(request, [done = std::move(done)](const MPI_Status&) { done(); });
}

void MpiLayer::scan_and_bcast(Pool& pool, const Comm& comm, const long long* send,
                              long long* prefix, long long* total, int count, Done done, bool) {
  MPI_Request request;
  check_mpi(MPI_Iscan(send, prefix, count, MPI_LONG_LONG, MPI_SUM, comm.comm, &request),
            "MPI_Iscan");
  pool.add(request, [&pool, comm, prefix, total, count,
                     done = std::move(done)](const MPI_Status&) mutable {
    if (comm.rank == comm.size - 1) std::copy(prefix, prefix + count, total);
    MPI_Request request2;
    check_mpi(MPI_Ibcast(total, count, MPI_LONG_LONG, comm.size - 1, comm.comm, &request2),
              "MPI_Ibcast");
    pool.add(request2, [done = std::move(done)](const MPI_Status&) { done(); });
  });
}

void MpiLayer::scan_and_bcast_now(const Comm& comm, const long long* send, long long* prefix,
                                  long long* total, int count) {
  check_mpi(MPI_Scan(send, prefix, count, MPI_LONG_LONG, MPI_SUM, comm.comm), "MPI_Scan");
  if (comm.rank == comm.size - 1) std::copy(prefix, prefix + count, total);
  check_mpi(MPI_Bcast(total, count, MPI_LONG_LONG, comm.size - 1, comm.comm), "MPI_Bcast");
}

void MpiLayer::allgather(Pool& pool, const Comm& comm, const long long* send, long long* recv,
                         int count, Done done, bool) {
  MPI_Request request;
  check_mpi(MPI_Iallgather(send, count, MPI_LONG_LONG, recv, count, MPI_LONG_LONG, comm.comm, &request),
            "MPI_Iallgather");
  pool.add(request, [done = std::move(done)](const MPI_Status&) { done(); });
}

void MpiLayer::isend(Pool& pool, const Comm& comm, const void* buf, int count, MPI_Datatype type,
                     int dest, int tag) {
  MPI_Request request;
  check_mpi(MPI_Isend(buf, count, type, dest, tag, comm.comm, &request), "MPI_Isend");
  pool.add(request, nullptr);
}

void MpiLayer::irecv(Pool& pool, const Comm& comm, void* buf, int count, MPI_Datatype type,
                     int source, int tag, RecvDone done) {
  MPI_Request request;
  check_mpi(MPI_Irecv(buf, count, type, source, tag, comm.comm, &request), "MPI_Irecv");
  pool.add(request, [type, done = std::move(done)](const MPI_Status& status) {
    done(status.MPI_SOURCE, received_count(status, type));
  });
}

MpiLayer::Comm MpiLayer::create_child(const Comm& parent, int first, int last, bool member,
                                      int which) {
  Comm child;
  if (use_split_) {
    check_mpi(MPI_Comm_split(parent.comm, member ? 0 : MPI_UNDEFINED, parent.rank, &child.comm),
              "MPI_Comm_split");
  } else {
    if (!member) return child;
    // MPI may exchange point-to-point messages on the parent with this tag: keep it apart from
    // the data tags (a slow PE may still receive data on the parent with MPI_ANY_SOURCE), and
    // distinct for the two children of one parent, which may overlap in a janus PE.
    child.comm = create_range_group(parent.comm, first, last, 1, kCreateGroupTag + which);
  }
  if (child.comm != MPI_COMM_NULL) rank_and_size(child.comm, child.rank, child.size);
  return child;
}

void MpiLayer::release(Comm& comm) {
  if (comm.comm != MPI_COMM_NULL && comm.comm != root_.comm) check_mpi(MPI_Comm_free(&comm.comm), "MPI_Comm_free");
  comm = Comm();
}

}  // namespace jquick::detail
