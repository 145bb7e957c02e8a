#include "wire.hpp"

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "access.hpp"
#include "bare.hpp"
#include "buffers.hpp"
#include "cost/charge.hpp"
#include "engine.hpp"
#include "rbc/error.hpp"
#include "rbc/point_to_point.hpp"
#include "sequencer.hpp"

namespace rbc::detail {

// The pause lets the launcher forward the report: MPICH's mpiexec tears the job down on
// MPI_Abort and has been seen to drop the aborting rank's last line (exit code, no text) when it
// came just before.
void abort_after_report(MPI_Comm comm, int code) {
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(comm, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] true if it did
}

namespace {

#ifdef RBC_CHECK_ENVELOPE
constexpr bool kChecked = true;
#else
constexpr bool kChecked = false;
#endif

constexpr std::uint32_t kLarge = 1;     // the payload follows as a second message
constexpr std::uint32_t kExtended = 2;  // an Extension follows the header
// An exchange's envelope (post_exchange; always extended):
constexpr std::uint32_t kAnnounce = 4;  // `transfer` numbers the tag its sender receives the payload under
constexpr std::uint32_t kAwait = 8;     // its sender's payload follows once the receiver's envelope is in

// Every message starts with a Header. Large messages, and every message of the checked build,
// add an Extension. A small message needs none: its payload is what MPI delivered after the
// header, so the envelope of the common case is 56 bytes, most of them the exact key.
struct Header {
  CommKey key;
  Label label;
  std::uint32_t flags;
};
struct Extension {
  std::uint64_t bytes;      // packed payload bytes
  std::uint64_t transfer;   // large messages: the payload's transfer number
  std::uint64_t sequence;   // checked build: per (peer, tag) message number
  std::uint64_t signature;  // checked build: the collective's kind, root and count
  std::uint64_t capacity;   // an exchange's envelope with kAnnounce: the bytes the announced receive holds
};
constexpr int kHeaderBytes = static_cast<int>(sizeof(Header));
constexpr int kExtendedBytes = kHeaderBytes + static_cast<int>(sizeof(Extension));
constexpr int kReceiveBytes = kExtendedBytes + kEagerBytes;
// A payload travels inside its envelope's message unless the envelope is what pushes the message
// past 4040 bytes, what a 4 KiB eager limit still sends at once (Open MPI's shared memory counts
// its own header in its 4096): such a payload goes alone, straight from the user's buffer, and
// stays eager. Open MPI, np = 2: a ping-pong of 4000 bytes took 2.1 us inline and 1.3-1.4 us
// apart. A payload beyond 4040 bytes needs a rendezvous either way, and up to kEagerBytes one
// message with a copy beats two (scan_and_bcast of 512 doubles: 3.4 against 4.2 us).
constexpr int kEagerWireBytes = 4040;
constexpr bool inline_payload(int bytes) {
  return bytes <= kEagerWireBytes - kExtendedBytes || (bytes > kEagerWireBytes && bytes <= kEagerBytes);
}
static_assert(kReceiveBytes <= static_cast<int>(Engine::kPooledBytes), "pooled buffers hold any small message");

constexpr std::uint32_t envelope_flags(bool large) { return (large ? kLarge : 0) | (kChecked || large ? kExtended : 0); }
constexpr int envelope_bytes(std::uint32_t flags) { return flags & kExtended ? kExtendedBytes : kHeaderBytes; }

// A message's envelope as read: the header and the extension's fields (without one: the payload
// size, and zeros).
struct Envelope {
  CommKey key;
  Label label;
  std::uint32_t flags = 0;
  std::uint64_t bytes = 0;
  std::uint64_t transfer = 0;
  std::uint64_t sequence = 0;
  std::uint64_t signature = 0;
  std::uint64_t capacity = 0;
  // Where the payload starts in the message.
  int offset() const { return envelope_bytes(flags); }
};

[[noreturn]] void no_envelope(int source, int tag) {
  throw Error("a message without an RBC envelope arrived from MPI rank " + std::to_string(source) +
              (tag >= 0 ? " with tag " + std::to_string(tag) : std::string()) +
              ": is something else sending on the MPI communicator with RBC's tags?");
}

// `size`: the message's bytes as MPI delivered them (from MPI rank `source` with MPI tag `tag`).
Envelope read_envelope(const char* wire, std::size_t size, int source, int tag) {
  if (size < static_cast<std::size_t>(kHeaderBytes)) no_envelope(source, tag);
  Header h;
  std::memcpy(&h, wire, sizeof h);
  Envelope e;
  e.key = h.key;
  e.label = h.label;
  e.flags = h.flags;
  if (!(h.flags & kExtended)) {
    e.bytes = size - kHeaderBytes;
    return e;
  }
  if (size < static_cast<std::size_t>(kExtendedBytes)) no_envelope(source, tag);
  Extension x;
  std::memcpy(&x, wire + kHeaderBytes, sizeof x);
  e.bytes = h.flags & (kLarge | kAwait) ? x.bytes : size - kExtendedBytes;
  e.transfer = x.transfer;
  e.sequence = x.sequence;
  e.signature = x.signature;
  e.capacity = x.capacity;
  return e;
}

// A parked message: its wire holds exactly what arrived.
Envelope read_envelope(const Parked& m) { return read_envelope(m.wire.data(), m.wire.size(), m.mpi_source, -1); }

void write_envelope(const Envelope& e, char* wire) {
  const Header h{e.key, e.label, e.flags};
  std::memcpy(wire, &h, sizeof h);
  if (e.flags & kExtended) {
    const Extension x{e.bytes, e.transfer, e.sequence, e.signature, e.capacity};
    std::memcpy(wire + kHeaderBytes, &x, sizeof x);
  }
}

Bytes uninitialized(std::size_t bytes) { return Bytes(bytes); }

bool compatible(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return a == b;
  const std::uint32_t ca = static_cast<std::uint32_t>(a), cb = static_cast<std::uint32_t>(b);
  return (a >> 32) == (b >> 32) && (ca == cb || ca == 0xffffffffu || cb == 0xffffffffu);
}

std::string describe(std::uint64_t signature) {
  static constexpr const char* kNames[] = {"point-to-point", "bcast",   "reduce",         "allreduce", "scan",
                                           "exscan",         "scan_and_bcast", "gather", "allgather", "gatherm",
                                           "barrier",        "allgatherm",     "allgatherm (fold)"};
  const std::uint64_t kind = signature >> 56;
  std::string text = kind < sizeof kNames / sizeof kNames[0] ? kNames[kind] : "unknown";
  const int root = static_cast<int>((signature >> 32) & 0xffffff) - 1;
  const auto count = static_cast<std::int32_t>(static_cast<std::uint32_t>(signature));
  if (root >= 0) text += " root " + std::to_string(root);
  if (kind != 0 && count >= 0) text += " count " + std::to_string(count);
  return text;
}

// Errors MPI itself does not see (a message larger than the receive) go through the
// communicator's error handler first, as MPI's own would, then throw if the handler returns.
[[noreturn]] void raise(MPI_Comm comm, int error_class, const std::string& what) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(comm, &handler);
  // MPI_ERRORS_RETURN only asks for the error to come back, which the exception does (and
  // SMPI 3.32 crashes when it is called through MPI_Comm_call_errhandler).
  if (handler == MPI_ERRORS_ARE_FATAL) {
    // What the fatal handler does, with RBC's text: SMPI 3.32 crashes in MPI_Comm_call_errhandler
    // (segfault), and Open MPI 4.1 fails to print its report for a class raised this way.
    std::fprintf(stderr, "rbc: %s (%s; the error handler is MPI_ERRORS_ARE_FATAL)\n", what.c_str(),
                 error_class == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "MPI error");
    abort_after_report(comm, error_class);
  }
  if (handler != MPI_ERRORS_RETURN) MPI_Comm_call_errhandler(comm, error_class);
  if (handler != MPI_ERRORS_RETURN && handler != MPI_ERRORS_ARE_FATAL && handler != MPI_ERRHANDLER_NULL) {
    MPI_Errhandler_free(&handler);
  }
  throw Error(what, error_class);
}

Engine& engine_of(const Operation& op) { return op.engine(); }

// Packs `count` elements at `out` (room for `capacity` bytes); returns the packed bytes.
int pack_payload(const void* buf, int count, const TypeInfo& info, char* out, int capacity);

// The most bytes `count` elements pack to (capped at INT_MAX).
int packed_bytes(int count, const TypeInfo& info) {
  if (info.contiguous()) {
    const std::int64_t bytes = static_cast<std::int64_t>(count) * info.size;
    return bytes > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(bytes);
  }
  int size = 0;
  check_mpi(MPI_Pack_size(count, info.type, MPI_COMM_SELF, &size), "MPI_Pack_size");
  return size;
}

bool matches(const Transit& t, const Envelope& e, int source) {
  const bool from = t.mpi_source == MPI_ANY_SOURCE || t.mpi_source == source;
#ifdef RBC_TEST_TRUST_TAGS
  (void)e;
  return from;  // deliberately broken: whatever MPI matched is taken
#else
  return from && e.key == t.comm->key() && e.label == t.label;
#endif
}

void post_envelope_receive(Operation& op, std::size_t index) {
  Transit& t = op.transits()[index];
  Engine& engine = engine_of(op);
  t.stage = Transit::Stage::envelope;
  if (t.wire.size() != static_cast<std::size_t>(kReceiveBytes)) t.wire = engine.buffer(kReceiveBytes);
  check_mpi(MPI_Irecv(t.wire.data(), kReceiveBytes, MPI_BYTE, t.mpi_source, t.mpi_tag, engine.comm(),
                      &op.awaited()[index]),
            "MPI_Irecv");
  engine.register_posted(Posted{&op, index, t.comm->key(), t.label, t.mpi_source, t.mpi_tag, 0});
}

// Contiguous datatypes (every predefined one) are copied with memcpy, here and in unpack_small:
// MPI_Pack and MPI_Unpack set up a convertor per call, which costs more than a small message's
// transfer.
int pack_payload(const void* buf, int count, const TypeInfo& info, char* out, int capacity) {
  if (info.contiguous()) {
    const std::size_t bytes = static_cast<std::size_t>(info.size) * static_cast<std::size_t>(count);
    if (bytes > 0) std::memcpy(out, buf, bytes);
    return static_cast<int>(bytes);
  }
  int position = 0;
  check_mpi(MPI_Pack(buf, count, info.type, out, capacity, &position, MPI_COMM_SELF), "MPI_Pack");
  return position;
}

// What a receive reports once it has taken a small message from `status`'s source: the user's
// tag and the payload's size.
MPI_Status delivered(MPI_Status status, int tag, std::uint64_t payload_bytes) {
  status.MPI_TAG = tag;
  status.MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(&status, MPI_BYTE, static_cast<int>(payload_bytes));
  return status;
}

// Copies a small message's payload (`info`: the receive type's layout) into the receive buffer;
// returns the delivered status (source, user tag, payload bytes).
MPI_Status unpack_small(const Transit& t, const Envelope& e, const TypeInfo& info, int source, const char* payload) {
  const int size = info.size;
  const int elements = size > 0 ? static_cast<int>(e.bytes / static_cast<std::uint64_t>(size)) : 0;
  if (elements > 0 && info.contiguous()) {
    std::memcpy(t.buf, payload, static_cast<std::size_t>(elements) * static_cast<std::size_t>(size));
  } else if (elements > 0) {
    int position = 0;
    check_mpi(MPI_Unpack(payload, static_cast<int>(e.bytes), &position, t.buf, elements, t.type, MPI_COMM_SELF),
              "MPI_Unpack");
  }
  MPI_Status status{};
  status.MPI_SOURCE = source;
  return delivered(status, t.label.tag, e.bytes);
}

// Cancels the receive in op's slot `index` (a payload that will not come).
void cancel_slot(Operation& op, int index) {
  MPI_Request& request = op.awaited()[static_cast<std::size_t>(index)];
  if (request == MPI_REQUEST_NULL) return;
  check_mpi(MPI_Cancel(&request), "MPI_Cancel");
  check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
}

// An envelope of an exchange met a receive that does not match it: counts that differ between
// the members (longer than the receive: truncation).
[[noreturn]] void raise_mismatch(const Engine& engine, const Transit& t, const Envelope& e, int source,
                                 std::uint64_t capacity) {
  raise(engine.comm(), e.bytes > capacity ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
        std::string(e.bytes > capacity ? "message truncated: " : "counts differ between members: ") +
            std::to_string(e.bytes) + " bytes come from rank " + std::to_string(t.comm->rank_of_mpi(source)) +
            (t.exchange ? " in an exchange that expects " : " in an exchange, for a receive of ") +
            std::to_string(capacity));
}

// The partner's envelope of an exchange (post_exchange) has arrived in op's slot `index`: send
// this side's payload under the tag it announces, and deliver its payload if it came inside.
void accept_exchange(Operation& op, std::size_t index, const Envelope& e, int source, const char* payload,
                     std::uint64_t capacity) {
  Transit& t = op.transits()[index];
  Engine& engine = engine_of(op);
  const bool announced = t.announced_slot >= 0;
  const bool awaits = t.held_slot >= 0;
  const bool agree = announced == ((e.flags & kAwait) != 0) && awaits == ((e.flags & kAnnounce) != 0);
  // A payload that travels apart goes only into an announced receive of exactly its size: both
  // sides know both sizes (the envelope of a side that announces carries its receive's capacity),
  // so they agree on which payloads come, and no receive waits for one that will not, or gets one
  // larger than its buffer (which MPI does not always refuse: Open MPI 4.1.4's single-copy path
  // writes past it).
  const std::uint64_t own = awaits ? static_cast<std::uint64_t>(TypeInfo(t.send_type).size) *
                                         static_cast<std::uint64_t>(t.send_count)
                                   : 0;
  const bool sends = awaits && agree && own == e.capacity;
  const bool partner_sends = announced && agree && e.bytes == capacity;
  t.found_source = source;
  t.payload_bytes = e.bytes;
  if (sends) {
    check_mpi(MPI_Isend(t.send_buf, t.send_count, t.send_type, source, engine.layout().announced_tag(e.transfer),
                        engine.comm(), &op.awaited()[static_cast<std::size_t>(t.held_slot)]),
              "MPI_Isend");
  }
  if (announced && !partner_sends) cancel_slot(op, t.announced_slot);
  op.awaited()[index] = MPI_REQUEST_NULL;
  t.stage = Transit::Stage::none;
  if (!agree || e.bytes != capacity) [[unlikely]] raise_mismatch(engine, t, e, source, capacity);
  if (awaits && !sends) [[unlikely]] {
    raise(engine.comm(), MPI_ERR_COUNT,
          "counts differ between members: this rank sends " + std::to_string(own) + " bytes in an exchange with rank " +
              std::to_string(t.comm->rank_of_mpi(source)) + ", which expects " + std::to_string(e.capacity));
  }
  if (announced) return;  // the payload arrives in the receive posted for it
  op.deliver(index, unpack_small(t, e, TypeInfo(t.type), source, payload));
}

// The receive in op's slot `index` takes the message with envelope `e` from `source`.
void accept(Operation& op, std::size_t index, const Envelope& e, int source, const char* payload) {
  Transit& t = op.transits()[index];
  Engine& engine = engine_of(op);
  const TypeInfo info(t.type);
  const std::uint64_t capacity = static_cast<std::uint64_t>(info.size) * static_cast<std::uint64_t>(t.count);
  if (kChecked) {
    // The test oracle: matching already compared key and label, so this fires only in a build
    // that skips the comparison.
    if (e.key != t.comm->key() || e.label != t.label) {
      std::fprintf(stderr,
                   "rbc: interference: foreign communicator: message from MPI rank %d carries communicator "
                   "%016" PRIx64 " label %u/%u/%d, the receive expects communicator %016" PRIx64 " label %u/%u/%d\n",
                   source, digest(e.key), e.label.collective, e.label.sequence, e.label.tag, digest(t.comm->key()),
                   t.label.collective, t.label.sequence, t.label.tag);
      abort_after_report(MPI_COMM_WORLD, 86);
    }
    if (!compatible(e.signature, t.signature)) {
      std::fprintf(stderr,
                   "rbc: mismatched collectives on communicator %016" PRIx64 " (collective #%u): this rank (MPI "
                   "rank %d) runs %s, MPI rank %d runs %s\n",
                   digest(e.key), t.label.sequence, engine.mpi_rank(), describe(t.signature).c_str(), source,
                   describe(e.signature).c_str());
      abort_after_report(MPI_COMM_WORLD, 87);
    }
    const std::uint64_t expected = t.comm->sequencer().next_received(source, t.mpi_tag);
    if (e.sequence != expected) {
      std::fprintf(stderr,
                   "rbc: interference: out of sequence: message from MPI rank %d carries number %" PRIu64
                   ", the receive expects %" PRIu64 "\n",
                   source, e.sequence, expected);
      abort_after_report(MPI_COMM_WORLD, 86);
    }
  }
  if (t.exchange) {
    accept_exchange(op, index, e, source, payload, capacity);
    return;
  }
  if (e.flags & (kAwait | kAnnounce)) {
    // The sender runs an exchange whose payload this plain receive would never get.
    op.awaited()[index] = MPI_REQUEST_NULL;
    raise_mismatch(engine, t, e, source, capacity);
  }
  if (e.bytes > capacity || (t.exact && e.bytes < capacity)) [[unlikely]] {
    if (e.flags & kLarge) {
      // Take the payload off the wire, as MPI completes a truncated receive, so the sender's
      // send completes too.
      Bytes discard = uninitialized(static_cast<std::size_t>(e.bytes));
      check_mpi(MPI_Recv(discard.data(), static_cast<int>(e.bytes), MPI_BYTE, source,
                         engine.layout().payload_tag(e.transfer), engine.comm(), MPI_STATUS_IGNORE),
                "MPI_Recv");
    }
    op.awaited()[index] = MPI_REQUEST_NULL;
    t.stage = Transit::Stage::none;
    if (e.bytes < capacity) require_filled(engine, e.bytes, info.size, t.count, source);
    raise(engine.comm(), MPI_ERR_TRUNCATE,
          "message truncated: " + std::to_string(e.bytes) + " bytes arrived from rank " +
              std::to_string(t.comm->rank_of_mpi(source)) + " for a receive of " + std::to_string(capacity) +
              " bytes (" + std::to_string(t.count) + " elements)");
  }
  t.found_source = source;
  t.payload_bytes = e.bytes;
  if (e.flags & kLarge) {
    t.stage = Transit::Stage::payload;
    check_mpi(MPI_Irecv(t.buf, t.count, t.type, source, engine.layout().payload_tag(e.transfer), engine.comm(),
                        &op.awaited()[index]),
              "MPI_Irecv");
    return;
  }
  const MPI_Status status = unpack_small(t, e, info, source, payload);
  t.stage = Transit::Stage::none;
  engine.recycle(std::move(t.wire));
  op.awaited()[index] = MPI_REQUEST_NULL;
  op.deliver(index, status);
}

// A one-slot operation that exists only while recv_now delivers a message through accept().
class Inline final : public Operation {
 public:
  explicit Inline(const RangeComm& comm) : Operation(comm) {}
  bool progress(bool may_test) override { return awaited_complete(may_test); }
  void completed(std::size_t, const MPI_Status& status) override { delivered = status; }
  MPI_Status delivered{};
};

MPI_Status deliver_now(const Transit& t, const Envelope& e, int source, const char* payload) {
  // The common case needs no operation object; the checked build and the rest go through accept().
  if (!kChecked && !(e.flags & kLarge)) {
    const TypeInfo info(t.type);
    if (e.bytes <= static_cast<std::uint64_t>(info.size) * static_cast<std::uint64_t>(t.count)) {
      return unpack_small(t, e, info, source, payload);
    }
  }
  Inline op(*t.comm);
  op.await(MPI_REQUEST_NULL, t);
  accept(op, 0, e, source, payload);
  while (op.awaited()[0] != MPI_REQUEST_NULL) {
    MPI_Status status;
    check_mpi(MPI_Wait(&op.awaited()[0], &status), "MPI_Wait");
    complete_slot(op, 0, status);
  }
  return op.delivered;
}

// Serves op's slot from the parked messages if one is its own (the oldest such).
bool take_parked(Operation& op, std::size_t index) {
  const Transit& t = op.transits()[index];
  auto& parked = engine_of(op).parked();
  for (auto it = parked.begin(); it != parked.end(); ++it) {
    const Envelope e = read_envelope(*it);
    if (!matches(t, e, it->mpi_source)) continue;
    Parked message = std::move(*it);
    parked.erase(it);
    accept(op, index, e, message.mpi_source, message.wire.data() + e.offset());
    engine_of(op).recycle(std::move(message.wire));
    return true;
  }
  return false;
}

void park(Engine& engine, int source, Bytes wire);

// A parked message's owner may have a receive posted to MPI that will now never see it (another
// receive took it). Cancel the oldest such receive and serve it from the park instead.
void rescue(Engine& engine, const Envelope& e, int source) {
  const Posted* owner = nullptr;
  for (const Posted& p : engine.posted()) {
    if (p.key == e.key && p.label == e.label && (p.mpi_source == MPI_ANY_SOURCE || p.mpi_source == source) &&
        (owner == nullptr || p.order < owner->order)) {
      owner = &p;
    }
  }
  if (owner == nullptr) return;
  Operation& op = *owner->op;
  const std::size_t slot = owner->slot;
  engine.unregister_posted(&op, slot);
  MPI_Request& request = op.awaited()[slot];
  check_mpi(MPI_Cancel(&request), "MPI_Cancel");
  MPI_Status status;
  check_mpi(MPI_Wait(&request, &status), "MPI_Wait");
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  if (!cancelled) {
    // It matched a message meanwhile; that one is younger than the parked one (MPI keeps the
    // order of one sender's messages with one tag), so it waits in the park behind it.
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    Bytes wire = std::move(op.transits()[slot].wire);
    wire.resize(static_cast<std::size_t>(bytes));
    park(engine, status.MPI_SOURCE, std::move(wire));
  }
  take_parked(op, slot);
}

void park(Engine& engine, int source, Bytes wire) {
  const Envelope e = read_envelope(wire.data(), wire.size(), source, -1);
  engine.parked().push_back(Parked{source, std::move(wire)});
  rescue(engine, e, source);
}

// The envelope of a message from this rank on `comm` (the payload's size not yet set).
Envelope outgoing(const RangeComm& comm, const Label& label, std::uint64_t signature, int mpi_dest, int mpi_tag,
                  bool large) {
  Envelope e;
  e.key = comm.key();
  e.label = label;
  e.flags = envelope_flags(large);
  e.sequence = kChecked ? comm.sequencer().next_sent(mpi_dest, mpi_tag) : 0;
  e.signature = signature;
  return e;
}

// Writes a small message, envelope and packed payload, into `wire` (room for `capacity` bytes);
// returns its size.
int write_small(char* wire, int capacity, Envelope e, const void* buf, int count, const TypeInfo& info) {
  const int packed = pack_payload(buf, count, info, wire + e.offset(), capacity - e.offset());
  e.bytes = static_cast<std::uint64_t>(packed);
  write_envelope(e, wire);
  return e.offset() + packed;
}

// The same in a pooled buffer, for a nonblocking send; `bound`: the most the payload packs to.
Bytes small_wire(Engine& engine, const Envelope& e, const void* buf, int count, const TypeInfo& info, int bound,
                 int& size) {
  Bytes wire = engine.buffer(static_cast<std::size_t>(e.offset() + bound));
  size = write_small(wire.data(), static_cast<int>(wire.size()), e, buf, count, info);
  return wire;
}

// The envelope alone of a message whose payload travels apart: `transfer` is the number it
// carries (the payload tag's transfer number, or in an exchange the number this side announced).
Bytes large_wire(Engine& engine, Envelope e, int count, const TypeInfo& info, std::uint64_t transfer) {
  Bytes wire = engine.buffer(static_cast<std::size_t>(kExtendedBytes));
  e.bytes = static_cast<std::uint64_t>(info.size) * static_cast<std::uint64_t>(count);
  e.transfer = transfer;
  write_envelope(e, wire.data());
  return wire;
}

[[noreturn]] __attribute__((noinline, cold)) void refuse_freed() {
  throw Error("the MPI communicator this RangeComm was made from has been freed", MPI_ERR_COMM);
}

}  // namespace

