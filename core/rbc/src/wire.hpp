#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cost/charge.hpp"
#include "mpi_error.hpp"
#include "operation.hpp"
#include "rbc/comm.hpp"
#include "tags.hpp"

// How RBC puts messages on the wire. Every message but a bare one (bare.hpp: the user messages of
// the one communicator per MPI communicator whose tags say whose they are) starts with an
// envelope: the exact key of its communicator and its label (user tag, or collective sequence
// and phase). A receive takes
// a message only if both are its own; a message that MPI matched to the wrong receive (their
// MPI tags coincide) is parked for its owner, and a posted receive of the owner is cancelled
// and served from the park, so no message ever reaches another communicator's receive.
//
// Small messages (payload up to kEagerBytes, except where the envelope alone would push the
// message past a 4 KiB eager limit: inline_payload in wire.cpp) travel in one MPI message,
// envelope + packed payload, into a receive buffer large enough for any small message (a foreign
// message can never be truncated). Others send the envelope first and the payload as a second
// message with a payload tag that is unique per sender and receiver; the receiver posts the
// payload receive into the user's buffer once it has accepted the envelope. In an exchange
// (post_exchange) the receiver picks the payload's tag instead and announces it in its own
// envelope, so that the payload's receive is posted before the payload is sent.
namespace rbc::detail {

inline constexpr int kEagerBytes = 4096;

// The checked build on a real MPI waits by polling, so that a wait nothing will ever complete (a
// member called more collectives or receives than its peers, or fewer) ends with a report naming
// what this rank waits for, instead of a hang. Under SMPI the waits stay blocking: the simulator
// reports a deadlock itself, and thousands of polling simulated ranks would crawl.
#if defined(RBC_CHECK_ENVELOPE) && !defined(JANUS_SMPI)
inline constexpr bool kWatchStalls = true;
#else
inline constexpr bool kWatchStalls = false;
#endif

// Seconds a watched wait may go without progress: RBC_CHECK_TIMEOUT, default 60, 0 for never.
// Throws rbc::Error for a value that is not a non-negative number.
double stall_limit_from_environment();

// What op's pending requests wait for, one line each ("a message from MPI rank 2 on
// communicator ..., collective #3 (barrier)"): the report of a stalled wait.
std::string describe_pending(Operation& op);

// The clock of one watched wait (kWatchStalls builds; elsewhere it never expires and reads no
// clock): true once the engine's stall limit has passed since construction. Called on every
// poll, it reads the clock only every 256th time.
class StallWatch {
 public:
  explicit StallWatch(const Engine& engine);
  bool expired();

