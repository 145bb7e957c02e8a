// RBC point-to-point on full, sub-, strided, nested, janus, size-1 and reversed-parent layouts:
// send/isend/recv/irecv/sendrecv/probe/iprobe with specific sources and MPI_ANY_SOURCE. Every
// status names the sender as a member rank, carries the user's tag and the right count, and
// every message arrives exactly once. Every predefined C datatype arrives byte for byte, small
// and large, with the status counting its elements (RBC answers their layout without MPI).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "support/layout.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;
using rbc_test::LayoutComms;

constexpr int kMaxCount = 16;

// A message: sender's world rank, member rank, sequence number, tag, then filler up to count.
std::vector<int> message(int world, int member, int seq, int tag, int count) {
  std::vector<int> m(count);
  const int head[4] = {world, member, seq, tag};
  for (int i = 0; i < count; ++i) m[i] = i < 4 ? head[i] : world * 1000 + seq * 100 + i;
  return m;
}
int count_for(int member, int seq) { return 4 + (member * 3 + seq) % 9; }

class P2p {
 public:
  P2p(Checker& check, const LayoutComms& lc, int layout_index)
      : check_(check), lc_(lc), c_(lc.comm()), r_(lc.rank()), s_(lc.size()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &world_);
    const int tags[3] = {0, 17, rbc::max_user_tag};
    tag_ = tags[layout_index % 3];
  }

  void run() {
    ring();
    sendrecv_shift();
    self_messages();
    int phase = 0;
    for (int hub : rbc_test::sample_ranks(s_, s_ > 64 ? 1 : 3, 5)) any_source_to(hub, phase++);
  }

 private:
  // Status fields against the expected sender, tag and count.
  void check_status(const rbc::Status& st, int source, int tag, int count, const char* what) {
    check_.equal(st.source, source, what, ": status.source");
    check_.equal(st.tag, tag, what, ": status.tag");
    check_.equal(st.count(MPI_INT), count, what, ": status.count(MPI_INT)");
  }
  void check_payload(const std::vector<int>& got, int count, const std::vector<int>& expected,
                     const char* what) {
    check_.equal_ranges(std::vector<int>(got.begin(), got.begin() + count), expected, what,
                        ": payload");
  }

  // isend to the right neighbour, blocking recv from the left one (specific source); then the
  // other way round with irecv posted first and a blocking send.
  void ring() {
    Context context(check_, "ring with tag ", tag_);
    const int right = (r_ + 1) % s_, left = (r_ + s_ - 1) % s_;
    {
      const auto out = message(world_, r_, 0, tag_, count_for(r_, 0));
      rbc::Request send = rbc::isend(out.data(), static_cast<int>(out.size()), MPI_INT, right,
                                     tag_, c_);
      std::vector<int> in(kMaxCount, -1);
      const rbc::Status st = rbc::recv(in.data(), kMaxCount, MPI_INT, left, tag_, c_);
      send.wait();
      const int n = count_for(left, 0);
      check_status(st, left, tag_, n, "recv from left");
      check_payload(in, n, message(lc_.world_ranks()[left], left, 0, tag_, n), "recv from left");
    }
    {
      std::vector<int> in(kMaxCount, -1);
      rbc::Request recv = rbc::irecv(in.data(), kMaxCount, MPI_INT, right, tag_, c_);
      const auto out = message(world_, r_, 1, tag_, count_for(r_, 1));
      rbc::send(out.data(), static_cast<int>(out.size()), MPI_INT, left, tag_, c_);
      recv.wait();
      const int n = count_for(right, 1);
      check_status(recv.status(), right, tag_, n, "irecv from right");
      check_payload(in, n, message(lc_.world_ranks()[right], right, 1, tag_, n),
                    "irecv from right");
    }
  }

  void sendrecv_shift() {
    const int k = s_ > 1 ? 1 + (s_ / 3) % (s_ - 1) : 0;
    Context context(check_, "sendrecv shifted by ", k);
    const int to = (r_ + k) % s_, from = (r_ + s_ - k) % s_;
    const auto out = message(world_, r_, 2, tag_, count_for(r_, 2));
    std::vector<int> in(kMaxCount, -1);
    const rbc::Status st = rbc::sendrecv(out.data(), static_cast<int>(out.size()), MPI_INT, to,
                                         tag_, in.data(), kMaxCount, MPI_INT, from, tag_, c_);
    const int n = count_for(from, 2);
    check_status(st, from, tag_, n, "sendrecv");
    check_payload(in, n, message(lc_.world_ranks()[from], from, 2, tag_, n), "sendrecv");
  }

  // Messages to oneself with specific and wildcard receives, probe and iprobe.
  void self_messages() {
    Context context(check_, "messages to self");
    const auto a = message(world_, r_, 3, tag_, 5), b = message(world_, r_, 4, tag_, 7);
    rbc::Request ra = rbc::isend(a.data(), 5, MPI_INT, r_, tag_, c_);
    rbc::Request rb = rbc::isend(b.data(), 7, MPI_INT, r_, tag_, c_);
    const rbc::Status probed = rbc::probe(r_, tag_, c_);
    check_status(probed, r_, tag_, 5, "probe(self)");  // first sent is first matched
    std::vector<int> in(kMaxCount, -1);
    check_status(rbc::recv(in.data(), kMaxCount, MPI_INT, MPI_ANY_SOURCE, tag_, c_), r_, tag_, 5,
                 "recv(ANY_SOURCE) from self");
    check_payload(in, 5, a, "recv(ANY_SOURCE) from self");
    std::optional<rbc::Status> found;
    while (!(found = rbc::iprobe(MPI_ANY_SOURCE, tag_, c_))) {
    }
    check_status(*found, r_, tag_, 7, "iprobe(ANY_SOURCE) from self");
    check_status(rbc::recv(in.data(), kMaxCount, MPI_INT, r_, tag_, c_), r_, tag_, 7,
                 "recv(self)");
    check_payload(in, 7, b, "recv(self)");
    ra.wait();
    rb.wait();
    check_.check(!rbc::iprobe(MPI_ANY_SOURCE, tag_, c_).has_value(),
                 "iprobe(ANY_SOURCE) still finds a message after both were received");
  }

  // Every other member sends two messages to `hub`, which takes them with wildcard receives in
  // one of four ways; each sender must arrive exactly twice, in order, with the right status.
  void any_source_to(int hub, int phase) {
    const int tag = (tag_ + 1 + phase) % (rbc::max_user_tag + 1);
    const int mode = phase % 4;
    const char* modes[4] = {"probe(ANY) + recv(source)", "recv(ANY)", "irecv(ANY) posted first",
                            "iprobe(ANY) loop + irecv(source)"};
    Context context(check_, "all to member ", hub, " with ", modes[mode], ", tag ", tag);
    std::vector<std::vector<int>> posted_buffers;
    std::vector<rbc::Request> posted;
    if (r_ == hub && mode == 2) {
      posted_buffers.assign(2 * (s_ - 1), std::vector<int>(kMaxCount, -1));
      for (auto& b : posted_buffers)
        posted.push_back(rbc::irecv(b.data(), kMaxCount, MPI_INT, MPI_ANY_SOURCE, tag, c_));
    }
    MPI_Barrier(lc_.reference());  // receives are posted before anything is sent
    if (r_ != hub) {
      const auto m0 = message(world_, r_, 0, tag, count_for(r_, 0));
      const auto m1 = message(world_, r_, 1, tag, count_for(r_, 1));
      if (r_ % 2 == 0) {
        rbc::send(m0.data(), static_cast<int>(m0.size()), MPI_INT, hub, tag, c_);
        rbc::send(m1.data(), static_cast<int>(m1.size()), MPI_INT, hub, tag, c_);
      } else {
        std::vector<rbc::Request> sends;
        sends.push_back(rbc::isend(m0.data(), static_cast<int>(m0.size()), MPI_INT, hub, tag, c_));
        sends.push_back(rbc::isend(m1.data(), static_cast<int>(m1.size()), MPI_INT, hub, tag, c_));
        rbc::wait_all(sends);
      }
      MPI_Barrier(lc_.reference());
      return;
    }
    std::vector<int> seen(s_, 0);
    auto take = [&](const rbc::Status& st, const std::vector<int>& in, const char* what) {
      const int src = st.source;
      if (!check_.check(src >= 0 && src < s_ && src != hub, what, ": status.source ", src,
                        " is not another member"))
        return;
      const int seq = seen[src]++;
      if (!check_.check(seq < 2, what, ": a third message from member ", src)) return;
      const int n = count_for(src, seq);
      check_status(st, src, tag, n, what);
      check_payload(in, n, message(lc_.world_ranks()[src], src, seq, tag, n), what);
    };
    for (int i = 0; i < 2 * (s_ - 1); ++i) {
      std::vector<int> in(kMaxCount, -1);
      if (mode == 0) {
        const rbc::Status pr = rbc::probe(MPI_ANY_SOURCE, tag, c_);
        const rbc::Status st = rbc::recv(in.data(), kMaxCount, MPI_INT, pr.source, tag, c_);
        check_.equal(pr.count(MPI_INT), st.count(MPI_INT), "probe count vs received count");
        take(st, in, "probe + recv");
      } else if (mode == 1) {
        take(rbc::recv(in.data(), kMaxCount, MPI_INT, MPI_ANY_SOURCE, tag, c_), in, "recv(ANY)");
      } else if (mode == 2) {
        posted[i].wait();
        take(posted[i].status(), posted_buffers[i], "irecv(ANY)");
      } else {
        std::optional<rbc::Status> pr;
        while (!(pr = rbc::iprobe(MPI_ANY_SOURCE, tag, c_))) {
        }
        rbc::Request rq = rbc::irecv(in.data(), kMaxCount, MPI_INT, pr->source, tag, c_);
        rq.wait();
        take(rq.status(), in, "iprobe + irecv");
      }
    }
    for (int src = 0; src < s_; ++src)
      if (src != hub) check_.equal(seen[src], 2, "messages received from member ", src);
    check_.check(!rbc::iprobe(MPI_ANY_SOURCE, tag, c_).has_value(),
                 "iprobe(ANY_SOURCE) finds a message after all were received");
    MPI_Barrier(lc_.reference());
  }

  Checker& check_;
  const LayoutComms& lc_;
  const rbc::RangeComm& c_;
  int r_, s_;
  int world_ = 0;
  int tag_ = 0;
};