void require_live(const Engine& engine) {
  if (engine.base_freed()) [[unlikely]] refuse_freed();
}

void refuse_bare(const Engine& engine, int error, int count, int mpi_source, const Label& label) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(error, &error_class);
  if (error_class != MPI_ERR_TRUNCATE) throw_mpi_error(error, "MPI_Recv");
  raise(engine.comm(), MPI_ERR_TRUNCATE,
        "message truncated: a message with tag " + std::to_string(label.tag) + " from " +
            (mpi_source == MPI_ANY_SOURCE ? std::string("any member") : "MPI rank " + std::to_string(mpi_source)) +
            " is larger than the receive of " + std::to_string(count) + " elements");
}

void refuse_short(const Engine& engine, int received, int count, int mpi_source) {
  raise(engine.comm(), MPI_ERR_COUNT,
        "counts differ between members: a collective's message from MPI rank " + std::to_string(mpi_source) +
            " holds " + (received == MPI_UNDEFINED ? std::string("a part of an element") : std::to_string(received)) +
            " where " + std::to_string(count) + " elements are expected");
}

void throw_mpi_error(int rc, const char* call) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(rc, &error_class);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)), error_class);
}

namespace {

// RBC's software work per message, on top of the MPI library's (simulation only): a constant,
// plus the copy into the envelope's buffer, which only a small message pays (`packed` bytes).
// `kind` is the path's: send_now's message costs RBC far less than a request's (no operation, no
// wait), and a collective run at once lies between (cost::Kernel).
void charge_message(cost::Kernel kind, int packed) {
  cost::charge(kind, static_cast<std::size_t>(inline_payload(packed) ? packed : 0));
}

// What a receive waits for, before its envelope has arrived.
Transit receive_transit(const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source,
                        const Label& label, int mpi_tag, std::uint64_t signature = 0, bool exact = false) {
  Transit t;
  t.buf = buf;
  t.count = count;
  t.type = type;
  t.comm = &comm;
  t.label = label;
  t.mpi_source = mpi_source;
  t.mpi_tag = mpi_tag;
  t.signature = signature;
  t.exact = exact;
  return t;
}

// A bare message's receive (tag `bare`), straight into the buffer: it completes as a payload does,
// with the label's tag.
void post_bare_recv(Operation& op, const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source,
                    const Label& label, int bare, std::uint64_t signature, bool exact) {
  Transit t = receive_transit(comm, buf, count, type, mpi_source, label, bare, signature, exact);
  t.stage = Transit::Stage::payload;
  t.found_source = mpi_source;
  t.bare = true;
  MPI_Request request;
  check_mpi(MPI_Irecv(buf, count, type, mpi_source, bare, comm.engine()->comm(), &request), "MPI_Irecv");
  op.await(request, std::move(t));
}

}  // namespace

}  // namespace rbc::detail

