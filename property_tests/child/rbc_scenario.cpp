// Scenario program for the RBC properties: builds the scenario's communicators, runs its
// collectives and point-to-point messages round by round (nonblocking ones concurrently,
// completed in a per-rank random order), makes its bad calls, then checks everything against
// MPI's own collectives on MPI communicators with the same members (MPI_Comm_split of
// MPI_COMM_WORLD). Rank 0 prints "SCENARIO OK digest=<hex>" only if every rank passed; the
// digest covers every checked result (not timing-dependent arrival orders), so two runs of one
// scenario on different platforms or backends must print the same digest.
//
//   rbc_scenario np=4 seed=1 c=w c=s1.3.1 o=allreduce.1.0.2.i.sum.n.0 m=1.0.2.5.3.a.0 e=taglarge.0
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "rbc/rbc.hpp"
#include "scenario/scenario.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;
using Bytes = std::vector<unsigned char>;

constexpr unsigned char kUnwritten = 0xA5;
constexpr int kPoison = 0x5A5A5A5A;

std::uint64_t mix(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0, std::uint64_t d = 0) {
  std::uint64_t x = 0x243F6A8885A308D3ull;
  for (std::uint64_t v : {a, b, c, d}) {
    x ^= v + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
  }
  return x;
}

// User ops. They read the element layout from the datatype, since no global may hold handles
// (under SMPI all ranks share globals).
void gapped_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int e = 0; e < *len; ++e) {
    b[4 * e] += a[4 * e];
    b[4 * e + 2] += a[4 * e + 2];
  }
}

// 2x2 matrix product modulo 2^32, inout = in * inout: associative, not commutative.
void matrix_product(void* in, void* inout, int* len, MPI_Datatype*) {
  const unsigned* a = static_cast<const unsigned*>(in);
  unsigned* b = static_cast<unsigned*>(inout);
  for (int m = 0; m < *len; ++m, a += 4, b += 4) {
    const unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                           a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof c);
  }
}

struct TypeInfo {
  MPI_Datatype type;
  int extent;
  std::vector<bool> data;  // per byte of one element: data (true) or gap
};

// The datatypes and ops of one rank, created after MPI_Init and freed before MPI_Finalize.
class Types {
 public:
  Types() {
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &gapped_);
    MPI_Type_commit(&gapped_);
    MPI_Type_free(&vec);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &matrix_);
    MPI_Type_commit(&matrix_);
    MPI_Op_create(&gapped_sum, 1, &gapped_op_);
    MPI_Op_create(&matrix_product, 0, &matrix_op_);
  }
  ~Types() {
    MPI_Type_free(&gapped_);
    MPI_Type_free(&matrix_);
    MPI_Op_free(&gapped_op_);
    MPI_Op_free(&matrix_op_);
  }
  Types(const Types&) = delete;
  Types& operator=(const Types&) = delete;

  TypeInfo info(props::Type t) const {
    switch (t) {
      case props::Type::kInt: return {MPI_INT, 4, std::vector<bool>(4, true)};
      case props::Type::kLong: return {MPI_LONG_LONG, 8, std::vector<bool>(8, true)};
      case props::Type::kDouble: return {MPI_DOUBLE, 8, std::vector<bool>(8, true)};
      case props::Type::kGapped: {
        std::vector<bool> data(16, false);
        for (int i = 0; i < 4; ++i) data[i] = data[8 + i] = true;
        return {gapped_, 16, data};
      }
      case props::Type::kMatrix: return {matrix_, 16, std::vector<bool>(16, true)};
    }
    return {MPI_DATATYPE_NULL, 0, {}};
  }

  MPI_Op op(props::Op o, props::Type t) const {
    switch (o) {
      case props::Op::kSum: return MPI_SUM;
      case props::Op::kMax: return MPI_MAX;
      case props::Op::kMin: return MPI_MIN;
      case props::Op::kBxor: return MPI_BXOR;
      case props::Op::kUser: return t == props::Type::kGapped ? gapped_op_ : matrix_op_;
    }
    return MPI_OP_NULL;
  }

 private:
  MPI_Datatype gapped_, matrix_;
  MPI_Op gapped_op_, matrix_op_;
};

// Fills one element from hash h. Gap bytes get kPoison: they must never arrive anywhere.
void fill_element(props::Type t, unsigned char* e, std::uint64_t h) {
  switch (t) {
    case props::Type::kInt: {
      const int v = static_cast<int>(h % 2001) - 1000;
      std::memcpy(e, &v, 4);
      break;
    }
    case props::Type::kLong: {
      const long long v = static_cast<long long>(h >> 24) - (1ll << 39);
      std::memcpy(e, &v, 8);
      break;
    }
    case props::Type::kDouble: {
      const double v = static_cast<double>(static_cast<int>(h % 2001) - 1000);
      std::memcpy(e, &v, 8);
      break;
    }
    case props::Type::kGapped: {
      const int v[4] = {static_cast<int>(h % 1000), kPoison, static_cast<int>((h >> 20) % 1000), kPoison};
      std::memcpy(e, v, 16);
      break;
    }
    case props::Type::kMatrix: {
      const unsigned v[4] = {static_cast<unsigned>(h), static_cast<unsigned>(h >> 16),
                             static_cast<unsigned>(h >> 32), static_cast<unsigned>(h >> 48)};
      std::memcpy(e, v, 16);
      break;
    }
  }
}

