#include "rbc/point_to_point.hpp"

#include <cstdint>
#include <memory>

#include "access.hpp"
#include "bare.hpp"
#include "checks.hpp"
#include "engine.hpp"
#include "operation.hpp"
#include "overlap.hpp"
#include "tags.hpp"
#include "wire.hpp"

namespace rbc {

int Status::count(MPI_Datatype type) const { return detail::payload_count(mpi, type); }

namespace {

MPI_Status proc_null_status() {
  MPI_Status s{};
  s.MPI_SOURCE = MPI_PROC_NULL;
  s.MPI_TAG = MPI_ANY_TAG;
  s.MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(&s, MPI_BYTE, 0);
  return s;
}

int mpi_peer(const RangeComm& comm, int rank) {
  return rank == MPI_PROC_NULL || rank == MPI_ANY_SOURCE ? rank : comm.mpi_rank(rank);
}

Status translate(const RangeComm& comm, const MPI_Status& mpi) {
  Status s;
  s.mpi = mpi;
  s.source = mpi.MPI_SOURCE == MPI_PROC_NULL ? MPI_PROC_NULL : comm.rank_of_mpi(mpi.MPI_SOURCE);
  s.tag = mpi.MPI_SOURCE == MPI_PROC_NULL ? MPI_ANY_TAG : mpi.MPI_TAG;
  return s;
}

// A single posted send or receive. A wildcard receive is posted to MPI as it is: the envelope
// check turns away any message that is not from a member of this communicator.
class Transfer : public detail::Operation {
 public:
  explicit Transfer(const RangeComm& comm) : Operation(comm) {}
  bool progress(bool may_test) override { return awaited_complete(may_test); }
  void completed(std::size_t, const MPI_Status& status) override { status_ = translate(comm(), status); }

  // A small send's message (isend_in_place), alive as long as the operation.
  alignas(std::uint64_t) char wire[detail::kInPlaceWireBytes];
};

// Inline: every blocking call runs them, and their reports are out of line already (checks.hpp).
[[gnu::always_inline]] inline void check_send(const char* call, const void* buf, int count, MPI_Datatype type,
                                              int dest, int tag, const RangeComm& comm) {
  detail::check_count(call, count);
  detail::check_type(call, type);
  detail::check_peer(call, "destination", dest, comm, false);
  detail::check_tag(call, tag);
  if (dest != MPI_PROC_NULL) detail::check_buffer(call, buf, count, type);
}

[[gnu::always_inline]] inline void check_recv(const char* call, const void* buf, int count, MPI_Datatype type,
                                              int source, int tag, const RangeComm& comm) {
  detail::check_count(call, count);
  detail::check_type(call, type);
  detail::check_peer(call, "source", source, comm, true);
  detail::check_tag(call, tag);
  if (source != MPI_PROC_NULL) detail::check_buffer(call, buf, count, type);
}

}  // namespace

// Blocking calls go through MPI directly while this rank has no nonblocking RBC operation in
// flight; otherwise they wait like requests, progressing those operations meanwhile (a peer may
// need them to progress before it can match this call). The checked build on a real MPI always
// waits like requests, so that a call nothing will match is reported (kWatchStalls).
void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm) {
  using detail::CommAccess;
  check_send("send", buf, count, type, dest, tag, comm);
  detail::Engine& engine = CommAccess::engine(comm);
  if (detail::kWatchStalls || !engine.idle()) return isend(buf, count, type, dest, tag, comm).wait();
  if (dest == MPI_PROC_NULL) return;
  const int mpi_dest = CommAccess::mpi_rank(comm, dest);
  const detail::Label label = detail::user_label(tag);
  if (detail::send_bare(comm, engine, buf, count, type, mpi_dest, label)) return;
  detail::send_now(comm, engine, buf, count, type, mpi_dest, label);
}