namespace rbc {

int wire_bytes(int payload_bytes, const RangeComm& comm) {
  if (payload_bytes < 0) throw Error("wire_bytes: negative size " + std::to_string(payload_bytes));
  if (comm.sequencer().bare_base() >= 0) return payload_bytes;
  return detail::inline_payload(payload_bytes) ? detail::envelope_bytes(detail::envelope_flags(false)) + payload_bytes
                                               : payload_bytes;
}

}  // namespace rbc

namespace rbc::detail {

void post_send(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type, int mpi_dest,
               const Label& label, std::uint64_t signature, cost::Kernel charge) {
  Engine& engine = *comm.engine();
  require_live(engine);
  MPI_Request request;
  if (mpi_dest == MPI_PROC_NULL) {
    check_mpi(MPI_Isend(buf, count, type, mpi_dest, 0, engine.comm(), &request), "MPI_Isend");
    op.await(request);
    return;
  }
  Transit t;
  t.stage = Transit::Stage::send;
  t.mpi_source = mpi_dest;  // for a stall report
  if (const int bare = bare_tag(comm, label); bare >= 0) {
    check_mpi(MPI_Isend(buf, count, type, mpi_dest, bare, engine.comm(), &request), "MPI_Isend");
    op.await(request, std::move(t));
    return;
  }
  const int mpi_tag = engine.layout().tag(comm.id(), label);
  const TypeInfo info(type);
  const int bound = packed_bytes(count, info);
  charge_message(charge, bound);
  if (inline_payload(bound)) {
    int size = 0;
    t.wire = small_wire(engine, outgoing(comm, label, signature, mpi_dest, mpi_tag, false), buf, count, info, bound,
                        size);
    check_mpi(MPI_Isend(t.wire.data(), size, MPI_BYTE, mpi_dest, mpi_tag, engine.comm(), &request), "MPI_Isend");
    op.await(request, std::move(t));
    return;
  }
  const std::uint64_t transfer = engine.next_transfer(mpi_dest);
  t.wire = large_wire(engine, outgoing(comm, label, signature, mpi_dest, mpi_tag, true), count, info, transfer);
  check_mpi(MPI_Isend(t.wire.data(), kExtendedBytes, MPI_BYTE, mpi_dest, mpi_tag, engine.comm(), &request),
            "MPI_Isend");
  op.await(request, std::move(t));
  check_mpi(MPI_Isend(buf, count, type, mpi_dest, engine.layout().payload_tag(transfer), engine.comm(), &request),
            "MPI_Isend");
  op.await(request);
}

void post_recv(Operation& op, const RangeComm& comm, void* buf, int count, MPI_Datatype type, int mpi_source,
               const Label& label, std::uint64_t signature, bool exact) {
  Engine& engine = *comm.engine();
  require_live(engine);
  if (mpi_source == MPI_PROC_NULL) {
    MPI_Request request;
    check_mpi(MPI_Irecv(buf, count, type, mpi_source, 0, engine.comm(), &request), "MPI_Irecv");
    op.await(request);
    return;
  }
  if (const int bare = bare_tag(comm, label); bare >= 0) {
    post_bare_recv(op, comm, buf, count, type, mpi_source, label, bare, signature, exact);
    return;
  }
  const std::size_t index =
      op.await(MPI_REQUEST_NULL, receive_transit(comm, buf, count, type, mpi_source, label,
                                                 engine.layout().tag(comm.id(), label), signature, exact));
  if (take_parked(op, index)) return;
  post_envelope_receive(op, index);
}

std::size_t post_exchange(Operation& op, const RangeComm& comm, const void* buf, int count, MPI_Datatype type,
                          void* rbuf, int rcount, MPI_Datatype rtype, int mpi_partner, const Label& label,
                          std::uint64_t signature, cost::Kernel charge) {
  Engine& engine = *comm.engine();
  require_live(engine);
  if (const int bare = bare_tag(comm, label); bare >= 0) {
    // Both payloads straight between the buffers: the receive first, then the send, whose slot
    // is returned (once complete, this side's payload is on its way).
    post_bare_recv(op, comm, rbuf, rcount, rtype, mpi_partner, label, bare, signature, true);
    post_send(op, comm, buf, count, type, mpi_partner, label, signature, charge);
    return op.awaited().size() - 1;
  }
  const TypeInfo info(type);
  const int bound = packed_bytes(count, info);
  const bool awaits = !inline_payload(bound);
  const bool announces = !inline_payload(packed_bytes(rcount, TypeInfo(rtype)));
  const int mpi_tag = engine.layout().tag(comm.id(), label);
  charge_message(charge, bound);
  // Slots: this side's envelope, the partner's envelope, this side's payload (posted once the
  // partner's envelope is in), the partner's payload. Waits go in that order, so a wait for the
  // partner's payload never comes before the envelope that lets this side send its own.
  const std::size_t sent = op.await(MPI_REQUEST_NULL);
  const std::size_t envelope = op.await(MPI_REQUEST_NULL);
  const int held = awaits ? static_cast<int>(op.await(MPI_REQUEST_NULL)) : -1;
  const int incoming = announces ? static_cast<int>(op.await(MPI_REQUEST_NULL)) : -1;

  // What the partner's envelope and, if announced, its payload are received as.
  const Transit expected = receive_transit(comm, rbuf, rcount, rtype, mpi_partner, label, mpi_tag, signature, true);
  Envelope e = outgoing(comm, label, signature, mpi_partner, mpi_tag, false);
  e.flags |= kExtended | (awaits ? kAwait : 0u) | (announces ? kAnnounce : 0u);
  if (announces) {
    e.transfer = engine.next_announced(mpi_partner);
    e.capacity = static_cast<std::uint64_t>(TypeInfo(rtype).size) * static_cast<std::uint64_t>(rcount);
    Transit& t = op.transits()[static_cast<std::size_t>(incoming)];
    t = expected;
    t.stage = Transit::Stage::payload;
    t.found_source = mpi_partner;
    check_mpi(MPI_Irecv(rbuf, rcount, rtype, mpi_partner, engine.layout().announced_tag(e.transfer), engine.comm(),
                        &op.awaited()[static_cast<std::size_t>(incoming)]),
              "MPI_Irecv");
  }
  if (awaits) {
    Transit& t = op.transits()[static_cast<std::size_t>(held)];
    t.stage = Transit::Stage::send;
    t.mpi_source = mpi_partner;
  }

  Transit& out = op.transits()[sent];
  out.stage = Transit::Stage::send;
  out.mpi_source = mpi_partner;
  int size = kExtendedBytes;
  if (awaits) {
    out.wire = large_wire(engine, e, count, info, e.transfer);  // the envelope alone; `transfer` as announced
  } else {
    out.wire = small_wire(engine, e, buf, count, info, bound, size);
  }
  check_mpi(MPI_Isend(out.wire.data(), size, MPI_BYTE, mpi_partner, mpi_tag, engine.comm(), &op.awaited()[sent]),
            "MPI_Isend");

  Transit& in = op.transits()[envelope];
  in = expected;
  in.exchange = true;
  in.held_slot = held;
  in.announced_slot = incoming;
  in.send_buf = buf;
  in.send_count = count;
  in.send_type = type;
  if (!take_parked(op, envelope)) post_envelope_receive(op, envelope);
  return envelope;
}

static_assert(kHeaderBytes <= kInPlaceWireBytes - kInPlaceSendBytes, "an in-place send's buffer holds the header");

namespace {

// The payload bytes of `count` elements of `type` if the message can be written in place (a
// predefined type, at most `limit` bytes, and a build that does not check envelopes), else -1.
[[gnu::always_inline]] inline int in_place_bytes(MPI_Datatype type, int count, int limit) {
  const int named = predefined_size(type);
  if (kChecked || named <= 0 || static_cast<std::int64_t>(count) * named > limit) return -1;
  return count * named;
}

// The common case's message written at `wire`: the header, then the payload's `bytes` bytes
// copied from `buf`. Returns the message's size.
[[gnu::always_inline]] inline int write_in_place(char* wire, const RangeComm& comm, const Label& label, const void* buf,
                                                  int bytes) {
  const Header h{CommAccess::key(comm), label, envelope_flags(false)};
  std::memcpy(wire, &h, sizeof h);
  if (bytes > 0) std::memcpy(wire + kHeaderBytes, buf, static_cast<std::size_t>(bytes));
  return kHeaderBytes + bytes;
}

}  // namespace

bool isend_in_place(Operation& op, const RangeComm& comm, Engine& engine, char* wire, const void* buf, int count,
                    MPI_Datatype type, int mpi_dest, const Label& label, cost::Kernel charge) {
  if (mpi_dest != MPI_PROC_NULL && bare_tag(comm, label) >= 0) {
    post_send(op, comm, buf, count, type, mpi_dest, label, 0, charge);
    return true;
  }
  const int bytes = in_place_bytes(type, count, kInPlaceSendBytes);
  if (bytes < 0 || mpi_dest == MPI_PROC_NULL) return false;
  require_live(engine);
  charge_message(charge, bytes);
  const int size = write_in_place(wire, comm, label, buf, bytes);
  MPI_Request request;
  check_mpi(MPI_Isend(wire, size, MPI_BYTE, mpi_dest, engine.layout().tag(comm.id(), label), engine.comm(), &request),
            "MPI_Isend");
  Transit t;
  t.stage = Transit::Stage::send;  // no wire of its own to recycle
  t.mpi_source = mpi_dest;
  op.await(request, std::move(t));
  return true;
}

void settle_send(Operation& op) {
#ifdef JANUS_SMPI
  (void)op;
#else
  const std::size_t slot = op.awaited().size() - 1;
  int flag = 0;
  MPI_Status status;
  status.MPI_ERROR = MPI_SUCCESS;
  check_mpi(MPI_Test(&op.awaited()[slot], &flag, &status), "MPI_Test");
  if (flag) op.request_done(slot, status);
#endif
}

void send_now(const RangeComm& comm, Engine& engine, const void* buf, int count, MPI_Datatype type, int mpi_dest,
              const Label& label) {
  require_live(engine);
  if (mpi_dest == MPI_PROC_NULL || send_bare(comm, engine, buf, count, type, mpi_dest, label)) return;
  const int mpi_tag = engine.layout().tag(comm.id(), label);
  const int bytes = in_place_bytes(type, count, kNowInPlaceBytes);
  if (bytes >= 0) {
    // The common case in place: a predefined type's payload copied behind the header.
    charge_message(cost::Kernel::immediate_message, bytes);
    alignas(std::uint64_t) char wire[kHeaderBytes + kEagerWireBytes];
    const int size = write_in_place(wire, comm, label, buf, bytes);
    check_mpi(MPI_Send(wire, size, MPI_BYTE, mpi_dest, mpi_tag, engine.comm()), "MPI_Send");
    return;
  }
  const TypeInfo info(type);
  const int bound = packed_bytes(count, info);
  charge_message(cost::Kernel::immediate_message, bound);
  if (inline_payload(bound)) {
    alignas(std::uint64_t) char wire[kReceiveBytes];  // MPI_Send is done with it on return
    const int size =
        write_small(wire, kReceiveBytes, outgoing(comm, label, 0, mpi_dest, mpi_tag, false), buf, count, info);
    check_mpi(MPI_Send(wire, size, MPI_BYTE, mpi_dest, mpi_tag, engine.comm()), "MPI_Send");
    return;
  }
  const std::uint64_t transfer = engine.next_transfer(mpi_dest);
  Bytes wire = large_wire(engine, outgoing(comm, label, 0, mpi_dest, mpi_tag, true), count, info, transfer);
  MPI_Request request;
  check_mpi(MPI_Isend(wire.data(), kExtendedBytes, MPI_BYTE, mpi_dest, mpi_tag, engine.comm(), &request), "MPI_Isend");
  check_mpi(MPI_Send(buf, count, type, mpi_dest, engine.layout().payload_tag(transfer), engine.comm()), "MPI_Send");
  check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  engine.recycle(std::move(wire));
}

MPI_Status recv_now(const RangeComm& comm, Engine& engine, void* buf, int count, MPI_Datatype type, int mpi_source,
                    const Label& label, std::uint64_t* payload_bytes) {
  require_live(engine);
  // A delivered status's payload size, where the caller asked for it apart.
  const auto sized = [payload_bytes](const MPI_Status& status) {
    if (payload_bytes) {
      int bytes = 0;
      check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
      *payload_bytes = static_cast<std::uint64_t>(bytes);
    }
    return status;
  };
  if (MPI_Status status; recv_bare(comm, engine, buf, count, type, mpi_source, label, status)) return sized(status);
  const int mpi_tag = engine.layout().tag(comm.id(), label);
  // The general path's view of this receive; the common case below needs none of it.
  const auto transit = [&] { return receive_transit(comm, buf, count, type, mpi_source, label, mpi_tag); };
  auto& parked = engine.parked();
  if (!parked.empty()) {
    const Transit t = transit();
    for (auto it = parked.begin(); it != parked.end(); ++it) {
      const Envelope e = read_envelope(*it);
      if (!matches(t, e, it->mpi_source)) continue;
      Parked message = std::move(*it);
      parked.erase(it);
      return sized(deliver_now(t, e, message.mpi_source, message.wire.data() + e.offset()));
    }
  }
  const CommKey& key = CommAccess::key(comm);
  alignas(std::uint64_t) char wire[kReceiveBytes];
  while (true) {
    MPI_Status status;
    check_mpi(MPI_Recv(wire, kReceiveBytes, MPI_BYTE, mpi_source, mpi_tag, engine.comm(), &status), "MPI_Recv");
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    if (!kChecked && bytes >= kHeaderBytes) {
      // The common case in place: a small message of this receive, into a buffer of a
      // predefined type that holds it. Anything else takes the general path below.
      Header h;
      std::memcpy(&h, wire, sizeof h);
      const std::size_t payload = static_cast<std::size_t>(bytes - kHeaderBytes);
      const int named = predefined_size(type);
      if (named > 0 && !(h.flags & kExtended) && h.key == key && h.label == label &&
          payload <= static_cast<std::size_t>(named) * static_cast<std::size_t>(count)) {
        const std::size_t whole = payload - payload % static_cast<std::size_t>(named);
        if (whole > 0) std::memcpy(buf, wire + kHeaderBytes, whole);
        if (payload_bytes) {
          *payload_bytes = payload;
          status.MPI_TAG = label.tag;
          return status;
        }
        return delivered(status, label.tag, payload);
      }
    }
    const Envelope e = read_envelope(wire, static_cast<std::size_t>(bytes), status.MPI_SOURCE, status.MPI_TAG);
    const Transit t = transit();
    if (matches(t, e, status.MPI_SOURCE)) return sized(deliver_now(t, e, status.MPI_SOURCE, wire + e.offset()));
    Bytes foreign = engine.buffer(static_cast<std::size_t>(bytes));
    std::memcpy(foreign.data(), wire, static_cast<std::size_t>(bytes));
    engine.parked().push_back(Parked{status.MPI_SOURCE, std::move(foreign)});
  }
}

static_assert(kNowInPlaceBytes == kEagerWireBytes - kExtendedBytes, "send_now's in-place limit");

MPI_Status sendrecv_now(const RangeComm& comm, Engine& engine, const void* buf, int count, int mpi_dest, void* rbuf,
                        int rcount, int mpi_source, MPI_Datatype type, const Label& label,
                        std::uint64_t* payload_bytes) {
  if (mpi_dest == MPI_PROC_NULL) return recv_now(comm, engine, rbuf, rcount, type, mpi_source, label, payload_bytes);
  require_live(engine);
  const int bytes = in_place_bytes(type, count, kNowInPlaceBytes);
  if (bytes < 0) throw std::logic_error("rbc: internal: sendrecv_now of a message that does not fit in place");
  charge_message(cost::Kernel::collective_message, bytes);
  alignas(std::uint64_t) char wire[kHeaderBytes + kNowInPlaceBytes];
  const int size = write_in_place(wire, comm, label, buf, bytes);
  MPI_Request request;
  check_mpi(MPI_Isend(wire, size, MPI_BYTE, mpi_dest, engine.layout().tag(comm.id(), label), engine.comm(), &request),
            "MPI_Isend");
  MPI_Status status;
  try {
    status = recv_now(comm, engine, rbuf, rcount, type, mpi_source, label, payload_bytes);
  } catch (...) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);  // the wire lives on this frame
    throw;
  }
  check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  return status;
}