// One communicator of the scenario as seen by this rank.
struct Comm {
  std::vector<int> members;  // world ranks in member order
  int rank = -1;             // member rank, -1 if not a member
  rbc::RangeComm rbc;
  MPI_Comm reference = MPI_COMM_NULL;
};

std::string describe_step(const props::Step& s) {
  const std::string a = std::to_string(s.a), b = std::to_string(s.b);
  switch (s.kind) {
    case props::Step::kSplit: return "split(" + a + "," + b + "," + std::to_string(s.stride) + ")";
    case props::Step::kJanusLeft: return "janus_split(" + a + "," + b + ").first";
    case props::Step::kJanusRight: return "janus_split(" + a + "," + b + ").second";
  }
  return "?";
}

// Buffers of one collective on one rank. Owned through unique_ptr: nonblocking operations keep
// pointers into them.
struct CollState {
  Bytes send, recv, total;
  std::vector<int> counts, displs;
  Bytes ref_recv, ref_total;
  bool started = false;
};

struct MessageResult {
  int index;   // scenario message index found in the payload (or -1)
  int source;  // status.source (member rank)
  int count;   // ints received
  bool payload_ok;
  bool in_group;  // the message was sent on the receive's communicator with its tag
};

class Runner {
 public:
  Runner(const props::Scenario& s, Checker& check, const Types& types)
      : s_(s), check_(check), types_(types) {
    MPI_Comm_rank(MPI_COMM_WORLD, &me_);
  }

  void run() {
    build_comms();
    int rounds = 0;
    for (const auto& o : s_.colls) rounds = std::max(rounds, o.round + 1);
    for (const auto& m : s_.messages) rounds = std::max(rounds, m.round + 1);
    colls_.resize(s_.colls.size());
    received_.resize(s_.messages.size(), 0);
    for (int r = 0; r < rounds; ++r) {
      Context c(check_, "round ", r);
      run_round(r);
      // Rounds are separated so that a wildcard receive of one round can only meet messages of
      // its own round (MPI would be free to match a later round's message otherwise).
      MPI_Barrier(MPI_COMM_WORLD);
    }
    check_messages();
    run_bad_calls();
    run_references();
    check_collectives();
    check_nothing_left();
    for (auto& c : comms_) {
      if (c.reference != MPI_COMM_NULL) MPI_Comm_free(&c.reference);
    }
  }

  std::uint64_t digest() const { return digest_; }

 private:
  void build_comms() {
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    // Every rank makes the second handle (from_mpi is collective), whether it uses it or not.
    const rbc::RangeComm second = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    for (std::size_t i = 0; i < s_.comms.size(); ++i) {
      const props::CommSpec& spec = s_.comms[i];
      Comm c;
      c.members = *props::members_of(spec, s_.np);
      const auto it = std::find(c.members.begin(), c.members.end(), me_);
      c.rank = it == c.members.end() ? -1 : static_cast<int>(it - c.members.begin());
      rbc::RangeComm cur = spec.handle == 1 ? second : world;
      std::string chain = spec.handle == 1 ? "second handle" : "world";
      for (const props::Step& step : spec.steps) {
        if (!cur.is_member()) break;
        chain += " > " + describe_step(step);
        switch (step.kind) {
          case props::Step::kSplit: cur = cur.split(step.a, step.b, step.stride); break;
          case props::Step::kJanusLeft: cur = cur.janus_split(step.a, step.b).first; break;
          case props::Step::kJanusRight: cur = cur.janus_split(step.a, step.b).second; break;
        }
      }
      c.rbc = cur;
      Context ctx(check_, "communicator ", i, " (", chain, ")");
      check_.equal(c.rbc.is_member(), c.rank >= 0, "is_member()");
      if (c.rbc.is_member() && c.rank >= 0) {
        check_.equal(c.rbc.rank(), c.rank, "rank()");
        check_.equal(c.rbc.size(), static_cast<int>(c.members.size()), "size()");
      }
      MPI_Comm_split(MPI_COMM_WORLD, c.rank >= 0 ? 0 : MPI_UNDEFINED, c.rank, &c.reference);
      comms_.push_back(std::move(c));
    }
  }

  bool member(int comm) const { return comms_[comm].rank >= 0 && comms_[comm].rbc.is_member(); }

  int vcount(std::size_t op, int rank) const {
    const int base = s_.colls[op].count;
    return std::max(0, base + static_cast<int>(mix(s_.seed, op, rank, 77) % 3) - 1);
  }