 private:
  const Engine& engine_;
  double start_ = 0;
  unsigned polls_ = 0;
};

// Ends the job (MPI_Abort with `code` on `comm`) after RBC printed why on stderr.
[[noreturn]] void abort_after_report(MPI_Comm comm, int code);

// Aborts with the report of a probe for (`mpi_source`, `label`) on `comm` that has stalled.
[[noreturn]] void report_probe_stall(const RangeComm& comm, int mpi_source, const Label& label);

// Aborts (MPI_Abort) with the report of a wait that has made no progress for `seconds`; `waits`
// is what it waits for (describe_pending).
[[noreturn]] void report_stall(const Engine& engine, double seconds, const std::string& waits);

// `signature`: what the collective is (kind, root, count; 0 for point-to-point), compared at
// the receiver in the checked build, which names mismatched collectives. `charge`: the kernel the
// simulation charges RBC's own work for the message to (a request's, or a collective's run at once).
void post_send(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
               int mpi_dest, const Label& label, std::uint64_t signature = 0,
               cost::Kernel charge = cost::Kernel::message);
// `comm` must outlive the receive (operations keep their communicator as a member). `exact`: a
// message shorter than the buffer is an error (Transit::exact).
void post_recv(Operation& op, const RangeComm& comm, void* buf, int count, MPI_Datatype type,
               int mpi_source, const Label& label, std::uint64_t signature = 0, bool exact = false);

// One round of an exchange with `mpi_partner` (a butterfly's): sends `count` elements of `type`
// from `buf` and receives `rcount` of `rtype` into `rbuf`, both under `label`; the partner makes
// the matching call. A payload that travels apart from its envelope (a large one) is not sent
// under a transfer number of the sender's, whose receive could only be posted once the envelope
// is in (a rendezvous then waits for the receiver to match it: 1.3-1.4x an exchange of 8-64 KiB
// under Open MPI): the receiver posts the receive at once under a number of its own and announces
// it in its envelope, and the sender sends the payload once that envelope is in. The receiver's
// numbers are unique per sender, so no other message can match that receive. Members whose counts
// differ get an error, never a wait for a payload that will not come; a payload shorter than
// `rcount` is one too (MPI_ERR_COUNT). Returns the slot of the partner's envelope, once complete
// this side's payload is on its way.
std::size_t post_exchange(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
                          void* rbuf, int rcount, MPI_Datatype rtype, int mpi_partner, const Label& label,
                          std::uint64_t signature, cost::Kernel charge);

// A request, or a collective run at once, may send a small message of a predefined type from a
// buffer of its own (`wire`, kInPlaceWireBytes, alive until the send's slot completes): up to this
// many payload bytes.
inline constexpr int kInPlaceSendBytes = 256;
inline constexpr int kInPlaceWireBytes = 64 + kInPlaceSendBytes;

// The envelope and payload written into `wire` and sent with MPI_Isend, awaited in op's next
// slot: no pooled buffer, no envelope built and copied. False, with nothing sent, where the
// message does not fit, its type is not predefined, or the build checks envelopes; the caller
// then posts it with post_send. `engine`: comm's (the caller has checked that comm is usable);
// `charge`: as for post_send.
bool isend_in_place(Operation& op, const RangeComm& comm, Engine& engine, char* wire, const void* buf, int count,
                    MPI_Datatype type, int mpi_dest, const Label& label, cost::Kernel charge);

// Completes op's last awaited request, a send just posted, if MPI already has (a small eager send
// usually is once MPI_Isend returns): a request that finishes at creation never joins the
// engine's list or a wait round. Under SMPI it does nothing, since a failed MPI_Test costs
// simulated time there.
void settle_send(Operation& op);

// Throws rbc::Error MPI_ERR_COMM once the MPI communicator under `engine` has been freed.
void require_live(const Engine& engine);

// Blocking send and receive for a rank with no RBC operation in flight on the engine (so no
// receive is posted that a foreign message could be owed to): straight MPI calls, no operation
// object. recv_now returns the delivered status (source, user tag, payload size); given
// `payload_bytes`, it stores the payload's size there instead of in the status, which then
// carries the source and the tag only (a collective run directly checks the size and needs no
// more: MPI_Status_set_elements and MPI_Get_count cost it about 90 instructions a receive).
// `engine`: comm's (the caller has checked that comm is usable).
void send_now(const RangeComm& comm, Engine& engine, const void* buf, int count, MPI_Datatype type, int mpi_dest,
              const Label& label);
MPI_Status recv_now(const RangeComm& comm, Engine& engine, void* buf, int count, MPI_Datatype type, int mpi_source,
                    const Label& label, std::uint64_t* payload_bytes = nullptr);

// The payload bytes, of a predefined type, up to which send_now and sendrecv_now write the
// envelope and the payload into one buffer of their own (no pooled buffer, no second message).
inline constexpr int kNowInPlaceBytes = 3944;

// send_now to `mpi_dest` and recv_now from `mpi_source` at once (one round of an exchange or a
// shift, a collective run directly): the send is posted first and completes after the receive,
// so neither side waits for the other's receive. `mpi_dest` may be MPI_PROC_NULL; `mpi_source`
// may not. The send's payload is of a predefined type and at most kNowInPlaceBytes.
MPI_Status sendrecv_now(const RangeComm& comm, Engine& engine, const void* buf, int count, int mpi_dest, void* rbuf,
                        int rcount, int mpi_source, MPI_Datatype type, const Label& label,
                        std::uint64_t* payload_bytes = nullptr);

// Runs when MPI has completed the request in op.awaited()[index] (set to MPI_REQUEST_NULL by the
// caller). Leaves a new request there if the receive goes on.
void complete_slot(Operation& op, std::size_t index, const MPI_Status& status);

// A message for (`comm`, `label`) from `mpi_source` (or any member) that has arrived and not been
// received; the status gives its source, tag and size. Blocks until there is one if `block`.
std::optional<MPI_Status> probe_message(const RangeComm& comm, int mpi_source, const Label& label, bool block);

// Elements of `type` in a message's payload, given its RBC status.
int payload_count(const MPI_Status& status, MPI_Datatype type);

}  // namespace rbc::detail