void complete_slot(Operation& op, std::size_t index, const MPI_Status& status) {
  Transit& t = op.transits()[index];
  Engine& engine = engine_of(op);
  switch (t.stage) {
    case Transit::Stage::send:
      t.stage = Transit::Stage::none;
      engine.recycle(std::move(t.wire));
      return;
    case Transit::Stage::none:
      op.deliver(index, status);
      return;
    case Transit::Stage::payload: {
      t.stage = Transit::Stage::none;
      if (t.bare && status.MPI_ERROR != MPI_SUCCESS) [[unlikely]] {
        refuse_bare(engine, status.MPI_ERROR, t.count, t.mpi_source, t.label);
      }
      // An enveloped payload's size was checked with its envelope (accept).
      if (t.bare && t.exact) require_filled(engine, status, t.type, t.count, status.MPI_SOURCE);
      MPI_Status delivered = status;
      delivered.MPI_TAG = t.label.tag;
      op.deliver(index, delivered);
      return;
    }
    case Transit::Stage::envelope:
      break;
  }
  engine.unregister_posted(&op, index);
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  const Envelope e = read_envelope(t.wire.data(), static_cast<std::size_t>(bytes), status.MPI_SOURCE, status.MPI_TAG);
  if (matches(t, e, status.MPI_SOURCE)) {
    Bytes wire = std::move(t.wire);
    accept(op, index, e, status.MPI_SOURCE, wire.data() + e.offset());
    engine.recycle(std::move(wire));
    return;
  }
  Bytes wire = std::move(t.wire);
  wire.resize(static_cast<std::size_t>(bytes));
  // This slot is no longer registered, so park's rescue serves other receives only.
  park(engine, status.MPI_SOURCE, std::move(wire));
  if (take_parked(op, index)) return;
  post_envelope_receive(op, index);
}

