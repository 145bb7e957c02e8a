// Point-to-point ping-pong, RBC vs MPI, between ranks 0 and 1 (the others wait at the barrier):
// the cost of RBC's isolation over the MPI library's own send and receive. Implementation rbc
// runs on the program's from_mpi handle, whose user messages travel bare (README, "Isolation");
// rbc_enveloped on a split over all ranks, as every other communicator, where each message
// carries an envelope with its communicator's exact key (core/rbc/src/wire.hpp).
//   pingpong   rbc::send/rbc::recv vs MPI_Send/MPI_Recv; time = half a round trip
//   ipingpong  the same through requests: irecv posted first, then isend, both waited
//              (rbc::Request::wait vs MPI_Wait), as programs that overlap do
//              Both also take implementation mpi_wire: MPI alone with messages of the size
//              rbc_enveloped puts on the wire for the payload (rbc::wire_bytes, its envelope
//              included), which splits an enveloped message's cost into its envelope's bytes
//              (mpi_wire / mpi) and RBC's own work (rbc_enveloped / mpi_wire). Open MPI sends up
//              to 8 bytes faster than anything larger (4.1.4 on two cores: 0.355 against 0.41 us
//              from 12 to 64 bytes), a path no message with an envelope can take.
//   exchange   both ranks at once: irecv, isend, wait for both (a butterfly round of a
//              collective); time = one exchange. Two more implementations take it apart with
//              MPI alone: mpi_late_payload sends what RBC sends for a message over 4 KiB (a
//              64-byte envelope, then the payload under another tag) and posts the payload's
//              receive once the envelope is in, as RBC must; mpi_preposted sends the same two
//              messages with both receives posted at once; mpi_announced posts the payload's
//              receive at once and sends the payload only once the partner's envelope is in (a
//              receiver would name the payload's tag in its envelope).
// One timed operation is --trips round trips (exchanges), so the barrier between repetitions is
// amortised.
//
// Options: --sizes=8,64,1024,65536 (bytes)  --impls=rbc,mpi (also rbc_enveloped; pingpong and ipingpong also
//          mpi_wire; exchange also mpi_late_payload, mpi_preposted, mpi_announced)
//          --variants=pingpong,ipingpong (or exchange)  --trips=100
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "rbc/comm.hpp"
#include "rbc/point_to_point.hpp"

namespace {

void round_trips(bool use_rbc, int trips, std::vector<char>& buf, int me, const rbc::RangeComm& rworld,
                 MPI_Comm world) {
  const int n = static_cast<int>(buf.size());
  if (me > 1) return;
  const int peer = 1 - me;
  for (int t = 0; t < trips; ++t) {
    if (me == 0) {
      if (use_rbc) {
        rbc::send(buf.data(), n, MPI_BYTE, peer, 1, rworld);
        rbc::recv(buf.data(), n, MPI_BYTE, peer, 1, rworld);
      } else {
        MPI_Send(buf.data(), n, MPI_BYTE, peer, 1, world);
        MPI_Recv(buf.data(), n, MPI_BYTE, peer, 1, world, MPI_STATUS_IGNORE);
      }
    } else {
      if (use_rbc) {
        rbc::recv(buf.data(), n, MPI_BYTE, peer, 1, rworld);
        rbc::send(buf.data(), n, MPI_BYTE, peer, 1, rworld);
      } else {
        MPI_Recv(buf.data(), n, MPI_BYTE, peer, 1, world, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), n, MPI_BYTE, peer, 1, world);
      }
    }
  }
}

