#pragma once

#include <mpi.h>

#include "operation.hpp"
#include "rbc/comm.hpp"

// How RBC puts messages on the wire. Normally the user's buffer goes out as is. The checked
// build (RBC_CHECK_ENVELOPE) sends every message as an envelope (64-bit communicator identity,
// per-(peer, tag) sequence number) followed by the packed payload, and verifies the envelope at
// the receiver: a message taken by the wrong communicator or out of order aborts with
// "rbc: interference: ...". Ranks and tags here are MPI's.
namespace rbc::detail {

void post_send(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
               int mpi_dest, int mpi_tag);
void post_recv(Operation& op, const RangeComm& comm, void* buf, int count, MPI_Datatype type,
               int mpi_source, int mpi_tag);
void send_now(const RangeComm& comm, const void* buf, int count, MPI_Datatype type, int mpi_dest,
              int mpi_tag);
MPI_Status recv_now(const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source,
                    int mpi_tag);

// True in the checked build, whose receives must know their source before they are posted.
bool envelope_checked();

// Elements of `type` in the payload of a received or probed message.
int payload_count(const MPI_Status& status, MPI_Datatype type);

// Verifies and unpacks a completed checked receive (no-op for sends).
void finish_transit(Transit& transit, const MPI_Status& status);

}  // namespace rbc::detail