namespace {

std::string what_label(const CommKey& key, const Label& label, std::uint64_t signature) {
  char id[32];
  std::snprintf(id, sizeof id, "%016" PRIx64, digest(key));
  std::string text = std::string("communicator ") + id;
  if (label.collective != 0) {
    return text + ", collective #" + std::to_string(label.sequence) + " (" + describe(signature) + ")";
  }
  return text + ", tag " + std::to_string(label.tag);
}

std::string from_whom(int mpi_source) {
  return mpi_source == MPI_ANY_SOURCE ? std::string("any member") : "MPI rank " + std::to_string(mpi_source);
}

// A blocking probe that reports a stall (kWatchStalls builds).
void probe_watched(const Engine& engine, const RangeComm& comm, int mpi_source, const Label& label, int mpi_tag,
                   MPI_Status& status) {
  StallWatch watch(engine);
  while (true) {
    int flag = 0;
    check_mpi(MPI_Iprobe(mpi_source, mpi_tag, engine.comm(), &flag, &status), "MPI_Iprobe");
    if (flag) return;
    if (watch.expired()) report_probe_stall(comm, mpi_source, label);
  }
}

}  // namespace

std::optional<MPI_Status> probe_message(const RangeComm& comm, int mpi_source, const Label& label, bool block) {
  Engine& engine = *comm.engine();
  require_live(engine);
  if (const int bare = bare_tag(comm, label); bare >= 0) {
    MPI_Status status;
    if (block) {
      check_mpi(MPI_Probe(mpi_source, bare, engine.comm(), &status), "MPI_Probe");
    } else {
      int flag = 0;
      check_mpi(MPI_Iprobe(mpi_source, bare, engine.comm(), &flag, &status), "MPI_Iprobe");
      if (!flag) return std::nullopt;
    }
    status.MPI_TAG = label.tag;
    return status;
  }
  const int mpi_tag = engine.layout().tag(comm.id(), label);
  auto from_park = [&]() -> std::optional<MPI_Status> {
    for (const Parked& m : engine.parked()) {
      const Envelope e = read_envelope(m);
      if (e.key == comm.key() && e.label == label && (mpi_source == MPI_ANY_SOURCE || mpi_source == m.mpi_source)) {
        MPI_Status status{};
        status.MPI_SOURCE = m.mpi_source;
        status.MPI_TAG = label.tag;
        status.MPI_ERROR = MPI_SUCCESS;
        MPI_Status_set_elements(&status, MPI_BYTE, static_cast<int>(e.bytes));
        return status;
      }
    }
    return std::nullopt;
  };
  while (true) {
    if (auto found = from_park()) return found;
    MPI_Status status;
    if (block && kWatchStalls) {
      probe_watched(engine, comm, mpi_source, label, mpi_tag, status);
    } else if (block) {
      check_mpi(MPI_Probe(mpi_source, mpi_tag, engine.comm(), &status), "MPI_Probe");
    } else {
      int flag = 0;
      check_mpi(MPI_Iprobe(mpi_source, mpi_tag, engine.comm(), &flag, &status), "MPI_Iprobe");
      if (!flag) return std::nullopt;
    }
    // Take the message out of MPI's queue into the park, whoever it belongs to: a foreign one
    // then no longer hides the messages behind it.
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    Bytes wire = uninitialized(static_cast<std::size_t>(bytes));
    check_mpi(MPI_Recv(wire.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, engine.comm(), MPI_STATUS_IGNORE),
              "MPI_Recv");
    park(engine, status.MPI_SOURCE, std::move(wire));
  }
}