  // Allocates and fills the buffers of collective `k` (for RBC and for the reference).
  CollState& prepare(std::size_t k) {
    const props::CollOp& o = s_.colls[k];
    const Comm& c = comms_[o.comm];
    const TypeInfo t = types_.info(o.type);
    auto state = std::make_unique<CollState>();
    const int p = static_cast<int>(c.members.size());
    const int n = o.count;
    auto make = [&](int elements) { return Bytes(static_cast<std::size_t>(elements) * t.extent, kUnwritten); };
    auto fill = [&](Bytes& b, int elements, int salt) {
      for (int e = 0; e < elements; ++e) fill_element(o.type, b.data() + e * t.extent, mix(s_.seed, k, c.rank * 7919 + salt, e));
    };
    switch (o.kind) {
      case props::Coll::kBcast:
        state->send = make(n);
        if (c.rank == o.root) fill(state->send, n, 0);
        break;
      case props::Coll::kReduce:
      case props::Coll::kAllreduce:
      case props::Coll::kScan:
      case props::Coll::kExscan:
      case props::Coll::kScanAndBcast:
        state->send = make(n);
        fill(state->send, n, 0);
        state->recv = make(n);
        state->total = make(n);
        break;
      case props::Coll::kGather:
      case props::Coll::kAllgather:
        state->send = make(n);
        fill(state->send, n, 0);
        state->recv = make(n * p);
        break;
      case props::Coll::kGatherv:
      case props::Coll::kAllgatherv: {
        int offset = 0;
        for (int r = 0; r < p; ++r) {
          state->counts.push_back(vcount(k, r));
          state->displs.push_back(offset + (r % 2));  // holes between some blocks
          offset = state->displs.back() + state->counts.back();
        }
        state->send = make(vcount(k, c.rank));
        fill(state->send, vcount(k, c.rank), 0);
        state->recv = make(offset);
        break;
      }
      case props::Coll::kGatherm: {
        int total = 0;
        for (int r = 0; r < p; ++r) {
          state->counts.push_back(vcount(k, r));
          state->displs.push_back(total);
          total += state->counts.back();
        }
        std::vector<int> keys(vcount(k, c.rank));
        for (std::size_t e = 0; e < keys.size(); ++e) keys[e] = static_cast<int>(mix(s_.seed, k, c.rank, e) % 50);
        std::sort(keys.begin(), keys.end());
        state->send.resize(keys.size() * 4);
        if (!keys.empty()) std::memcpy(state->send.data(), keys.data(), state->send.size());
        state->recv = make(total);
        break;
      }
      case props::Coll::kBarrier:
        break;
    }
    state->ref_recv = o.kind == props::Coll::kBcast ? state->send : state->recv;
    state->ref_total = state->total;
    colls_[k] = std::move(state);
    return *colls_[k];
  }

  // Starts (nonblocking) or runs (blocking) collective k through RBC.
  rbc::Request start_collective(std::size_t k) {
    const props::CollOp& o = s_.colls[k];
    const Comm& c = comms_[o.comm];
    CollState& b = prepare(k);
    const TypeInfo t = types_.info(o.type);
    const MPI_Op op = types_.op(o.op, o.type);
    const rbc::RangeComm& comm = c.rbc;
    const bool nb = o.nonblocking;
    const int n = o.count;
    void* send = b.send.data();
    switch (o.kind) {
      case props::Coll::kBcast:
        if (nb) return rbc::ibcast(send, n, t.type, o.root, comm);
        rbc::bcast(send, n, t.type, o.root, comm);
        break;
      case props::Coll::kReduce:
        if (nb) return rbc::ireduce(send, b.recv.data(), n, t.type, op, o.root, comm);
        rbc::reduce(send, b.recv.data(), n, t.type, op, o.root, comm);
        break;
      case props::Coll::kAllreduce:
        if (nb) return rbc::iallreduce(send, b.recv.data(), n, t.type, op, comm);
        rbc::allreduce(send, b.recv.data(), n, t.type, op, comm);
        break;
      case props::Coll::kScan:
        if (nb) return rbc::iscan(send, b.recv.data(), n, t.type, op, comm);
        rbc::scan(send, b.recv.data(), n, t.type, op, comm);
        break;
      case props::Coll::kExscan:
        if (nb) return rbc::iexscan(send, b.recv.data(), n, t.type, op, comm);
        rbc::exscan(send, b.recv.data(), n, t.type, op, comm);
        break;
      case props::Coll::kScanAndBcast:
        if (nb) return rbc::iscan_and_bcast(send, b.recv.data(), b.total.data(), n, t.type, op, comm);
        rbc::scan_and_bcast(send, b.recv.data(), b.total.data(), n, t.type, op, comm);
        break;
      case props::Coll::kGather:
        if (nb) return rbc::igather(send, n, t.type, b.recv.data(), n, t.type, o.root, comm);
        rbc::gather(send, n, t.type, b.recv.data(), n, t.type, o.root, comm);
        break;
      case props::Coll::kGatherv: {
        const int mine = vcount(k, c.rank);
        if (nb) return rbc::igatherv(send, mine, t.type, b.recv.data(), b.counts.data(), b.displs.data(), t.type, o.root, comm);
        rbc::gatherv(send, mine, t.type, b.recv.data(), b.counts.data(), b.displs.data(), t.type, o.root, comm);
        break;
      }
      case props::Coll::kAllgather:
        if (nb) return rbc::iallgather(send, n, t.type, b.recv.data(), n, t.type, comm);
        rbc::allgather(send, n, t.type, b.recv.data(), n, t.type, comm);
        break;
      case props::Coll::kAllgatherv: {
        const int mine = vcount(k, c.rank);
        if (nb) return rbc::iallgatherv(send, mine, t.type, b.recv.data(), b.counts.data(), b.displs.data(), t.type, comm);
        rbc::allgatherv(send, mine, t.type, b.recv.data(), b.counts.data(), b.displs.data(), t.type, comm);
        break;
      }
      case props::Coll::kBarrier:
        if (nb) return rbc::ibarrier(comm);
        rbc::barrier(comm);
        break;
      case props::Coll::kGatherm: {
        const int mine = vcount(k, c.rank);
        const int total = static_cast<int>(b.recv.size() / 4);
        if (nb) return rbc::igatherm(send, mine, b.recv.data(), total, MPI_INT, o.root, rbc::merger_for<int>(), comm);
        rbc::gatherm(send, mine, b.recv.data(), total, MPI_INT, o.root, rbc::merger_for<int>(), comm);
        break;
      }
    }
    return rbc::Request();
  }