// Each predefined datatype of a C type, sent from rank 0 to the last rank of `comm` as `count`
// elements of a byte pattern (4 elements: one small message; 2000: envelope and payload apart).
void predefined_types(Checker& check, const rbc::RangeComm& comm) {
  struct Named {
    MPI_Datatype type;
    const char* name;
  };
  const Named types[] = {
      {MPI_DOUBLE, "MPI_DOUBLE"}, {MPI_INT64_T, "MPI_INT64_T"}, {MPI_UINT64_T, "MPI_UINT64_T"},
      {MPI_LONG_LONG, "MPI_LONG_LONG"}, {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
      {MPI_BYTE, "MPI_BYTE"}, {MPI_CHAR, "MPI_CHAR"}, {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
      {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"}, {MPI_INT8_T, "MPI_INT8_T"}, {MPI_UINT8_T, "MPI_UINT8_T"},
      {MPI_INT, "MPI_INT"}, {MPI_UNSIGNED, "MPI_UNSIGNED"}, {MPI_FLOAT, "MPI_FLOAT"},
      {MPI_INT32_T, "MPI_INT32_T"}, {MPI_UINT32_T, "MPI_UINT32_T"}, {MPI_LONG, "MPI_LONG"},
      {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"}, {MPI_SHORT, "MPI_SHORT"},
      {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"}, {MPI_INT16_T, "MPI_INT16_T"}, {MPI_UINT16_T, "MPI_UINT16_T"},
  };
  const int last = comm.size() - 1;
  if (last == 0 || (comm.rank() != 0 && comm.rank() != last)) return;
  for (const Named& t : types) {
    int size = 0;
    MPI_Type_size(t.type, &size);
    for (int count : {4, 2000}) {
      const std::size_t bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
      // One element more than sent on both sides: a wrong size would move or overwrite it.
      std::vector<unsigned char> out(bytes + static_cast<std::size_t>(size)), in(out.size(), 0xee);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
      if (comm.rank() == 0) {
        rbc::send(out.data(), count, t.type, last, 9, comm);
      } else {
        const rbc::Status status = rbc::recv(in.data(), count + 1, t.type, 0, 9, comm);
        check.equal(status.count(t.type), count, t.name, ": elements counted in a ", count, "-element message");
        check.check(std::memcmp(in.data(), out.data(), bytes) == 0, t.name, ": ", count,
                    " elements arrived byte for byte");
        check.check(std::all_of(in.begin() + static_cast<std::ptrdiff_t>(bytes), in.end(),
                                [](unsigned char b) { return b == 0xee; }),
                    t.name, ": nothing written past the ", count, " elements sent");
      }
    }
  }
}

// Payloads around the sizes where a message stops and starts again carrying its payload inline
// (about 3.9 KiB and 4040 bytes) and around the receive buffer's 4 KiB: blocking, nonblocking and
// probed receives all get every byte and the right count, whichever form the sender chose.
void sizes_around_the_inline_limit(Checker& check, const rbc::RangeComm& comm) {
  const int last = comm.size() - 1;
  if (last == 0 || (comm.rank() != 0 && comm.rank() != last)) return;
  const int counts[] = {3900, 3943, 3944, 3945, 3952, 3984, 4000, 4040, 4041, 4095, 4096, 4097, 4200};
  for (int mode = 0; mode < 3; ++mode) {
    for (int count : counts) {
      std::vector<unsigned char> out(static_cast<std::size_t>(count) + 1), in(out.size(), 0xee);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 13 + mode);
      if (comm.rank() == 0) {
        if (mode == 1) {
          rbc::isend(out.data(), count, MPI_BYTE, last, 11, comm).wait();
        } else {
          rbc::send(out.data(), count, MPI_BYTE, last, 11, comm);
        }
        continue;
      }
      rbc::Status status;
      if (mode == 2) {
        const rbc::Status probed = rbc::probe(0, 11, comm);
        check.equal(probed.count(MPI_BYTE), count, "probe counts a ", count, "-byte message");
      }
      if (mode == 1) {
        rbc::Request request = rbc::irecv(in.data(), count + 1, MPI_BYTE, 0, 11, comm);
        request.wait();
        status = request.status();
      } else {
        status = rbc::recv(in.data(), count + 1, MPI_BYTE, 0, 11, comm);
      }
      check.equal(status.count(MPI_BYTE), count, "mode ", mode, ": a ", count, "-byte message counted");
      check.check(std::memcmp(in.data(), out.data(), static_cast<std::size_t>(count)) == 0, "mode ", mode, ": ",
                  count, " bytes arrived byte for byte");
      check.equal(static_cast<int>(in[static_cast<std::size_t>(count)]), 0xee, "mode ", mode,
                  ": nothing written past ", count, " bytes");
    }
  }
}

// rbc::wire_bytes names the size of the MPI message a send of a small payload makes (what
// bench/p2p.cpp times MPI with): probed on the base communicator before RBC receives it.
void wire_bytes_is_what_travels(Checker& check, const rbc::RangeComm& comm, MPI_Comm base) {
  const int last = comm.size() - 1;
  if (last == 0 || (comm.rank() != 0 && comm.rank() != last)) return;
  for (int bytes : {0, 1, 8, 64, 1000, 3900}) {
    std::vector<unsigned char> out(static_cast<std::size_t>(bytes) + 1, 7), in(out.size());
    if (comm.rank() == 0) {
      rbc::send(out.data(), bytes, MPI_BYTE, last, 3, comm);
      continue;
    }
    MPI_Status status;
    MPI_Probe(comm.mpi_rank(0), MPI_ANY_TAG, base, &status);
    int size = -1;
    MPI_Get_count(&status, MPI_BYTE, &size);
    check.equal(size, rbc::wire_bytes(bytes, comm), "the MPI message of a ", bytes, "-byte payload");
    check.check(size > bytes, "a ", bytes, "-byte payload travels with its envelope");
    rbc::recv(in.data(), bytes, MPI_BYTE, 0, 3, comm);
  }
  check.equal(rbc::wire_bytes(1 << 20, comm), 1 << 20, "a large payload travels as it is");
  bool refused = false;
  try {
    rbc::wire_bytes(-1, comm);
  } catch (const rbc::Error&) {
    refused = true;
  }
  check.check(refused, "wire_bytes refuses a negative size");
}

// The first handle on an MPI communicator, over all its ranks, sends its user messages bare:
// MPI's message is the payload alone, under a tag no other communicator's message carries. A
// second handle and a split over all ranks carry envelopes. Equal user tags on all three, sent
// in one order and received in others, blocking and through requests, with wildcard sources
// and probes: each receive gets its own communicator's message.
void bare_messages(Checker& check) {
  MPI_Comm base;
  MPI_Comm_dup(MPI_COMM_WORLD, &base);
  MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
  {
    const rbc::RangeComm first = rbc::RangeComm::from_mpi(base);
    const rbc::RangeComm second = rbc::RangeComm::from_mpi(base);
    const rbc::RangeComm whole = first.split(0, first.size() - 1);
    check.equal(rbc::wire_bytes(8, first), 8, "the first handle's 8-byte message travels bare");
    check.equal(rbc::wire_bytes(8, second), rbc::wire_bytes(8, whole), "the others' messages carry envelopes");
    check.check(rbc::wire_bytes(8, second) > 8, "a second handle's 8-byte message carries an envelope");
    const int p = first.size(), me = first.rank();
    const int to = (me + 1) % p, from = (me + p - 1) % p;
    const rbc::RangeComm* comms[3] = {&first, &second, &whole};
    int out[3], in[3];
    for (int k = 0; k < 3; ++k) out[k] = 100 * (k + 1) + me;

    // Blocking receives in the opposite order of the sends, the first handle's by wildcard.
    rbc::Request sent[3];
    for (int k = 2; k >= 0; --k) sent[k] = rbc::isend(&out[k], 1, MPI_INT, to, 9, *comms[k]);
    const rbc::Status probed = rbc::probe(MPI_ANY_SOURCE, 9, first);
    check.equal(probed.source, from, "the probe on the first handle names its sender");
    check.equal(probed.tag, 9, "the probe on the first handle gives the user's tag");
    check.equal(probed.count(MPI_INT), 1, "the probe on the first handle counts one int");
    for (int k = 0; k < 3; ++k) {
      const rbc::Status got = rbc::recv(&in[k], 1, MPI_INT, k == 1 ? from : MPI_ANY_SOURCE, 9, *comms[k]);
      check.equal(in[k], 100 * (k + 1) + from, "blocking: communicator ", k, " gets its own message");
      check.equal(got.source, from, "blocking: communicator ", k, " names the sender");
      check.equal(got.tag, 9, "blocking: communicator ", k, " gives the user's tag");
      check.equal(got.count(MPI_INT), 1, "blocking: communicator ", k, " counts one int");
    }
    for (auto& r : sent) r.wait();

    // Receives posted before any send, the first handle's first and by wildcard.
    rbc::Request received[3];
    for (int k = 0; k < 3; ++k) {
      in[k] = -1;
      received[k] = rbc::irecv(&in[k], 1, MPI_INT, k == 0 ? MPI_ANY_SOURCE : from, 9, *comms[k]);
    }
    rbc::barrier(whole);
    for (int k = 2; k >= 0; --k) sent[k] = rbc::isend(&out[k], 1, MPI_INT, to, 9, *comms[k]);
    for (int k = 2; k >= 0; --k) {
      received[k].wait();
      check.equal(in[k], 100 * (k + 1) + from, "requests: communicator ", k, " gets its own message");
      check.equal(received[k].status().source, from, "requests: communicator ", k, " names the sender");
      check.equal(received[k].status().tag, 9, "requests: communicator ", k, " gives the user's tag");
    }
    for (auto& r : sent) r.wait();

    // On the wire: the bare message is the payload, under a tag of its own.
    rbc::barrier(whole);
    if (p >= 2 && (me == 0 || me == 1)) {
      int tags[3] = {-1, -1, -1}, sizes[3] = {-1, -1, -1};
      if (me == 0) {
        for (int k = 0; k < 3; ++k) rbc::send(&out[k], 1, MPI_INT, 1, 9, *comms[k]);
      } else {
        for (int k = 0; k < 3; ++k) {
          MPI_Status status;
          MPI_Probe(0, MPI_ANY_TAG, base, &status);
          tags[k] = status.MPI_TAG;
          MPI_Get_count(&status, MPI_BYTE, &sizes[k]);
          rbc::recv(&in[k], 1, MPI_INT, 0, 9, *comms[k]);
          check.equal(in[k], 100 * (k + 1), "on the wire: communicator ", k, " gets its own message");
        }
        check.equal(sizes[0], static_cast<int>(sizeof(int)), "the first handle's message is its payload alone");
        check.equal(sizes[1], rbc::wire_bytes(static_cast<int>(sizeof(int)), second), "the second handle's message has its envelope");
        check.check(tags[0] != tags[1] && tags[0] != tags[2], "the bare message's tag is its own");
      }
    }
    rbc::barrier(whole);

    // A bare message larger than the receive: MPI finds it, since no envelope told RBC its size,
    // and RBC reports it as it reports its own (MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN). The
    // message is taken: the next one arrives as sent. A request's error goes through the handler
    // MPI applies to MPI_Waitany: the communicator's under Open MPI and SMPI, MPI_COMM_WORLD's
    // under MPICH 4.0, so both return errors here.
    MPI_Errhandler world_handler;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (p >= 2 && me < 2) {
      const int peer = 1 - me;
      int big[4] = {1, 2, 3, 4}, small[2] = {0, 0};
      for (bool requests : {false, true}) {
        rbc::Request outgoing = rbc::isend(big, 4, MPI_INT, peer, 11, first);
        int error_class = MPI_SUCCESS;
        try {
          if (requests) {
            rbc::irecv(small, 2, MPI_INT, peer, 11, first).wait();
          } else {
            rbc::recv(small, 2, MPI_INT, peer, 11, first);
          }
        } catch (const rbc::Error& e) {
          error_class = e.error_class();
        }
        check.equal(error_class, MPI_ERR_TRUNCATE, requests ? "irecv" : "recv", " of 2 ints, 4 sent: truncated");
        outgoing.wait();
        int next = 50 + me, got = -1;
        rbc::sendrecv(&next, 1, MPI_INT, peer, 11, &got, 1, MPI_INT, peer, 11, first);
        check.equal(got, 50 + peer, requests ? "irecv" : "recv", ": the next message after the truncated one");
      }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler);
    MPI_Errhandler_free(&world_handler);
    rbc::barrier(whole);
  }
  MPI_Comm_free(&base);
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "p2p_test", [](Checker& check) {
    {
      // First: the test's first communicator value that RBC sees (a handle on a value RBC has
      // seen before, which MPI may reuse for a new communicator, carries envelopes).
      Context bare(check, "bare messages");
      bare_messages(check);
    }
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    auto layouts = rbc_test::standard_layouts(p, p > 8);
    if (p >= 512) layouts.resize(std::min<std::size_t>(layouts.size(), 2));
    for (std::size_t li = 0; li < layouts.size(); ++li) {
      LayoutComms lc(layouts[li], check);
      if (!lc.member()) continue;
      Context context(check, "layout ", lc.name(), " (size ", lc.size(), ", member ", lc.rank(),
                      ")");
      try {
        P2p(check, lc, static_cast<int>(li)).run();
      } catch (const std::exception& e) {
        check.abort(std::string("unexpected exception: ") + e.what());
      }
    }
    Context context(check, "predefined datatypes");
    predefined_types(check, rbc::RangeComm::from_mpi(MPI_COMM_WORLD));
    Context around(check, "sizes around the inline limit");
    sizes_around_the_inline_limit(check, rbc::RangeComm::from_mpi(MPI_COMM_WORLD));
    Context wire(check, "wire bytes");
    wire_bytes_is_what_travels(check, rbc::RangeComm::from_mpi(MPI_COMM_WORLD), MPI_COMM_WORLD);
  });
}