double stall_limit_from_environment() {
  const char* text = std::getenv("RBC_CHECK_TIMEOUT");
  if (text == nullptr || *text == '\0') return 60.0;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !std::isfinite(seconds) || seconds < 0) {
    throw Error(std::string("RBC_CHECK_TIMEOUT='") + text + "' is not a non-negative number of seconds");
  }
  return seconds;
}

std::string describe_pending(Operation& op) {
  std::string text;
  for (std::size_t i = 0; i < op.awaited().size(); ++i) {
    if (op.awaited()[i] == MPI_REQUEST_NULL) continue;
    const Transit& t = op.transits()[i];
    std::string line;
    switch (t.stage) {
      case Transit::Stage::send: {
        if (t.wire.empty()) {  // sent in place (isend_in_place): no wire kept to read back
          line = "its send to MPI rank " + std::to_string(t.mpi_source) + " to be received";
          break;
        }
        const Envelope e = read_envelope(t.wire.data(), t.wire.size(), t.mpi_source, -1);
        line = "its send to MPI rank " + std::to_string(t.mpi_source) + " to be received, " +
               what_label(e.key, e.label, e.signature);
        break;
      }
      case Transit::Stage::envelope:
        line = "a message from " + from_whom(t.mpi_source) + ", " + what_label(t.comm->key(), t.label, t.signature);
        break;
      case Transit::Stage::payload:
        line = "the payload of a large message from " + from_whom(t.found_source) + ", " +
               what_label(t.comm->key(), t.label, t.signature);
        break;
      case Transit::Stage::none:
        line = "a large payload to be received";
        break;
    }
    text += "  - " + line + "\n";
  }
  return text;
}

