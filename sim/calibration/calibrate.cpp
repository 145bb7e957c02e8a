// Micro-measurements behind a calibration profile (sim/calibration/calibrate.py fits them).
//
// Runs on real MPI (calibrate_mpi under mpirun) to measure the machine, and as its SMPI twin
// (calibrate_smpi under sim/runner with a profile) to measure what the model makes of the same
// operations. Every measurement is printed by rank 0 as one line
//   JANUS_CALIB {"kind":..., ...,"samples":[seconds, ...]}
// where each sample is one timed trial (already divided by the operations it timed).
//
// usage: calibrate [pingpong] [overhead] [probe] [exchange] [comm] [coll] [kernels] [--quick]
// (no section = all). Sections that need two ranks are skipped at p = 1.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "inputs/rng.hpp"
#include "jquick/detail/layers.hpp"
#include "localsort/localsort.hpp"
#include "localsort/merge.hpp"
#include "localsort/partition.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"
#include "rbc/point_to_point.hpp"

namespace {

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

struct Setup {
  MPI_Comm world;
  int rank;
  int size;
  bool quick;
};

std::string samples_json(const std::vector<double>& samples) {
  std::ostringstream out;
  out.precision(9);
  out << '[';
  for (std::size_t i = 0; i < samples.size(); ++i) out << (i ? "," : "") << samples[i];
  out << ']';
  return out.str();
}

void emit(const Setup& s, const std::string& fields, const std::vector<double>& samples) {
  if (s.rank != 0) return;
  std::printf("JANUS_CALIB {%s,\"samples\":%s}\n", fields.c_str(), samples_json(samples).c_str());
  std::fflush(stdout);
}

void progress(const Setup& s, const std::string& text) {
  if (s.rank != 0) return;
  std::fprintf(stderr, "calibrate: %s\n", text.c_str());
}

// Maximum over the ranks of comm of a local time (valid on every rank).
double max_over(double local, MPI_Comm comm) {
  double global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return global;
}

// ---------------------------------------------------------------------------------------------
// Point to point between ranks 0 and 1

std::vector<int> pingpong_sizes(bool quick) {
  // 256 and 257 bracket Open MPI's shared-memory inline limit (256 B), where the half round trip
  // steps up by about half; the fit places a latency step where neighbouring sizes show one.
  std::vector<int> sizes = {0,    8,    64,   128,   256,   257,    320,     384,     512,
                            1024, 2048, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  if (quick) sizes = {0, 8, 256, 257, 1024, 65536, 1 << 20};
  return sizes;
}

int round_trips_for(int bytes) {
  if (bytes <= 4096) return 200;
  if (bytes <= 65536) return 50;
  if (bytes <= 262144) return 20;
  return 5;
}

// Time per call of `call`, `calls` calls per trial, one sample per trial after two warm-up
// trials; with `together`, every trial starts with a barrier.
std::vector<double> per_call(const Setup& s, int trials, int calls, bool together,
                             const std::function<void()>& call) {
  std::vector<double> samples;
  for (int t = -2; t < trials; ++t) {
    if (together) check(MPI_Barrier(s.world), "MPI_Barrier");
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call();
    if (t >= 0) samples.push_back((MPI_Wtime() - start) / calls);
  }
  return samples;
}

// Half round trips between ranks 0 and 1 (`send` then `recv` on rank 0, the reverse on rank 1).
std::vector<double> half_round_trips(const Setup& s, int trials, int trips,
                                     const std::function<void(int peer)>& send,
                                     const std::function<void(int peer)>& recv) {
  std::vector<double> samples = per_call(s, trials, trips, true, [&] {
    if (s.rank == 0) {
      send(1);
      recv(1);
    } else if (s.rank == 1) {
      recv(0);
      send(0);
    }
  });
  for (double& x : samples) x /= 2.0;
  return samples;
}

// MPI's own blocking ping-pong of `bytes` bytes from `buffer`.
std::vector<double> mpi_half_round_trips(const Setup& s, int trials, int bytes, std::vector<char>& buffer) {
  return half_round_trips(
      s, trials, round_trips_for(bytes),
      [&](int peer) { check(MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, 1, s.world), "MPI_Send"); },
      [&](int peer) {
        check(MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, 1, s.world, MPI_STATUS_IGNORE), "MPI_Recv");
      });
}