Request isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm) {
  check_send("isend", buf, count, type, dest, tag, comm);
  detail::Engine& engine = detail::CommAccess::engine(comm);
  auto op = detail::make_operation<Transfer>(engine, comm);
  const int mpi_dest = mpi_peer(comm, dest);
  const detail::Label label = detail::user_label(tag);
  if (detail::isend_in_place(*op, op->comm(), engine, static_cast<Transfer&>(*op).wire, buf, count, type, mpi_dest,
                             label, cost::Kernel::message)) {
    detail::settle_send(*op);
  } else {
    detail::post_send(*op, op->comm(), buf, count, type, mpi_dest, label);
  }
  return Request(std::move(op));
}

Status recv(void* buf, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm) {
  using detail::CommAccess;
  check_recv("recv", buf, count, type, source, tag, comm);
  if (source == MPI_PROC_NULL) return translate(comm, proc_null_status());
  detail::Engine& engine = CommAccess::engine(comm);
  if (detail::kWatchStalls || !engine.idle()) {
    Request request = irecv(buf, count, type, source, tag, comm);
    request.wait();
    return request.status();
  }
  const int mpi_source = source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : CommAccess::mpi_rank(comm, source);
  const detail::Label label = detail::user_label(tag);
  Status s;
  if (!detail::recv_bare(comm, engine, buf, count, type, mpi_source, label, s.mpi)) {
    s.mpi = detail::recv_now(comm, engine, buf, count, type, mpi_source, label);
  }
  s.source = source == MPI_ANY_SOURCE ? comm.rank_of_mpi(s.mpi.MPI_SOURCE) : source;
  s.tag = tag;
  return s;
}

Request irecv(void* buf, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm) {
  check_recv("irecv", buf, count, type, source, tag, comm);
  auto op = detail::make_operation<Transfer>(*comm.engine(), comm);
  detail::post_recv(*op, op->comm(), buf, count, type, mpi_peer(comm, source), detail::user_label(tag));
  return Request(std::move(op));
}

Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                const RangeComm& comm) {
  check_send("sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm);
  check_recv("sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm);
  if (dest != MPI_PROC_NULL && source != MPI_PROC_NULL) {
    detail::check_apart("sendrecv", "sendbuf", detail::region(sendbuf, sendcount, sendtype), "recvbuf",
                        detail::region(recvbuf, recvcount, recvtype), false);
  }
  Request outgoing = isend(sendbuf, sendcount, sendtype, dest, sendtag, comm);
  Status status = recv(recvbuf, recvcount, recvtype, source, recvtag, comm);
  outgoing.wait();
  return status;
}

Status probe(int source, int tag, const RangeComm& comm) {
  detail::check_peer("probe", "source", source, comm, true);
  detail::check_tag("probe", tag);
  if (source == MPI_PROC_NULL) return translate(comm, proc_null_status());
  // While nonblocking operations are in flight, a peer may need them to progress before it
  // sends what this probe waits for: poll and progress. Otherwise block in MPI.
  detail::StallWatch watch(*comm.engine());
  while (!comm.engine()->idle()) {
    comm.engine()->progress_all(true);
    if (auto found = detail::probe_message(comm, mpi_peer(comm, source), detail::user_label(tag), false)) {
      return translate(comm, *found);
    }
    if (watch.expired()) detail::report_probe_stall(comm, mpi_peer(comm, source), detail::user_label(tag));
  }
  return translate(comm, *detail::probe_message(comm, mpi_peer(comm, source), detail::user_label(tag), true));
}

std::optional<Status> iprobe(int source, int tag, const RangeComm& comm) {
  detail::check_peer("iprobe", "source", source, comm, true);
  detail::check_tag("iprobe", tag);
  if (source == MPI_PROC_NULL) return translate(comm, proc_null_status());
  auto found = detail::probe_message(comm, mpi_peer(comm, source), detail::user_label(tag), false);
  if (!found) return std::nullopt;
  return translate(comm, *found);
}

}  // namespace rbc