StallWatch::StallWatch(const Engine& engine) : engine_(engine), start_(kWatchStalls ? MPI_Wtime() : 0.0) {}

bool StallWatch::expired() {
  return kWatchStalls && ++polls_ % 256 == 0 && engine_.stall_limit() > 0 &&
         MPI_Wtime() - start_ > engine_.stall_limit();
}

void report_probe_stall(const RangeComm& comm, int mpi_source, const Label& label) {
  const Engine& engine = *comm.engine();
  report_stall(engine, engine.stall_limit(),
               "  - a message from " + from_whom(mpi_source) + " (probe), " + what_label(comm.key(), label, 0) + "\n");
}

[[noreturn]] void report_stall(const Engine& engine, double seconds, const std::string& waits) {
  std::fprintf(stderr,
               "rbc: stalled: MPI rank %d has waited %.0f s (RBC_CHECK_TIMEOUT) and nothing it waits for has "
               "arrived:\n%s"
               "A member may have called more collectives or receives on this communicator than the others, "
               "or fewer, or be blocked in another call that waits for this rank.\n",
               engine.mpi_rank(), seconds, waits.c_str());
  abort_after_report(MPI_COMM_WORLD, 88);
}

int payload_count(const MPI_Status& status, MPI_Datatype type) {
  int n = 0;
  MPI_Get_count(&status, type, &n);
  return n;
}

}  // namespace rbc::detail