// The envelope in front of every small RBC message (core/rbc/src/wire.cpp, Header).
constexpr int kRbcEnvelopeBytes = 56;

void pingpong(const Setup& s) {
  const int trials = s.quick ? 7 : 15;
  for (int bytes : pingpong_sizes(s.quick)) {
    std::vector<char> buffer(static_cast<std::size_t>(std::max(bytes, 1)));
    emit(s, "\"kind\":\"pingpong\",\"bytes\":" + std::to_string(bytes), mpi_half_round_trips(s, trials, bytes, buffer));
  }
}

// One trial of MPI's exchange of `bytes` bytes between ranks 0 and 1 (Irecv, Isend, Waitall),
// `calls` exchanges: time per exchange.
double mpi_exchange(const Setup& s, char* in, const char* out, int bytes, int calls, int tag) {
  return per_call(s, 1, calls, true, [&] {
    if (s.rank > 1) return;
    const int peer = 1 - s.rank;
    MPI_Request requests[2];
    check(MPI_Irecv(in, bytes, MPI_BYTE, peer, tag, s.world, &requests[0]), "MPI_Irecv");
    check(MPI_Isend(out, bytes, MPI_BYTE, peer, tag, s.world, &requests[1]), "MPI_Isend");
    check(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
  })[0];
}

// RBC's ping-pong through `send` / `recv` (buffer, payload bytes, peer) in the eager range,
// against MPI's blocking ping-pong of the same bytes on the wire: the simulation charges MPI's
// costs for those, envelope included, so RBC's own cost is the difference. Trials alternate
// between the two, so that both see the same machine: on a shared host the load changes within
// seconds, and the difference is what is charged. Emits `kind` and `kind`_mpi records.
void rbc_pingpongs(const Setup& s, int trials, const std::string& kind,
                   const std::function<void(char*, int, int)>& send, const std::function<void(char*, int, int)>& recv) {
  for (int bytes : {0, 8, 64, 256, 1024, 4096}) {
    const int wire = bytes + kRbcEnvelopeBytes;
    std::vector<char> buffer(static_cast<std::size_t>(std::max(wire, 1)));
    std::vector<double> rbc_samples, mpi_samples;
    for (int t = 0; t < trials; ++t) {
      const auto r = half_round_trips(
          s, 1, round_trips_for(bytes), [&](int peer) { send(buffer.data(), bytes, peer); },
          [&](int peer) { recv(buffer.data(), bytes, peer); });
      rbc_samples.push_back(r[0]);
      mpi_samples.push_back(mpi_half_round_trips(s, 1, wire, buffer)[0]);
    }
    emit(s, "\"kind\":\"" + kind + "\",\"bytes\":" + std::to_string(bytes), rbc_samples);
    emit(s, "\"kind\":\"" + kind + "_mpi\",\"bytes\":" + std::to_string(bytes) + ",\"wire_bytes\":" +
                std::to_string(wire),
         mpi_samples);
  }
}

// RBC's own software cost: the ping-pong through rbc::isend / rbc::irecv and wait (the
// nonblocking path the sorts and RBC's collectives use) on a RangeComm over the world, in the
// eager range, the same through the blocking rbc::send / rbc::recv, and the nonblocking one as an
// exchange (each against MPI's of the same bytes on the wire: the difference is what RBC adds per
// message); an exchange through JQuick's pool against the
// same through RBC; the time of one local split (creation plus destruction of the RangeComm).
// All on a split over all ranks: the from_mpi handle's own user messages travel bare (no
// envelope, no charge), every other communicator's carry the envelope these charges model.
void rbc_costs(const Setup& s) {
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(s.world).split(0, s.size - 1);
  const int trials = s.quick ? 7 : 15;
  rbc_pingpongs(s, trials, "rbc_pingpong",
                [&](char* buf, int bytes, int peer) { rbc::isend(buf, bytes, MPI_BYTE, peer, 1, world).wait(); },
                [&](char* buf, int bytes, int peer) { rbc::irecv(buf, bytes, MPI_BYTE, peer, 1, world).wait(); });
  // The same through the blocking rbc::send / rbc::recv, with no operation in flight: the path of
  // blocking point-to-point and of the tree collectives run at once (send_now, recv_now), which
  // does less per message than a request.
  rbc_pingpongs(s, trials, "rbc_blocking_pingpong",
                [&](char* buf, int bytes, int peer) { rbc::send(buf, bytes, MPI_BYTE, peer, 4, world); },
                [&](char* buf, int bytes, int peer) { rbc::recv(buf, bytes, MPI_BYTE, peer, 4, world); });
  // Collectives run at once that exchange (allreduce, scan, allgather, barrier) send a small
  // message from a buffer of their own (a larger one through a pooled buffer), wait for their sends
  // at the end of each step, and take their receives in place: a third cost per message. Measured on a communicator of ranks 0 and 1, where a
  // barrier and an allgather by recursive doubling are one exchange of 0 and of `bytes` bytes,
  // against MPI's exchange of the same wire bytes (fit_collective_message subtracts the
  // call's own bookkeeping, rbc_collective, and divides by one message per rank).
  {
    const rbc::RangeComm pair = world.split(0, 1);
    for (int bytes : {0, 8, 1024}) {
      const int wire = bytes + kRbcEnvelopeBytes;
      const int count = bytes / static_cast<int>(sizeof(double));
      std::vector<double> mine(static_cast<std::size_t>(std::max(count, 1)), 1.0), all(2 * mine.size());
      std::vector<char> out(static_cast<std::size_t>(wire)), in(out.size());
      std::vector<double> rbc_samples, mpi_samples;
      for (int t = 0; t < trials; ++t) {
        rbc_samples.push_back(per_call(s, 1, round_trips_for(bytes), true, [&] {
          if (s.rank > 1) return;
          if (bytes == 0) {
            rbc::barrier(pair);
          } else {
            rbc::allgather(mine.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, pair);
          }
        })[0]);
        mpi_samples.push_back(mpi_exchange(s, in.data(), out.data(), wire, round_trips_for(bytes), 5));
      }
      emit(s, "\"kind\":\"rbc_collective_exchange\",\"bytes\":" + std::to_string(bytes), rbc_samples);
      emit(s, "\"kind\":\"rbc_collective_exchange_mpi\",\"bytes\":" + std::to_string(bytes) +
                  ",\"wire_bytes\":" + std::to_string(wire),
           mpi_samples);
    }
  }
  const int peer = 1 - s.rank;
  // One trial of exchanges of `bytes` bytes through RBC between ranks 0 and 1.
  const auto rbc_exchange = [&](void* in, const void* out, int bytes, int tag) {
    return per_call(s, 1, round_trips_for(bytes), true, [&] {
      if (s.rank > 1) return;
      rbc::Request receive = rbc::irecv(in, bytes, MPI_BYTE, peer, tag, world);
      rbc::Request send = rbc::isend(out, bytes, MPI_BYTE, peer, tag, world);
      receive.wait();
      send.wait();
    })[0];
  };
  // The same in an exchange, both ranks sending and receiving at once (irecv, isend, wait both):
  // the pattern of the sorts' exchanges and of RBC's collectives. There RBC's own work per
  // message costs more than in a ping-pong, where one rank always waits idle.
  for (int bytes : {0, 8, 64, 256, 1024, 4096}) {
    const int wire = bytes + kRbcEnvelopeBytes;
    std::vector<char> out(static_cast<std::size_t>(std::max(wire, 1))), in(out.size());
    std::vector<double> rbc_samples, mpi_samples;
    for (int t = 0; t < trials; ++t) {
      rbc_samples.push_back(rbc_exchange(in.data(), out.data(), bytes, 2));
      mpi_samples.push_back(mpi_exchange(s, in.data(), out.data(), wire, round_trips_for(bytes), 2));
    }
    emit(s, "\"kind\":\"rbc_exchange\",\"bytes\":" + std::to_string(bytes), rbc_samples);
    emit(s, "\"kind\":\"rbc_exchange_mpi\",\"bytes\":" + std::to_string(bytes) + ",\"wire_bytes\":" +
                std::to_string(wire),
         mpi_samples);
  }
  // JQuick's pool (jquick::detail::RbcLayer with its RbcPool: the path of its base cases and
  // data exchanges) against the same exchange through RBC directly, trials alternating: the
  // difference is the pool's work for two completed operations (a send and a receive whose
  // continuation runs).
  {
    jquick::detail::RbcLayer layer(world, true);
    double out = 1.0, in = 0.0;
    const int bytes = static_cast<int>(sizeof out);
    std::vector<double> pool_samples, rbc_samples;
    for (int t = 0; t < trials; ++t) {
      pool_samples.push_back(per_call(s, 1, round_trips_for(8), true, [&] {
        if (s.rank > 1) return;
        jquick::detail::RbcPool pool;
        int received = -1;
        layer.isend(pool, layer.root(), &out, bytes, MPI_BYTE, peer, 3);
        layer.irecv(pool, layer.root(), &in, bytes, MPI_BYTE, peer, 3, [&](int, int count) { received = count; });
        while (!pool.empty()) pool.progress();
        if (received != bytes) throw std::runtime_error("pool exchange: wrong count");
      })[0]);
      rbc_samples.push_back(rbc_exchange(&in, &out, bytes, 3));
    }
    emit(s, "\"kind\":\"pool_exchange\",\"bytes\":8,\"operations\":2", pool_samples);
    emit(s, "\"kind\":\"pool_exchange_rbc\",\"bytes\":8", rbc_samples);
  }
  const int calls = 1000;
  int members = 0;
  const auto splits = per_call(s, trials, calls, false, [&] { members += world.split(0, s.size - 1).size(); });
  if (members == 0) throw std::runtime_error("rbc split: empty communicators");
  emit(s, "\"kind\":\"rbc_split\",\"p\":" + std::to_string(s.size), splits);
  // A split as programs make one: alone, right after communication (bench comm_create, and the
  // sorts between their levels), its result kept. On the development VM its median was 102-123
  // ns, the clock included, against 64-66 ns in a loop of splits, whose code and data stay in
  // cache. Each trial also times an empty interval, the clock's own part (22-23 ns there), which
  // the simulation charges as smpi/wtime.
  {
    std::vector<rbc::RangeComm> kept;
    kept.reserve(1);
    std::vector<double> alone, empty;
    const int rounds = s.quick ? 500 : 2000;
    for (int t = -20; t < rounds; ++t) {
      check(MPI_Barrier(s.world), "MPI_Barrier");
      double start = MPI_Wtime();
      kept.push_back(world.split(0, s.size - 1));
      const double split = max_over(MPI_Wtime() - start, s.world);
      kept.clear();
      check(MPI_Barrier(s.world), "MPI_Barrier");
      start = MPI_Wtime();
      const double nothing = max_over(MPI_Wtime() - start, s.world);
      if (t < 0) continue;
      alone.push_back(split);
      empty.push_back(nothing);
    }
    emit(s, "\"kind\":\"rbc_split_alone\",\"p\":" + std::to_string(s.size), alone);
    emit(s, "\"kind\":\"rbc_split_alone_empty\",\"p\":" + std::to_string(s.size), empty);
  }
  // A collective's own bookkeeping: a broadcast on a communicator of this rank alone sends
  // nothing.
  const rbc::RangeComm self = world.split(s.rank, s.rank);
  double value = 1.0;
  const auto bcasts = per_call(s, trials, calls, false, [&] { rbc::bcast(&value, 1, MPI_DOUBLE, 0, self); });
  emit(s, "\"kind\":\"rbc_collective\",\"p\":1", bcasts);
  // A reduction of 1024 doubles over the world (the regression test checks its operator charge).
  std::vector<double> contribution(1024, 1.0), reduced(1024);
  const auto reduces = per_call(s, trials, 20, true, [&] {
    rbc::reduce(contribution.data(), reduced.data(), 1024, MPI_DOUBLE, MPI_SUM, 0, world);
  });
  emit(s, "\"kind\":\"rbc_reduce\",\"count\":1024,\"p\":" + std::to_string(s.size), reduces);
}

// Send overhead (MPI_Send / MPI_Isend returning, receive already posted) and receive overhead
// (MPI_Recv of a message that has already arrived), per message size, eager range.
void overhead(const Setup& s) {
  const int trials = s.quick ? 7 : 15;
  const int per_trial = 50;
  std::vector<int> sizes = {0, 8, 64, 128, 256, 257, 384, 511, 512, 1024, 2048, 4096};
  if (s.quick) sizes = {0, 256, 1024, 4096};
  for (int bytes : sizes) {
    std::vector<char> buffer(static_cast<std::size_t>(std::max(bytes, 1)) * per_trial);
    for (const char* what : {"send", "isend", "recv"}) {
      const std::string op = what;
      std::vector<double> samples;
      for (int t = -2; t < trials; ++t) {
        std::vector<MPI_Request> requests(per_trial, MPI_REQUEST_NULL);
        double local = 0;
        if (op == "recv") {
          if (s.rank == 0) {  // nonblocking: a message above the eager limit waits for its receive
            for (int i = 0; i < per_trial; ++i) {
              check(MPI_Isend(buffer.data() + i * std::max(bytes, 1), bytes, MPI_BYTE, 1, 2, s.world,
                              &requests[i]),
                    "MPI_Isend");
            }
          }
          check(MPI_Barrier(s.world), "MPI_Barrier");
          if (s.rank == 1) {
            // The eager messages were sent before the barrier: they have arrived.
            const double start = MPI_Wtime();
            for (int i = 0; i < per_trial; ++i) {
              check(MPI_Recv(buffer.data() + i * std::max(bytes, 1), bytes, MPI_BYTE, 0, 2, s.world,
                             MPI_STATUS_IGNORE),
                    "MPI_Recv");
            }
            local = (MPI_Wtime() - start) / per_trial;
          }
          check(MPI_Waitall(per_trial, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        } else {
          if (s.rank == 1) {
            for (int i = 0; i < per_trial; ++i) {
              check(MPI_Irecv(buffer.data() + i * std::max(bytes, 1), bytes, MPI_BYTE, 0, 3, s.world,
                              &requests[i]),
                    "MPI_Irecv");
            }
          }
          check(MPI_Barrier(s.world), "MPI_Barrier");
          if (s.rank == 0) {
            const double start = MPI_Wtime();
            for (int i = 0; i < per_trial; ++i) {
              char* b = buffer.data() + i * std::max(bytes, 1);
              if (op == "send") {
                check(MPI_Send(b, bytes, MPI_BYTE, 1, 3, s.world), "MPI_Send");
              } else {
                check(MPI_Isend(b, bytes, MPI_BYTE, 1, 3, s.world, &requests[i]), "MPI_Isend");
              }
            }
            local = (MPI_Wtime() - start) / per_trial;
          }
          check(MPI_Waitall(per_trial, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        }
        const double value = max_over(local, s.world);
        if (t >= 0) samples.push_back(value);
      }
      emit(s, "\"kind\":\"overhead\",\"op\":\"" + op + "\",\"bytes\":" + std::to_string(bytes), samples);
    }
  }
}

// Probe-then-receive between ranks 0 and 1, as in the hypercube's exchange: each sends with
// MPI_Isend, probes for the incoming count, receives, waits for its send.
void exchange(const Setup& s) {
  const int trials = s.quick ? 7 : 15;
  const int per_trial = 50;
  for (int bytes : {8, 1024}) {
    std::vector<char> out(static_cast<std::size_t>(bytes)), in(static_cast<std::size_t>(bytes));
    std::vector<double> samples;
    for (int t = -2; t < trials; ++t) {
      check(MPI_Barrier(s.world), "MPI_Barrier");
      const double start = MPI_Wtime();
      if (s.rank < 2) {
        const int partner = 1 - s.rank;
        for (int i = 0; i < per_trial; ++i) {
          MPI_Request request;
          check(MPI_Isend(out.data(), bytes, MPI_BYTE, partner, 4, s.world, &request), "MPI_Isend");
          MPI_Status status;
          check(MPI_Probe(partner, 4, s.world, &status), "MPI_Probe");
          int count = 0;
          check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
          check(MPI_Recv(in.data(), count, MPI_BYTE, partner, 4, s.world, MPI_STATUS_IGNORE), "MPI_Recv");
          check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
        }
      }
      const double value = max_over((MPI_Wtime() - start) / per_trial, s.world);
      if (t >= 0) samples.push_back(value);
    }
    emit(s, "\"kind\":\"exchange\",\"bytes\":" + std::to_string(bytes), samples);
  }
}

// MPI_Iprobe with nothing to find, MPI_Test on a request that is still pending, MPI_Wtime, and a
// datatype made and freed.
void probe(const Setup& s) {
  const int trials = s.quick ? 7 : 15;
  const int calls = 1000;
  std::vector<double> iprobe, test;
  for (int t = -2; t < trials; ++t) {
    check(MPI_Barrier(s.world), "MPI_Barrier");
    int flag = 0;
    double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) {
      check(MPI_Iprobe(MPI_ANY_SOURCE, 77, s.world, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
    }
    const double probe_time = (MPI_Wtime() - start) / calls;
    int value = 0;
    MPI_Request request;
    check(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 78, s.world, &request), "MPI_Irecv");
    start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    const double test_time = (MPI_Wtime() - start) / calls;
    check(MPI_Barrier(s.world), "MPI_Barrier");
    check(MPI_Send(&value, 1, MPI_INT, s.rank, 78, s.world), "MPI_Send");  // to self: completes it
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    if (t >= 0) {
      iprobe.push_back(max_over(probe_time, s.world));
      test.push_back(max_over(test_time, s.world));
    } else {
      max_over(0, s.world);
      max_over(0, s.world);
    }
  }
  emit(s, "\"kind\":\"iprobe\"", iprobe);
  emit(s, "\"kind\":\"test\"", test);
  // MPI_Wtime (programs that time their phases call it often) and a contiguous datatype's
  // creation, commit and free (sorts make their element and sample types per call).
  double sink = 0;
  emit(s, "\"kind\":\"wtime\"", per_call(s, trials, calls, false, [&] { sink += MPI_Wtime(); }));
  if (sink < 0) progress(s, "MPI_Wtime went backwards");
  emit(s, "\"kind\":\"type_create\"", per_call(s, trials, calls, false, [&] {
         MPI_Datatype type;
         check(MPI_Type_contiguous(16, MPI_BYTE, &type), "MPI_Type_contiguous");
         check(MPI_Type_commit(&type), "MPI_Type_commit");
         check(MPI_Type_free(&type), "MPI_Type_free");
       }));
}

// ---------------------------------------------------------------------------------------------
// Communicator creation on the first p ranks, split into halves (like bench comm_create)

std::vector<int> powers_up_to(int n) {
  std::vector<int> out;
  for (int p = 1; p <= n; p *= 2) out.push_back(p);
  return out;
}

MPI_Comm prefix_comm(const Setup& s, int p) {
  MPI_Group world_group, group;
  check(MPI_Comm_group(s.world, &world_group), "MPI_Comm_group");
  int range[1][3] = {{0, p - 1, 1}};
  check(MPI_Group_range_incl(world_group, 1, range, &group), "MPI_Group_range_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  if (s.rank < p) check(MPI_Comm_create_group(s.world, group, 900 + p, &comm), "MPI_Comm_create_group");
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  return comm;
}

void comm_creation(const Setup& s) {
  const int trials = s.quick ? 9 : 25;
  for (int p : powers_up_to(s.size)) {
    MPI_Comm comm = prefix_comm(s, p);
    for (const char* what : {"create_group", "split", "dup", "free"}) {
      const std::string op = what;
      std::vector<double> samples;
      for (int t = -3; t < trials; ++t) {
        double local = 0;
        if (comm != MPI_COMM_NULL) {
          int rank = 0;
          MPI_Comm_rank(comm, &rank);
          const int half = p / 2;
          const bool lower = rank < half || p == 1;
          MPI_Comm made = MPI_COMM_NULL;
          check(MPI_Barrier(comm), "MPI_Barrier");
          double start = MPI_Wtime();
          if (op == "create_group") {
            MPI_Group parent, group;
            check(MPI_Comm_group(comm, &parent), "MPI_Comm_group");
            int range[1][3] = {{lower ? 0 : half, lower ? std::max(half, 1) - 1 : p - 1, 1}};
            check(MPI_Group_range_incl(parent, 1, range, &group), "MPI_Group_range_incl");
            check(MPI_Comm_create_group(comm, group, 5, &made), "MPI_Comm_create_group");
            MPI_Group_free(&group);
            MPI_Group_free(&parent);
          } else if (op == "split") {
            check(MPI_Comm_split(comm, lower ? 0 : 1, rank, &made), "MPI_Comm_split");
          } else {
            check(MPI_Comm_dup(comm, &made), "MPI_Comm_dup");
          }
          local = MPI_Wtime() - start;
          if (op == "free") {
            check(MPI_Barrier(comm), "MPI_Barrier");
            start = MPI_Wtime();
            check(MPI_Comm_free(&made), "MPI_Comm_free");
            local = MPI_Wtime() - start;
          } else {
            check(MPI_Comm_free(&made), "MPI_Comm_free");
          }
        }
        const double value = max_over(local, s.world);
        if (t >= 0) samples.push_back(value);
      }
      emit(s, "\"kind\":\"comm\",\"op\":\"" + op + "\",\"p\":" + std::to_string(p), samples);
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}

// ---------------------------------------------------------------------------------------------
// The library's collectives on the first p ranks, by message size

void collectives(const Setup& s) {
  const int trials = s.quick ? 7 : 15;
  const int per_trial = 20;
  std::vector<int> counts = {1, 128, 8192};  // doubles: 8 B, 1 KiB, 64 KiB
  for (int p : powers_up_to(s.size)) {
    if (p < 2) continue;
    MPI_Comm comm = prefix_comm(s, p);
    for (const char* what : {"bcast", "reduce", "allreduce", "scan", "gather"}) {
      const std::string op = what;
      for (int count : counts) {
        std::vector<double> in(static_cast<std::size_t>(count), 1.0);
        std::vector<double> out(static_cast<std::size_t>(count) * (op == "gather" ? p : 1));
        std::vector<double> samples;
        for (int t = -2; t < trials; ++t) {
          double local = 0;
          if (comm != MPI_COMM_NULL) {
            check(MPI_Barrier(comm), "MPI_Barrier");
            const double start = MPI_Wtime();
            for (int i = 0; i < per_trial; ++i) {
              if (op == "bcast") {
                check(MPI_Bcast(in.data(), count, MPI_DOUBLE, 0, comm), "MPI_Bcast");
              } else if (op == "reduce") {
                check(MPI_Reduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm),
                      "MPI_Reduce");
              } else if (op == "allreduce") {
                check(MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, comm),
                      "MPI_Allreduce");
              } else if (op == "scan") {
                check(MPI_Scan(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, comm), "MPI_Scan");
              } else {
                check(MPI_Gather(in.data(), count, MPI_DOUBLE, out.data(), count, MPI_DOUBLE, 0, comm),
                      "MPI_Gather");
              }
            }
            local = (MPI_Wtime() - start) / per_trial;
          }
          const double value = max_over(local, s.world);
          if (t >= 0) samples.push_back(value);
        }
        emit(s, "\"kind\":\"coll\",\"op\":\"" + op + "\",\"p\":" + std::to_string(p) +
                    ",\"bytes\":" + std::to_string(count * 8),
             samples);
      }
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}

// ---------------------------------------------------------------------------------------------
// Local kernels on doubles, every rank at once (as in a sort); time per call. Sort, partition and
// merge are the project's own kernels (localsort), the ones cost::charge stands for. Each sample
// times a short batch of calls (tens of microseconds), so that on a shared, busy host most
// samples fall inside one scheduling slice and the median is the cost of the work itself.

void kernels(const Setup& s) {
  std::vector<std::int64_t> sizes = {1, 16, 256, 4096, 65536, 262144};
  if (s.quick) sizes = {1, 256, 4096, 65536};
  std::mt19937_64 rng(12345u + static_cast<unsigned>(s.rank));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  inputs::Rng swaps(12345u, static_cast<std::uint64_t>(s.rank));
  for (const char* what : {"sort", "partition", "select", "merge", "copy", "shuffle", "reduce"}) {
    const std::string op = what;
    for (std::int64_t n : sizes) {
      const int calls = static_cast<int>(std::max<std::int64_t>(1, 2048 / n));
      const int batches = static_cast<int>(
          std::max<std::int64_t>(s.quick ? 5 : 9, std::min<std::int64_t>(s.quick ? 40 : 100, 4000000 / (n * calls))));
      std::vector<std::vector<double>> inputs(static_cast<std::size_t>(calls));
      std::vector<double> out(static_cast<std::size_t>(n));
      std::vector<double> samples;
      check(MPI_Barrier(s.world), "MPI_Barrier");
      double sink = 0;
      for (int b = -1; b < batches; ++b) {
        for (auto& v : inputs) {
          v.resize(static_cast<std::size_t>(n));
          for (auto& x : v) x = uniform(rng);
          if (op == "merge") {  // two sorted halves
            std::sort(v.begin(), v.begin() + n / 2);
            std::sort(v.begin() + n / 2, v.end());
          }
        }
        const double start = MPI_Wtime();
        for (auto& v : inputs) {
          if (op == "sort") {
            localsort::sort(v.data(), v.data() + v.size(), std::less<double>());
          } else if (op == "partition") {
            localsort::partition(v.data(), v.data() + v.size(), [](double x) { return x < 0.5; });
          } else if (op == "select") {
            std::nth_element(v.begin(), v.begin() + n / 2, v.end());
          } else if (op == "shuffle") {  // n random swaps, as the hypercube's reshuffle draws its half
            const std::size_t m = v.size();
            for (std::size_t j = 0; j < m; ++j) std::swap(v[static_cast<std::size_t>(swaps.below(m - j))], v[m - 1 - j]);
          } else if (op == "reduce") {  // RBC's reductions: MPI_Reduce_local, charged per byte
            check(MPI_Reduce_local(v.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM),
                  "MPI_Reduce_local");
          } else if (op == "merge") {
            localsort::merge(v.data(), static_cast<std::size_t>(n / 2), v.data() + n / 2,
                             static_cast<std::size_t>(n - n / 2), out.data(), std::less<double>());
          } else {
            std::copy(v.begin(), v.end(), out.begin());
          }
          sink += v[0] + out[0];
        }
        if (b >= 0) samples.push_back((MPI_Wtime() - start) / calls);
      }
      if (sink == -1) std::fprintf(stderr, "impossible\n");  // keeps the work observable
      // Rank 0 reports the median batch of the rank whose median is largest.
      std::vector<double> sorted = samples;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      const double mine = sorted[sorted.size() / 2];
      const double worst = max_over(mine, s.world);
      int owner = mine == worst ? s.rank : s.size;
      int chosen = 0;
      check(MPI_Allreduce(&owner, &chosen, 1, MPI_INT, MPI_MIN, s.world), "MPI_Allreduce");
      if (chosen != 0) {
        if (s.rank == chosen) {
          check(MPI_Send(samples.data(), static_cast<int>(samples.size()), MPI_DOUBLE, 0, 9, s.world),
                "MPI_Send");
        } else if (s.rank == 0) {
          check(MPI_Recv(samples.data(), static_cast<int>(samples.size()), MPI_DOUBLE, chosen, 9, s.world,
                         MPI_STATUS_IGNORE),
                "MPI_Recv");
        }
      }
      // The reduction is charged per byte (any datatype), the others per element.
      const std::int64_t units = op == "reduce" ? n * static_cast<std::int64_t>(sizeof(double)) : n;
      emit(s, "\"kind\":\"kernel\",\"op\":\"" + op + "\",\"n\":" + std::to_string(units), samples);
    }
  }
}

int run(int argc, char** argv) {
  Setup s{MPI_COMM_WORLD, 0, 1, false};
  MPI_Comm_rank(s.world, &s.rank);
  MPI_Comm_size(s.world, &s.size);
  std::vector<std::string> sections;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      s.quick = true;
    } else if (arg == "pingpong" || arg == "overhead" || arg == "probe" || arg == "comm" ||
               arg == "coll" || arg == "kernels" || arg == "exchange" || arg == "rbc") {
      sections.push_back(arg);
    } else {
      throw std::invalid_argument("calibrate: unknown argument '" + arg +
                                  "' (sections: pingpong overhead probe exchange comm coll kernels rbc; --quick)");
    }
  }
  if (sections.empty()) {
    sections = {"pingpong", "overhead", "probe", "exchange", "comm", "coll", "kernels", "rbc"};
  }
  const std::vector<std::pair<std::string, std::function<void(const Setup&)>>> all = {
      {"pingpong", pingpong}, {"overhead", overhead}, {"probe", probe}, {"exchange", exchange},
      {"comm", comm_creation}, {"coll", collectives}, {"kernels", kernels}, {"rbc", rbc_costs}};
  for (const auto& [name, fn] : all) {
    if (std::find(sections.begin(), sections.end(), name) == sections.end()) continue;
    if ((name == "pingpong" || name == "overhead" || name == "exchange" || name == "rbc") && s.size < 2) {
      progress(s, name + " skipped (needs 2 ranks)");
      continue;
    }
    progress(s, name + " ...");
    fn(s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "calibrate: %s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