  std::vector<int> payload(std::size_t index) const {
    const props::Message& m = s_.messages[index];
    std::vector<int> p(m.count);
    p[0] = static_cast<int>(index);
    for (int i = 1; i < m.count; ++i) p[i] = static_cast<int>(mix(s_.seed, index, i, 5) & 0x7fffffff);
    return p;
  }

  struct Group {
    std::vector<std::size_t> messages;
    bool any = false;
    bool blocking = false;
  };

  struct PendingReceive {
    std::size_t group;
    std::vector<int> buffer;
    int expected_source;  // member rank, or MPI_ANY_SOURCE
  };

  void run_round(int round) {
    // Sends first, all nonblocking, in scenario order.
    std::vector<std::vector<int>> send_buffers;
    std::vector<rbc::Request> sends;
    for (std::size_t i = 0; i < s_.messages.size(); ++i) {
      const props::Message& m = s_.messages[i];
      if (m.round != round || !member(m.comm) || comms_[m.comm].rank != m.src) continue;
      send_buffers.push_back(payload(i));
    }
    std::size_t next_buffer = 0;
    for (std::size_t i = 0; i < s_.messages.size(); ++i) {
      const props::Message& m = s_.messages[i];
      if (m.round != round || !member(m.comm) || comms_[m.comm].rank != m.src) continue;
      std::vector<int>& buf = send_buffers[next_buffer++];
      sends.push_back(rbc::isend(buf.data(), m.count, MPI_INT, m.dst, m.tag, comms_[m.comm].rbc));
    }

    // Nonblocking collectives, in scenario order (all members start them in the same order).
    std::vector<rbc::Request> pending;
    std::vector<std::size_t> blocking_colls;
    for (std::size_t k = 0; k < s_.colls.size(); ++k) {
      const props::CollOp& o = s_.colls[k];
      if (o.round != round || !member(o.comm)) continue;
      if (!o.nonblocking) {
        blocking_colls.push_back(k);
        continue;
      }
      Context c(check_, "starting ", name(o.kind), " #", k);
      pending.push_back(start_collective(k));
    }

    // Receive groups addressed to this rank.
    std::map<std::tuple<int, int>, Group> groups;  // (comm, tag)
    for (std::size_t i = 0; i < s_.messages.size(); ++i) {
      const props::Message& m = s_.messages[i];
      if (m.round != round || !member(m.comm) || comms_[m.comm].rank != m.dst) continue;
      Group& g = groups[{m.comm, m.tag}];
      g.messages.push_back(i);
      g.any = g.any || m.any_source;
      g.blocking = g.blocking || m.blocking;
    }
    std::vector<Group> group_list;
    for (auto& entry : groups) group_list.push_back(entry.second);

    std::vector<PendingReceive> receives;
    std::vector<rbc::Request> receive_requests;
    for (std::size_t g = 0; g < group_list.size(); ++g) {
      const Group& group = group_list[g];
      if (group.blocking) continue;
      for (std::size_t i : group.messages) {
        const props::Message& m = s_.messages[i];
        PendingReceive r{g, std::vector<int>(max_count(group), kPoison), group.any ? MPI_ANY_SOURCE : m.src};
        receives.push_back(std::move(r));
      }
    }
    for (std::size_t j = 0; j < receives.size(); ++j) {
      PendingReceive& r = receives[j];
      const props::Message& first = s_.messages[group_list[r.group].messages[0]];
      receive_requests.push_back(rbc::irecv(r.buffer.data(), static_cast<int>(r.buffer.size()), MPI_INT,
                                            r.expected_source, first.tag, comms_[first.comm].rbc));
    }

    for (std::size_t k : blocking_colls) {
      Context c(check_, name(s_.colls[k].kind), " #", k, " (blocking)");
      start_collective(k);
    }

    // Blocking receives, group by group.
    std::vector<MessageResult> results;
    for (const Group& group : group_list) {
      if (!group.blocking) continue;
      for (std::size_t i : group.messages) {
        const props::Message& m = s_.messages[i];
        std::vector<int> buffer(max_count(group), kPoison);
        const rbc::Status st = rbc::recv(buffer.data(), static_cast<int>(buffer.size()), MPI_INT,
                                         group.any ? MPI_ANY_SOURCE : m.src, m.tag, comms_[m.comm].rbc);
        results.push_back(inspect(buffer, st, group, group.any ? -1 : static_cast<int>(i)));
      }
    }

    complete(pending, round, 0);
    complete(receive_requests, round, 1);
    for (std::size_t j = 0; j < receives.size(); ++j) {
      const Group& group = group_list[receives[j].group];
      const int expected = group.any ? -1 : static_cast<int>(group.messages[position_in_group(receives, j)]);
      results.push_back(inspect(receives[j].buffer, receive_requests[j].status(), group, expected));
    }
    complete(sends, round, 2);
    record(results);
  }