// One side of a round trip through requests: post the receive, send, wait for both.
void exchange_requests(bool use_rbc, bool send_first, std::vector<char>& out, std::vector<char>& in, int peer,
                       const rbc::RangeComm& rworld, MPI_Comm world) {
  const int n = static_cast<int>(out.size());
  if (use_rbc) {
    if (send_first) {
      rbc::Request receive = rbc::irecv(in.data(), n, MPI_BYTE, peer, 1, rworld);
      rbc::isend(out.data(), n, MPI_BYTE, peer, 1, rworld).wait();
      receive.wait();
    } else {
      rbc::irecv(in.data(), n, MPI_BYTE, peer, 1, rworld).wait();
      rbc::isend(out.data(), n, MPI_BYTE, peer, 1, rworld).wait();
    }
    return;
  }
  MPI_Request request;
  if (send_first) {
    MPI_Request receive;
    MPI_Irecv(in.data(), n, MPI_BYTE, peer, 1, world, &receive);
    MPI_Isend(out.data(), n, MPI_BYTE, peer, 1, world, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Wait(&receive, MPI_STATUS_IGNORE);
  } else {
    MPI_Irecv(in.data(), n, MPI_BYTE, peer, 1, world, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Isend(out.data(), n, MPI_BYTE, peer, 1, world, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
}

void round_trips_requests(bool use_rbc, int trips, std::vector<char>& out, std::vector<char>& in, int me,
                          const rbc::RangeComm& rworld, MPI_Comm world) {
  if (me > 1) return;
  for (int t = 0; t < trips; ++t) exchange_requests(use_rbc, me == 0, out, in, 1 - me, rworld, world);
}

// Both ranks exchange `out` for `in` at once, `trips` times, with one of the implementations of
// the exchange variant.
void exchanges(const std::string& name, int trips, std::vector<char>& out, std::vector<char>& in, int me,
               const rbc::RangeComm& rworld, MPI_Comm world) {
  if (me > 1) return;
  // Which one, decided once: the loop below is timed.
  enum class Impl { rbc, mpi, late_payload, announced, preposted };
  const Impl impl = name == "rbc" || name == "rbc_enveloped" ? Impl::rbc
                    : name == "mpi"              ? Impl::mpi
                    : name == "mpi_late_payload" ? Impl::late_payload
                    : name == "mpi_announced"    ? Impl::announced
                                                 : Impl::preposted;
  const int n = static_cast<int>(out.size());
  const int peer = 1 - me;
  char envelope_out[64] = {0};
  char envelope_in[64];
  for (int t = 0; t < trips; ++t) {
    if (impl == Impl::rbc) {
      rbc::Request receive = rbc::irecv(in.data(), n, MPI_BYTE, peer, 1, rworld);
      rbc::Request send = rbc::isend(out.data(), n, MPI_BYTE, peer, 1, rworld);
      receive.wait();
      send.wait();
    } else if (impl == Impl::mpi) {
      MPI_Request requests[2];
      MPI_Irecv(in.data(), n, MPI_BYTE, peer, 1, world, &requests[0]);
      MPI_Isend(out.data(), n, MPI_BYTE, peer, 1, world, &requests[1]);
      MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    } else if (impl == Impl::late_payload) {
      MPI_Request envelopes[2];
      MPI_Request payloads[2];
      MPI_Irecv(envelope_in, 64, MPI_BYTE, peer, 2, world, &envelopes[0]);
      MPI_Isend(envelope_out, 64, MPI_BYTE, peer, 2, world, &envelopes[1]);
      MPI_Isend(out.data(), n, MPI_BYTE, peer, 3, world, &payloads[1]);
      MPI_Wait(&envelopes[0], MPI_STATUS_IGNORE);
      MPI_Irecv(in.data(), n, MPI_BYTE, peer, 3, world, &payloads[0]);
      MPI_Wait(&envelopes[1], MPI_STATUS_IGNORE);
      MPI_Waitall(2, payloads, MPI_STATUSES_IGNORE);
    } else if (impl == Impl::announced) {
      MPI_Request requests[4];
      MPI_Irecv(in.data(), n, MPI_BYTE, peer, 3, world, &requests[0]);
      MPI_Irecv(envelope_in, 64, MPI_BYTE, peer, 2, world, &requests[1]);
      MPI_Isend(envelope_out, 64, MPI_BYTE, peer, 2, world, &requests[2]);
      MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
      MPI_Isend(out.data(), n, MPI_BYTE, peer, 3, world, &requests[3]);
      MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    } else {
      MPI_Request requests[4];
      MPI_Irecv(envelope_in, 64, MPI_BYTE, peer, 2, world, &requests[0]);
      MPI_Irecv(in.data(), n, MPI_BYTE, peer, 3, world, &requests[1]);
      MPI_Isend(envelope_out, 64, MPI_BYTE, peer, 2, world, &requests[2]);
      MPI_Isend(out.data(), n, MPI_BYTE, peer, 3, world, &requests[3]);
      MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    }
  }
}

void run(const bench::Args& args, const bench::Context& ctx) {
  if (ctx.size() < 2) {
    ctx.note("p2p: needs at least 2 ranks; nothing measured");
    return;
  }
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 2), args.get_int("reps", 15));
  const int trips = args.get_int("trips", 100);
  if (trips < 1) throw std::invalid_argument("--trips must be positive");
  const auto variants = args.get_list("variants", {"pingpong", "ipingpong"});
  for (const auto& variant : variants) {
    if (variant != "pingpong" && variant != "ipingpong" && variant != "exchange") {
      throw std::invalid_argument("--variants: unknown variant '" + variant + "' (pingpong, ipingpong, exchange)");
    }
  }
  const auto impls = args.get_list("impls", {"rbc", "mpi"});
  for (const auto& impl : impls) {
    const bool protocol = impl == "mpi_late_payload" || impl == "mpi_preposted" || impl == "mpi_announced";
    if (impl != "rbc" && impl != "rbc_enveloped" && impl != "mpi" && impl != "mpi_wire" && !protocol) {
      throw std::invalid_argument("--impls: unknown implementation '" + impl +
                                  "' (rbc, rbc_enveloped, mpi; pingpong and ipingpong also mpi_wire; exchange also "
                                  "mpi_late_payload, mpi_preposted, mpi_announced)");
    }
    if (protocol && (variants.size() != 1 || variants[0] != "exchange")) {
      throw std::invalid_argument("--impls " + impl + " measures the exchange variant only (--variants=exchange)");
    }
    if (impl == "mpi_wire" && std::find(variants.begin(), variants.end(), "exchange") != variants.end()) {
      throw std::invalid_argument("--impls mpi_wire measures pingpong and ipingpong only");
    }
  }
  const rbc::RangeComm rworld = rbc::RangeComm::from_mpi(ctx.world());
  const rbc::RangeComm renveloped = rworld.split(0, ctx.size() - 1);
  for (std::int64_t bytes : args.get_int_list("sizes", {8, 64, 1024, 65536})) {
    if (bytes < 0 || bytes > (1 << 30)) throw std::invalid_argument("--sizes out of range");
    const int wire = rbc::wire_bytes(static_cast<int>(bytes), renveloped);
    for (const auto& variant : variants) {
      for (const auto& impl : impls) {
        const bool use_rbc = impl == "rbc" || impl == "rbc_enveloped";
        const rbc::RangeComm& rcomm = impl == "rbc" ? rworld : renveloped;
        const std::size_t sent = static_cast<std::size_t>(impl == "mpi_wire" ? wire : bytes);
        std::vector<char> buf(sent, 1);
        std::vector<char> in(sent, 0);
        const bench::Summary s = measure.run([&] {
          if (variant == "pingpong") {
            round_trips(use_rbc, trips, buf, ctx.rank(), rcomm, ctx.world());
          } else if (variant == "ipingpong") {
            round_trips_requests(use_rbc, trips, buf, in, ctx.rank(), rcomm, ctx.world());
          } else {
            exchanges(impl, trips, buf, in, ctx.rank(), rcomm, ctx.world());
          }
        });
        // A round trip is two messages one after the other; an exchange, two at once.
        const double per = variant == "exchange" ? trips : 2.0 * trips;
        bench::Summary one = s;
        one.median /= per;
        one.min /= per;
        one.max /= per;
        bench::Record r = ctx.record("p2p");
        r.add("variant", variant).add("implementation", impl).add("n", bytes).add("n_unit", "bytes")
            .add("trips", trips).add("time_unit", variant == "exchange" ? "exchange" : "half round trip")
            .add_summary(one);
        // The bytes of each MPI message (a large payload's envelope travels apart).
        if (variant != "exchange") {
          r.add("wire_bytes", std::int64_t{use_rbc ? rbc::wire_bytes(static_cast<int>(bytes), rcomm)
                                           : impl == "mpi"      ? static_cast<int>(bytes)
                                                                : wire});
        }
        ctx.emit(r);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::main_with_mpi(argc, argv, {"sizes", "impls", "variants", "trips", "warmup", "reps"}, run); }
