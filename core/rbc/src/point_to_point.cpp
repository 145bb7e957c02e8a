#include "rbc/point_to_point.hpp"

#include <memory>

#include "checks.hpp"
#include "engine.hpp"
#include "operation.hpp"
#include "tags.hpp"
#include "wire.hpp"

namespace rbc {

int Status::count(MPI_Datatype type) const { return detail::payload_count(mpi, type); }

namespace {

int mpi_peer(const RangeComm& comm, int rank) {
  return rank == MPI_PROC_NULL || rank == MPI_ANY_SOURCE ? rank : comm.mpi_rank(rank);
}

Status translate(const RangeComm& comm, const MPI_Status& mpi) {
  Status s;
  s.mpi = mpi;
  s.source = mpi.MPI_SOURCE == MPI_PROC_NULL ? MPI_PROC_NULL : comm.rank_of_mpi(mpi.MPI_SOURCE);
  s.tag = mpi.MPI_SOURCE == MPI_PROC_NULL ? MPI_ANY_TAG : detail::user_tag_of(mpi.MPI_TAG);
  return s;
}

// A pending message with `mpi_tag` from a member of `comm`, if any. MPI_Iprobe(ANY_SOURCE)
// reports the oldest match; when that one comes from a non-member (a communicator whose
// context collides with ours), the members are probed one by one so that it is skipped
// rather than returned forever.
bool find_member_message(const RangeComm& comm, int mpi_tag, MPI_Status* found) {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, mpi_tag, comm.mpi_comm(), &flag, found);
  if (!flag) return false;
  if (comm.rank_of_mpi(found->MPI_SOURCE) >= 0) return true;
  for (int r = 0; r < comm.size(); ++r) {
    MPI_Iprobe(comm.mpi_rank(r), mpi_tag, comm.mpi_comm(), &flag, found);
    if (flag) return true;
  }
  return false;
}

// Blocking wildcard probe restricted to members.
MPI_Status probe_member_message(const RangeComm& comm, int mpi_tag) {
  MPI_Status found;
  MPI_Probe(MPI_ANY_SOURCE, mpi_tag, comm.mpi_comm(), &found);
  if (comm.rank_of_mpi(found.MPI_SOURCE) >= 0) return found;
  // A foreign message sits in front; MPI_Probe would return it again at once. Poll members
  // instead (each MPI_Iprobe also lets a simulator's clock advance).
  while (!find_member_message(comm, mpi_tag, &found)) {
  }
  return found;
}

// When every rank of the MPI communicator is a member, no message with our tag can come from a
// non-member, so an ANY_SOURCE receive can be posted to MPI as it is: the PE then blocks in MPI
// until a message arrives instead of polling with MPI_Iprobe (which a simulator charges per
// call). The checked build needs the source before posting (per-peer sequence) and keeps polling.
bool posts_wildcards(const RangeComm& comm) {
  return !detail::envelope_checked() && comm.size() == comm.engine()->mpi_size();
}

// A single posted send or receive.
class Transfer : public detail::Operation {
 public:
  explicit Transfer(const RangeComm& comm) : Operation(comm.engine()), comm_(comm) {}
  bool progress(bool may_test) override { return awaited_complete(may_test); }
  void completed(std::size_t, const MPI_Status& status) override { status_ = translate(comm_, status); }

 private:
  RangeComm comm_;
};

// Irecv from MPI_ANY_SOURCE: polls for a member's message, then receives exactly that one.
class WildcardReceive : public detail::Operation {
 public:
  WildcardReceive(void* buf, int count, MPI_Datatype type, int mpi_tag, const RangeComm& comm)
      : Operation(comm.engine()), buf_(buf), count_(count), type_(type), mpi_tag_(mpi_tag), comm_(comm) {
    engine().enqueue_wildcard(key(), this);
  }
  ~WildcardReceive() override { engine().dequeue_wildcard(key(), this); }

  // Polls for its message whatever may_test says: finding it is all this operation can do.
  bool progress(bool may_test) override {
    if (!posted_) {
      if (!engine().first_wildcard(key(), this)) return false;
      MPI_Status found;
      if (!find_member_message(comm_, mpi_tag_, &found)) return false;
      post(found.MPI_SOURCE);
    }
    return awaited_complete(may_test);
  }

  void block() override {
    if (!posted_ && engine().first_wildcard(key(), this)) post(probe_member_message(comm_, mpi_tag_).MPI_SOURCE);
  }

  void completed(std::size_t, const MPI_Status& status) override { status_ = translate(comm_, status); }

 private:
  detail::Engine::WildcardKey key() const { return {comm_.id(), mpi_tag_}; }