  int max_count(const Group& g) const {
    int n = 1;
    for (std::size_t i : g.messages) n = std::max(n, s_.messages[i].count);
    return n;
  }

  // Index within its group of receive j (receives of a group are consecutive).
  static std::size_t position_in_group(const std::vector<PendingReceive>& receives, std::size_t j) {
    std::size_t pos = 0;
    while (pos < j && receives[j - pos - 1].group == receives[j].group) ++pos;
    return pos;
  }

  MessageResult inspect(const std::vector<int>& buffer, const rbc::Status& st, const Group& group,
                        int expected_index) {
    MessageResult r{-1, st.source, st.count(MPI_INT), false, false};
    if (r.count >= 1) r.index = buffer[0];
    r.in_group = std::find(group.messages.begin(), group.messages.end(), static_cast<std::size_t>(r.index)) !=
                 group.messages.end();
    if (expected_index >= 0 && r.index != expected_index) {
      check_.fail("receive from a named source got message #", r.index, ", expected #", expected_index,
                  " (messages from one source must arrive in order)");
    }
    if (r.index >= 0 && r.index < static_cast<int>(s_.messages.size())) {
      const auto want = payload(r.index);
      r.payload_ok = r.count == static_cast<int>(want.size()) &&
                     std::equal(want.begin(), want.end(), buffer.begin());
    }
    return r;
  }

  // Checks the messages received in one round.
  void record(const std::vector<MessageResult>& results) {
    for (const MessageResult& r : results) {
      if (!r.in_group) {
        check_.fail("a receive got a message that was not sent to it on its communicator with its tag (payload index ",
                    r.index, ", status.source ", r.source, ", ", r.count, " ints)");
        continue;
      }
      const props::Message& m = s_.messages[r.index];
      Context c(check_, "message #", r.index, " on communicator ", m.comm, " tag ", m.tag);
      check_.check(r.payload_ok, "payload or length differs from what was sent (", r.count, " ints)");
      check_.equal(r.source, m.src, "status.source");
      ++received_[r.index];
    }
  }

