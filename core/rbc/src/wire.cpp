#include "wire.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "sequencer.hpp"

namespace rbc::detail {

namespace {

#ifdef RBC_CHECK_ENVELOPE
constexpr bool kChecked = true;
#else
constexpr bool kChecked = false;
#endif

struct Envelope {
  std::uint64_t comm_id;
  std::uint64_t sequence;
};
constexpr int kEnvelopeBytes = static_cast<int>(sizeof(Envelope));

std::vector<char> pack_message(const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
                               int mpi_dest, int mpi_tag) {
  int payload = 0;
  MPI_Pack_size(count, type, MPI_COMM_SELF, &payload);
  std::vector<char> wire(static_cast<std::size_t>(kEnvelopeBytes + payload));
  const Envelope envelope{comm.id(), comm.sequencer().next_sent(mpi_dest, mpi_tag)};
  std::memcpy(wire.data(), &envelope, sizeof envelope);
  int position = kEnvelopeBytes;
  MPI_Pack(buf, count, type, wire.data(), static_cast<int>(wire.size()), &position, MPI_COMM_SELF);
  wire.resize(static_cast<std::size_t>(position));
  return wire;
}

Transit receive_transit(const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source,
                        int mpi_tag) {
  Transit t;
  int payload = 0;
  MPI_Pack_size(count, type, MPI_COMM_SELF, &payload);
  t.wire.resize(static_cast<std::size_t>(kEnvelopeBytes + payload));
  t.is_receive = true;
  t.buf = buf;
  t.count = count;
  t.type = type;
  t.comm_id = comm.id();
  t.sequence = comm.sequencer().next_received(mpi_source, mpi_tag);
  return t;
}

[[noreturn]] void interference(const char* what, const Transit& t, const Envelope& got, const MPI_Status& status) {
  std::fprintf(stderr,
               "rbc: interference: %s: message from MPI rank %d with tag %d carries communicator "
               "%016" PRIx64 " sequence %" PRIu64 ", the receive expects communicator %016" PRIx64
               " sequence %" PRIu64 "\n",
               what, status.MPI_SOURCE, status.MPI_TAG, got.comm_id, got.sequence, t.comm_id, t.sequence);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 86);
  std::abort();
}

}  // namespace

void finish_transit(Transit& t, const MPI_Status& status) {
  if (!t.is_receive) {
    t.wire = std::vector<char>();
    return;
  }
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  Envelope got{0, 0};
  if (bytes < kEnvelopeBytes) interference("message without an envelope", t, got, status);
  std::memcpy(&got, t.wire.data(), sizeof got);
  if (got.comm_id != t.comm_id) interference("foreign communicator", t, got, status);
  if (got.sequence != t.sequence) interference("out of sequence", t, got, status);
  int type_size = 0;
  MPI_Type_size(t.type, &type_size);
  const int elements = type_size > 0 ? (bytes - kEnvelopeBytes) / type_size : 0;
  int position = kEnvelopeBytes;
  MPI_Unpack(t.wire.data(), bytes, &position, t.buf, elements, t.type, MPI_COMM_SELF);
  t.is_receive = false;
  t.wire = std::vector<char>();
}

void post_send(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
               int mpi_dest, int mpi_tag) {
  MPI_Request request;
  if (!kChecked || mpi_dest == MPI_PROC_NULL) {
    MPI_Isend(buf, count, type, mpi_dest, mpi_tag, comm.mpi_comm(), &request);
    op.await(request);
    return;
  }
  Transit t;
  t.wire = pack_message(comm, buf, count, type, mpi_dest, mpi_tag);
  MPI_Isend(t.wire.data(), static_cast<int>(t.wire.size()), MPI_BYTE, mpi_dest, mpi_tag, comm.mpi_comm(), &request);
  op.await(request, std::move(t));
}

void post_recv(Operation& op, const RangeComm& comm, void* buf, int count, MPI_Datatype type,
               int mpi_source, int mpi_tag) {
  MPI_Request request;
  if (!kChecked || mpi_source == MPI_PROC_NULL) {
    MPI_Irecv(buf, count, type, mpi_source, mpi_tag, comm.mpi_comm(), &request);
    op.await(request);
    return;
  }
  Transit t = receive_transit(comm, buf, count, type, mpi_source, mpi_tag);
  MPI_Irecv(t.wire.data(), static_cast<int>(t.wire.size()), MPI_BYTE, mpi_source, mpi_tag, comm.mpi_comm(), &request);
  op.await(request, std::move(t));
}

void send_now(const RangeComm& comm, const void* buf, int count, MPI_Datatype type, int mpi_dest, int mpi_tag) {
  if (!kChecked || mpi_dest == MPI_PROC_NULL) {
    MPI_Send(buf, count, type, mpi_dest, mpi_tag, comm.mpi_comm());
    return;
  }
  const std::vector<char> wire = pack_message(comm, buf, count, type, mpi_dest, mpi_tag);
  MPI_Send(wire.data(), static_cast<int>(wire.size()), MPI_BYTE, mpi_dest, mpi_tag, comm.mpi_comm());
}

MPI_Status recv_now(const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source, int mpi_tag) {
  MPI_Status status;
  if (!kChecked || mpi_source == MPI_PROC_NULL) {
    MPI_Recv(buf, count, type, mpi_source, mpi_tag, comm.mpi_comm(), &status);
    return status;
  }
  Transit t = receive_transit(comm, buf, count, type, mpi_source, mpi_tag);
  MPI_Recv(t.wire.data(), static_cast<int>(t.wire.size()), MPI_BYTE, mpi_source, mpi_tag, comm.mpi_comm(), &status);
  finish_transit(t, status);
  return status;
}

bool envelope_checked() { return kChecked; }

int payload_count(const MPI_Status& status, MPI_Datatype type) {
  if (!kChecked || status.MPI_SOURCE == MPI_PROC_NULL) {
    int n = 0;
    MPI_Get_count(&status, type, &n);
    return n;
  }
  int bytes = 0, type_size = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  MPI_Type_size(type, &type_size);
  if (type_size == 0) return 0;
  const int payload = bytes - kEnvelopeBytes;
  return payload % type_size == 0 ? payload / type_size : MPI_UNDEFINED;
}

}  // namespace rbc::detail