  void post(int mpi_source) {
    detail::post_recv(*this, comm_, buf_, count_, type_, mpi_source, mpi_tag_);
    posted_ = true;
    engine().dequeue_wildcard(key(), this);
  }

  void* buf_;
  int count_;
  MPI_Datatype type_;
  int mpi_tag_;
  RangeComm comm_;
  bool posted_ = false;
};

void check_send(const char* call, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm) {
  detail::check_count(call, count);
  detail::check_type(call, type);
  detail::check_peer(call, "destination", dest, comm, false);
  detail::check_tag(call, tag);
}

void check_recv(const char* call, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm) {
  detail::check_count(call, count);
  detail::check_type(call, type);
  detail::check_peer(call, "source", source, comm, true);
  detail::check_tag(call, tag);
}

}  // namespace

// Blocking calls go through MPI directly only while this rank has no nonblocking RBC operation
// in flight; otherwise they wait like requests, progressing those operations meanwhile (a peer
// may need them to progress before it can match this call).
static bool quiet(const RangeComm& comm) { return comm.engine()->idle(); }

void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm) {
  check_send("send", count, type, dest, tag, comm);
  if (!quiet(comm)) return isend(buf, count, type, dest, tag, comm).wait();
  detail::send_now(comm, buf, count, type, mpi_peer(comm, dest), detail::user_mpi_tag(comm.context(), tag));
}

Request isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm) {
  check_send("isend", count, type, dest, tag, comm);
  auto op = std::make_unique<Transfer>(comm);
  detail::post_send(*op, comm, buf, count, type, mpi_peer(comm, dest), detail::user_mpi_tag(comm.context(), tag));
  return Request(std::move(op));
}

Status recv(void* buf, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm) {
  check_recv("recv", count, type, source, tag, comm);
  if (!quiet(comm)) {
    Request request = irecv(buf, count, type, source, tag, comm);
    request.wait();
    return request.status();
  }
  const int mpi_tag = detail::user_mpi_tag(comm.context(), tag);
  const int mpi_source = source == MPI_ANY_SOURCE && !posts_wildcards(comm)
                             ? probe_member_message(comm, mpi_tag).MPI_SOURCE
                             : mpi_peer(comm, source);
  return translate(comm, detail::recv_now(comm, buf, count, type, mpi_source, mpi_tag));
}

Request irecv(void* buf, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm) {
  check_recv("irecv", count, type, source, tag, comm);
  const int mpi_tag = detail::user_mpi_tag(comm.context(), tag);
  if (source == MPI_ANY_SOURCE && !posts_wildcards(comm)) {
    return Request(std::make_unique<WildcardReceive>(buf, count, type, mpi_tag, comm));
  }
  auto op = std::make_unique<Transfer>(comm);
  detail::post_recv(*op, comm, buf, count, type, mpi_peer(comm, source), mpi_tag);
  return Request(std::move(op));
}

Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                const RangeComm& comm) {
  check_send("sendrecv", sendcount, sendtype, dest, sendtag, comm);
  check_recv("sendrecv", recvcount, recvtype, source, recvtag, comm);
  Request outgoing = isend(sendbuf, sendcount, sendtype, dest, sendtag, comm);
  Status status = recv(recvbuf, recvcount, recvtype, source, recvtag, comm);
  outgoing.wait();
  return status;
}

Status probe(int source, int tag, const RangeComm& comm) {
  detail::check_peer("probe", "source", source, comm, true);
  detail::check_tag("probe", tag);
  while (!quiet(comm)) {
    comm.engine()->progress_all(false);
    if (auto found = iprobe(source, tag, comm)) return *found;
  }
  const int mpi_tag = detail::user_mpi_tag(comm.context(), tag);
  if (source == MPI_ANY_SOURCE) return translate(comm, probe_member_message(comm, mpi_tag));
  MPI_Status status;
  MPI_Probe(mpi_peer(comm, source), mpi_tag, comm.mpi_comm(), &status);
  return translate(comm, status);
}

std::optional<Status> iprobe(int source, int tag, const RangeComm& comm) {
  detail::check_peer("iprobe", "source", source, comm, true);
  detail::check_tag("iprobe", tag);
  const int mpi_tag = detail::user_mpi_tag(comm.context(), tag);
  MPI_Status status;
  if (source == MPI_ANY_SOURCE) {
    if (!find_member_message(comm, mpi_tag, &status)) return std::nullopt;
    return translate(comm, status);
  }
  int flag = 0;
  MPI_Iprobe(mpi_peer(comm, source), mpi_tag, comm.mpi_comm(), &flag, &status);
  if (!flag) return std::nullopt;
  return translate(comm, status);
}

}  // namespace rbc