  // Completes a set of requests by a strategy drawn per (rank, round, set): waits in a random
  // order, test sweeps, wait_any, or wait_all.
  void complete(std::vector<rbc::Request>& requests, int round, int set) {
    const std::uint64_t h = mix(s_.seed, me_, round, set + 1000);
    switch (h % 4) {
      case 0: {
        std::vector<std::size_t> order(requests.size());
        std::iota(order.begin(), order.end(), 0);
        for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[mix(h, i) % i]);
        for (std::size_t i : order) requests[i].wait();
        break;
      }
      case 1: {
        // A bounded number of test sweeps, then wait: busy polling is slow under a simulator.
        for (int sweep = 0; sweep < 50 && !rbc::test_all(requests); ++sweep) {
        }
        rbc::wait_all(requests);
        break;
      }
      case 2:
        while (rbc::wait_any(requests) >= 0) {
        }
        break;
      default:
        rbc::wait_all(requests);
        break;
    }
    for (auto& r : requests) check_.check(r.done(), "request not done after completion");
  }

  void check_messages() {
    for (std::size_t i = 0; i < s_.messages.size(); ++i) {
      const props::Message& m = s_.messages[i];
      if (!member(m.comm) || comms_[m.comm].rank != m.dst) continue;
      digest_ = mix(digest_, 0x9999, i, received_[i]);
      check_.equal(received_[i], 1, "message #", i, " (communicator ", m.comm, ", ", m.src, " -> ", m.dst,
                   ", tag ", m.tag, ") received this many times");
    }
  }

  void run_bad_calls() {
    for (std::size_t i = 0; i < s_.bad.size(); ++i) {
      const props::BadCall& b = s_.bad[i];
      Comm& c = comms_[b.comm];
      Context ctx(check_, "bad call #", i, " ", name(b.kind), " on communicator ", b.comm);
      if (b.kind == props::Bad::kNonMember) {
        if (!member(b.comm)) {
          check_.throws<rbc::Error>([&] { rbc::barrier(c.rbc); }, "is not a member", "barrier by a non-member");
        }
      } else if (member(b.comm)) {
        bad_call(b.kind, c);
      }
      // The communicator still works: nothing half-started is left behind.
      if (member(b.comm)) {
        int one = 1, total = 0;
        rbc::allreduce(&one, &total, 1, MPI_INT, MPI_SUM, c.rbc);
        check_.equal(total, static_cast<int>(c.members.size()), "allreduce after the bad call");
      }
    }
  }

  void bad_call(props::Bad kind, Comm& c) {
    const rbc::RangeComm& comm = c.rbc;
    const int size = comm.size();
    int value = 0, out = 0;
    const std::string s = std::to_string(size);
    auto expect = [&](auto f, const std::string& needle) { check_.throws<rbc::Error>(f, needle, "expected rbc::Error"); };
    switch (kind) {
      case props::Bad::kSplitStride: expect([&] { comm.split(0, 0, 0); }, "stride must be >= 1"); break;
      case props::Bad::kSplitReversed: expect([&] { comm.split(1, 0); }, "last must be >= first"); break;
      case props::Bad::kSplitTooLarge: expect([&] { comm.split(0, size); }, "does not fit a communicator of size " + s); break;
      case props::Bad::kJanusGap:
        expect([&] { comm.janus_split(0, 2); }, size >= 3 ? "must cover every rank" : "both bounds must be ranks");
        break;
      case props::Bad::kJanusBound: expect([&] { comm.janus_split(size, 0); }, "both bounds must be ranks"); break;
      case props::Bad::kRootLarge:
        expect([&] { rbc::bcast(&value, 1, MPI_INT, size, comm); }, "root " + s + " is outside the communicator of size " + s);
        break;
      case props::Bad::kRootNegative:
        expect([&] { rbc::reduce(&value, &out, 1, MPI_INT, MPI_SUM, -1, comm); }, "root -1 is outside");
        break;
      case props::Bad::kCountNegative:
        expect([&] { rbc::allreduce(&value, &out, -1, MPI_INT, MPI_SUM, comm); }, "negative count -1");
        break;
      case props::Bad::kTagLarge:
        expect([&] { rbc::send(&value, 1, MPI_INT, 0, rbc::max_user_tag + 1, comm); },
               "tag " + std::to_string(rbc::max_user_tag + 1) + " is outside 0.." + std::to_string(rbc::max_user_tag));
        break;
      case props::Bad::kTagNegative:
        expect([&] { rbc::irecv(&value, 1, MPI_INT, 0, -2, comm); }, "tag -2 is outside");
        break;
      case props::Bad::kAnyTag:
        expect([&] { rbc::recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm); }, "MPI_ANY_TAG is not supported");
        break;
      case props::Bad::kDestLarge:
        expect([&] { rbc::send(&value, 1, MPI_INT, size, 0, comm); }, "destination " + s + " is outside");
        break;
      case props::Bad::kNullType:
        expect([&] { rbc::bcast(&value, 1, MPI_DATATYPE_NULL, 0, comm); }, "datatype is MPI_DATATYPE_NULL");
        break;
      case props::Bad::kNullOp:
        expect([&] { rbc::allreduce(&value, &out, 1, MPI_INT, MPI_OP_NULL, comm); }, "op is MPI_OP_NULL");
        break;
      case props::Bad::kNonMember:
        break;
    }
  }

  // MPI_Scan / MPI_Exscan on Open MPI. Under SMPI 3.32 both are unusable as a reference: they
  // combine non-commutative ops in the wrong order (measured: rank i does not get
  // x_0 * ... * x_i), and MPI_Scan is linear (over 20 s of wall time at 128 ranks). There the
  // reference is MPI_Gather, the prefixes folded at rank 0 with MPI_Reduce_local in rank order,
  // and MPI_Scatter.
  void reference_scan(const Bytes& send, Bytes& out, int n, const TypeInfo& t, MPI_Op op, MPI_Comm ref,
                      bool exclusive) {
#ifndef JANUS_SMPI
    if (exclusive) {
      MPI_Exscan(send.data(), out.data(), n, t.type, op, ref);
    } else {
      MPI_Scan(send.data(), out.data(), n, t.type, op, ref);
    }
#else
    int rank = 0, size = 0;
    MPI_Comm_rank(ref, &rank);
    MPI_Comm_size(ref, &size);
    const std::size_t bytes = static_cast<std::size_t>(n) * t.extent;
    Bytes all(rank == 0 ? bytes * size : 0), prefixes(rank == 0 ? bytes * size : 0);
    MPI_Gather(send.data(), n, t.type, all.data(), n, t.type, 0, ref);
    if (rank == 0 && n > 0) {
      // prefixes[i] = x_0 op ... op x_i (exclusive: shifted by one; slot 0 unused).
      Bytes acc(all.begin(), all.begin() + bytes);
      for (int i = 0; i < size; ++i) {
        if (i > 0) {
          Bytes next(all.begin() + i * bytes, all.begin() + (i + 1) * bytes);
          MPI_Reduce_local(acc.data(), next.data(), n, t.type, op);
          acc = next;
        }
        const int slot = exclusive ? i + 1 : i;
        if (slot < size) std::copy(acc.begin(), acc.end(), prefixes.begin() + slot * bytes);
      }
    }
    Bytes mine(bytes, kUnwritten);
    MPI_Scatter(prefixes.data(), n, t.type, mine.data(), n, t.type, 0, ref);
    if (exclusive && rank == 0) return;
    for (std::size_t i = 0; i < bytes; ++i) {
      if (t.data[i % t.extent]) out[i] = mine[i];
    }
#endif
  }

  // MPI's collectives on the reference communicators, in scenario order.
  void run_references() {
    for (std::size_t k = 0; k < s_.colls.size(); ++k) {
      const props::CollOp& o = s_.colls[k];
      if (!member(o.comm) || !colls_[k]) continue;
      const Comm& c = comms_[o.comm];
      CollState& b = *colls_[k];
      const TypeInfo t = types_.info(o.type);
      const MPI_Op op = types_.op(o.op, o.type);
      const MPI_Comm ref = c.reference;
      const int n = o.count;
      switch (o.kind) {
        case props::Coll::kBcast: {
          Bytes buf(static_cast<std::size_t>(n) * t.extent, kUnwritten);
          if (c.rank == o.root) {
            for (int e = 0; e < n; ++e) fill_element(o.type, buf.data() + e * t.extent, mix(s_.seed, k, c.rank * 7919, e));
          }
          MPI_Bcast(buf.data(), n, t.type, o.root, ref);
          b.ref_recv = buf;
          break;
        }
        case props::Coll::kReduce: MPI_Reduce(b.send.data(), b.ref_recv.data(), n, t.type, op, o.root, ref); break;
        case props::Coll::kAllreduce:
          if (n > 0) MPI_Allreduce(b.send.data(), b.ref_recv.data(), n, t.type, op, ref);
          break;
        case props::Coll::kScan: reference_scan(b.send, b.ref_recv, n, t, op, ref, false); break;
        case props::Coll::kExscan: reference_scan(b.send, b.ref_recv, n, t, op, ref, true); break;
        case props::Coll::kScanAndBcast:
          reference_scan(b.send, b.ref_recv, n, t, op, ref, false);
          // SMPI 3.32's default allreduce divides by the count: nothing to reduce for 0 anyway.
          if (n > 0) MPI_Allreduce(b.send.data(), b.ref_total.data(), n, t.type, op, ref);
          break;
        case props::Coll::kGather: MPI_Gather(b.send.data(), n, t.type, b.ref_recv.data(), n, t.type, o.root, ref); break;
        case props::Coll::kGatherv:
          MPI_Gatherv(b.send.data(), vcount(k, c.rank), t.type, b.ref_recv.data(), b.counts.data(), b.displs.data(), t.type, o.root, ref);
          break;
#ifndef JANUS_SMPI
        case props::Coll::kAllgather: MPI_Allgather(b.send.data(), n, t.type, b.ref_recv.data(), n, t.type, ref); break;
        case props::Coll::kAllgatherv:
          MPI_Allgatherv(b.send.data(), vcount(k, c.rank), t.type, b.ref_recv.data(), b.counts.data(), b.displs.data(), t.type, ref);
          break;
#else
        // SMPI 3.32's default MPI_Allgather / MPI_Allgatherv do not finish within a minute at
        // 279 ranks (measured); gather to rank 0 and broadcast instead.
        case props::Coll::kAllgather:
          MPI_Gather(b.send.data(), n, t.type, b.ref_recv.data(), n, t.type, 0, ref);
          MPI_Bcast(b.ref_recv.data(), n * static_cast<int>(c.members.size()), t.type, 0, ref);
          break;
        case props::Coll::kAllgatherv: {
          MPI_Gatherv(b.send.data(), vcount(k, c.rank), t.type, b.ref_recv.data(), b.counts.data(), b.displs.data(), t.type, 0, ref);
          MPI_Bcast(b.ref_recv.data(), static_cast<int>(b.ref_recv.size()), MPI_BYTE, 0, ref);
          break;
        }
#endif
        case props::Coll::kBarrier: MPI_Barrier(ref); break;
        case props::Coll::kGatherm: {
          MPI_Gatherv(b.send.data(), vcount(k, c.rank), MPI_INT, b.ref_recv.data(), b.counts.data(), b.displs.data(), MPI_INT, o.root, ref);
          if (c.rank == o.root) {
            int* first = reinterpret_cast<int*>(b.ref_recv.data());
            std::sort(first, first + b.ref_recv.size() / 4);
          }
          break;
        }
      }
    }
  }

  // Data bytes must equal the reference; gap bytes of the element type must be untouched
  // (unless `own_input`: a broadcast root's buffer keeps its own gap bytes).
  void compare(const Bytes& got, const Bytes& want, const TypeInfo& t, const char* what, bool own_input = false) {
    if (got.size() != want.size()) {
      check_.fail(what, ": ", got.size(), " bytes, reference has ", want.size());
      return;
    }
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool data = t.data[i % t.extent];
      const bool ok = data ? got[i] == want[i] : own_input || got[i] == kUnwritten;
      if (!ok && bad++ == 0) first = i;
    }
    check_.check(bad == 0, what, ": ", bad, " of ", got.size(), " bytes differ from MPI's result, first at byte ", first,
                 " (element ", first / t.extent, ")");
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (t.data[i % t.extent]) digest_ = mix(digest_, got[i]);
    }
  }

  void check_collectives() {
    for (std::size_t k = 0; k < s_.colls.size(); ++k) {
      const props::CollOp& o = s_.colls[k];
      if (!member(o.comm) || !colls_[k]) continue;
      const Comm& c = comms_[o.comm];
      const CollState& b = *colls_[k];
      const TypeInfo t = o.kind == props::Coll::kGatherm ? types_.info(props::Type::kInt) : types_.info(o.type);
      Context ctx(check_, name(o.kind), " #", k, " on communicator ", o.comm, " (size ", c.members.size(), ", rank ",
                  c.rank, ", root ", o.root, ", count ", o.count, ", type ", name(o.type), ", op ", name(o.op),
                  o.nonblocking ? ", nonblocking" : ", blocking", ")");
      const bool root = c.rank == o.root;
      switch (o.kind) {
        case props::Coll::kBcast: compare(b.send, b.ref_recv, t, "broadcast buffer", root); break;
        case props::Coll::kReduce:
        case props::Coll::kGather:
        case props::Coll::kGatherv:
        case props::Coll::kGatherm:
          if (root) compare(b.recv, b.ref_recv, t, "root's receive buffer");
          break;
        case props::Coll::kExscan:
          if (c.rank == 0) {
            check_.check(std::all_of(b.recv.begin(), b.recv.end(), [](unsigned char x) { return x == kUnwritten; }),
                         "exscan wrote rank 0's receive buffer");
          } else {
            compare(b.recv, b.ref_recv, t, "receive buffer");
          }
          break;
        case props::Coll::kScanAndBcast:
          compare(b.recv, b.ref_recv, t, "prefix");
          compare(b.total, b.ref_total, t, "total");
          break;
        case props::Coll::kAllreduce:
        case props::Coll::kScan:
        case props::Coll::kAllgather:
        case props::Coll::kAllgatherv:
          compare(b.recv, b.ref_recv, t, "receive buffer");
          break;
        case props::Coll::kBarrier:
          check_.check(true, "barrier completed");
          break;
      }
    }
  }

  // After everything completed, no message may be left over anywhere (nothing extra was sent).
  void check_nothing_left() {
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 0;
    MPI_Status st{};
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    check_.check(!flag, "a message from world rank ", st.MPI_SOURCE, " with MPI tag ", st.MPI_TAG,
                 " was never received");
  }

  const props::Scenario& s_;
  Checker& check_;
  const Types& types_;
  int me_ = 0;
  std::vector<Comm> comms_;
  std::vector<std::unique_ptr<CollState>> colls_;
  std::vector<int> received_;
  std::uint64_t digest_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  janus::testing::fail_on_simulated_deadlock("rbc_scenario");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  props::Scenario scenario;
  try {
    scenario = props::from_tokens(std::vector<std::string>(argv + 1, argv + argc));
    if (scenario.np != size) {
      throw std::invalid_argument("the scenario is for np=" + std::to_string(scenario.np) + ", run on " +
                                  std::to_string(size) + " ranks");
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::printf("rbc_scenario: bad scenario: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }

  Checker check(MPI_COMM_WORLD, "rbc_scenario");
  std::uint64_t digest = 0;
  {
    Types types;
    Runner runner(scenario, check, types);
    try {
      runner.run();
    } catch (const std::exception& e) {
      check.abort(std::string("unexpected exception: ") + e.what());
    }
    digest = runner.digest();
  }
  const int code = check.finish();
  MPI_Barrier(MPI_COMM_WORLD);
  const double end_time = MPI_Wtime();
  std::vector<unsigned long long> digests(rank == 0 ? size : 0);
  unsigned long long mine = digest;
  MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, digests.data(), 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0 && code == 0) {
    std::uint64_t all = 0;
    for (unsigned long long d : digests) all = mix(all, d);
    // Simulated time under SMPI (deterministic with simulate-computation off); wall time under MPI.
    std::printf("SCENARIO OK digest=%016llx simulated_time=%.9f\n", static_cast<unsigned long long>(all), end_time);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return code;
}
