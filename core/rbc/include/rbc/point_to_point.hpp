#pragma once

#include <mpi.h>

#include <optional>

#include "rbc/comm.hpp"
#include "rbc/request.hpp"
#include "rbc/status.hpp"

namespace rbc {

// Point-to-point on a RangeComm, in MPI's argument order. Ranks are member ranks of `comm`;
// tags are 0..max_user_tag (MPI_ANY_TAG is not supported: a tag is what keeps communicators
// apart). `source` may be MPI_ANY_SOURCE: it then matches only messages from members of `comm`
// sent on `comm`, and a pending message from anyone else is skipped, never taken.

void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const RangeComm& comm);
Request isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
              const RangeComm& comm);

Status recv(void* buf, int count, MPI_Datatype type, int source, int tag, const RangeComm& comm);
Request irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
              const RangeComm& comm);

// As MPI_Sendrecv: the send and receive buffers must not overlap (rbc::Error, MPI_ERR_BUFFER).
Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                const RangeComm& comm);

Status probe(int source, int tag, const RangeComm& comm);
std::optional<Status> iprobe(int source, int tag, const RangeComm& comm);

// The bytes of the one MPI message rbc::send on `comm` makes of a payload of `payload_bytes`
// contiguous bytes, its envelope included; for a payload that travels apart from its envelope (a
// large one), or a bare message (README, "Isolation"), the payload's own. What the MPI library's
// time for a message of that size is set against, to tell RBC's own work from the cost of its
// envelope's bytes (bench/p2p.cpp).
int wire_bytes(int payload_bytes, const RangeComm& comm);

}  // namespace rbc
