// Communicators that overlap in several ranks must never confuse messages:
//  1. concurrent nonblocking collectives on the world, a sub-range, a strided range, both janus
//     halves of two janus splits, started in a rank-dependent interleaving and completed
//     together by rbc::wait_all, give the analytically expected results;
//  2. point-to-point with the SAME user tag on overlapping communicators (also to oneself)
//     arrives at the receive of the communicator it was sent on, even when the other message
//     was sent first;
//  3. an ANY_SOURCE receive/probe/iprobe on a sub-range never takes or reports a message sent
//     with the same tag on another communicator (by a non-member, or by a member on the
//     parent); the foreign message stays pending and is later received by the right receive,
//     and iprobe loops do not livelock on it.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "support/layout.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

constexpr int kCount = 3;
constexpr int kTag = 5;  // the one user tag every communicator uses here

std::int64_t value(int world, int round, int i) { return world * 7 + round + 1 + i * 1000; }

// World ranks of a communicator's members (its MPI communicator is MPI_COMM_WORLD).
std::vector<int> members(const rbc::RangeComm& c) {
  std::vector<int> m;
  for (int i = 0; i < c.size(); ++i) m.push_back(c.mpi_rank(i));
  return m;
}

// One nonblocking collective whose result is checked after everything completed.
struct Started {
  std::string what;
  std::vector<std::int64_t> send, got, got2, expected, expected2;
};

class Concurrent {
 public:
  Concurrent(Checker& check, int p, int w) : check_(check), p_(p), w_(w) {}

  void run(int rounds) {
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    const int m = p_ / 2;
    const rbc::Range all(0, p_ - 1);
    std::vector<std::pair<std::string, rbc::RangeComm>> comms;
    // Same derivation and same members from one parent means the same context, which RBC
    // documents as one communicator: such duplicates (e.g. both right halves at p = 3) are
    // left out, since running collectives on both at once is not allowed.
    std::vector<std::pair<char, rbc::Range>> keys;
    auto add = [&](const std::string& name, char kind, const rbc::Range& range,
                   const rbc::RangeComm& c) {
      for (const auto& k : keys)
        if (k.first == kind && k.second == range) return;
      keys.push_back({kind, range});
      comms.push_back({name, c});
    };
    add("world", 'w', all, world);
    if (p_ >= 3) add("1..p-2", 's', all.sub(1, p_ - 2), world.split(1, p_ - 2));
    if (p_ >= 2) add("0..p-1 stride 2", 's', all.sub(0, p_ - 1, 2), world.split(0, p_ - 1, 2));
    const auto halves = world.janus_split(m, m);  // overlapping in rank m
    add("janus(m,m).left", 'l', all.sub(0, m), halves.first);
    add("janus(m,m).right", 'r', all.sub(m, p_ - 1), halves.second);
    const auto wide = world.janus_split(2 * p_ / 3, p_ / 3);  // overlapping in about p/3 ranks
    add("janus(2p/3,p/3).left", 'l', all.sub(0, 2 * p_ / 3), wide.first);
    add("janus(2p/3,p/3).right", 'r', all.sub(p_ / 3, p_ - 1), wide.second);

    std::vector<rbc::Request> requests;
    std::vector<std::unique_ptr<Started>> started;
    for (int round = 0; round < rounds; ++round) {
      // One starter per communicator (its own collectives in a fixed order, as MPI requires);
      // the communicators are interleaved differently on every rank and round.
      std::vector<std::function<void()>> starters;
      for (std::size_t ci = 0; ci < comms.size(); ++ci) {
        const rbc::RangeComm& c = comms[ci].second;
        if (!c.is_member()) continue;
        starters.push_back([&, ci, round] {
          start_on(comms[ci].first, comms[ci].second, static_cast<int>(ci), round, requests,
                   started);
        });
      }
      std::rotate(starters.begin(), starters.begin() + (w_ + round) % starters.size(),
                  starters.end());
      if ((w_ + round) % 2) std::reverse(starters.begin(), starters.end());
      for (auto& start : starters) {
        start();
        for (int t = 0; t < (w_ + round) % 3; ++t) rbc::test_all(requests);
      }
    }
    rbc::wait_all(requests);
    for (const auto& s : started) {
      check_.equal_ranges(s->got, s->expected, s->what);
      if (!s->expected2.empty()) check_.equal_ranges(s->got2, s->expected2, s->what, " (total)");
    }
  }

 private:
  // Kind of collective by communicator index, so overlapping ranks run different ones at once.
  void start_on(const std::string& name, const rbc::RangeComm& c, int ci, int round,
                std::vector<rbc::Request>& requests, std::vector<std::unique_ptr<Started>>& out) {
    const std::vector<int> mem = members(c);
    const int s = c.size(), r = c.rank();
    const int root = (round * 5 + ci) % s;
    auto mine = [&](int world) {
      std::vector<std::int64_t> v(kCount);
      for (int i = 0; i < kCount; ++i) v[i] = value(world, round, i);
      return v;
    };
    auto add = [&](const std::string& kind) {
      out.push_back(std::make_unique<Started>());
      out.back()->what = name + " round " + std::to_string(round) + ": " + kind;
      out.back()->send = mine(w_);
      out.back()->got.assign(kCount, -1);
      return out.back().get();
    };
    const MPI_Datatype t = MPI_INT64_T;
    switch (ci % 4) {
      case 0: {  // ibcast, then iallreduce (two on the same communicator)
        Started* b = add("ibcast root " + std::to_string(root));
        b->expected = mine(mem[root]);
        if (r == root) b->got = b->send;
        requests.push_back(rbc::ibcast(b->got.data(), kCount, t, root, c));
        Started* a = add("iallreduce");
        a->expected.assign(kCount, 0);
        for (int x : mem)
          for (int i = 0; i < kCount; ++i) a->expected[i] += value(x, round, i);
        requests.push_back(rbc::iallreduce(a->send.data(), a->got.data(), kCount, t, MPI_SUM, c));
        break;
      }
      case 1: {  // ireduce
        Started* a = add("ireduce root " + std::to_string(root));
        if (r == root) {
          a->expected.assign(kCount, 0);
          for (int x : mem)
            for (int i = 0; i < kCount; ++i) a->expected[i] += value(x, round, i);
        } else {
          a->expected = a->got;  // untouched
        }
        requests.push_back(
            rbc::ireduce(a->send.data(), a->got.data(), kCount, t, MPI_SUM, root, c));
        break;
      }
      case 2: {  // iscan_and_bcast
        Started* a = add("iscan_and_bcast");
        a->expected.assign(kCount, 0);
        a->expected2.assign(kCount, 0);
        a->got2.assign(kCount, -1);
        for (int j = 0; j < s; ++j)
          for (int i = 0; i < kCount; ++i) {
            if (j <= r) a->expected[i] += value(mem[j], round, i);
            a->expected2[i] += value(mem[j], round, i);
          }
        requests.push_back(rbc::iscan_and_bcast(a->send.data(), a->got.data(), a->got2.data(),
                                                kCount, t, MPI_SUM, c));
        break;
      }
      default: {  // igatherm of two sorted keys per member
        Started* a = add("igatherm root " + std::to_string(root));
        a->send = {static_cast<std::int64_t>(w_), static_cast<std::int64_t>(w_ + p_ + round)};
        if (r == root) {
          for (int x : mem) {
            a->expected.push_back(x);
            a->expected.push_back(x + p_ + round);
          }
          std::sort(a->expected.begin(), a->expected.end());
          a->got.assign(a->expected.size(), -1);
        } else {
          a->got.clear();
        }
        requests.push_back(rbc::igatherm(a->send.data(), 2, r == root ? a->got.data() : nullptr,
                                         r == root ? 2 * s : 0, t, root,
                                         rbc::merger_for<std::int64_t>(), c));
        break;
      }
    }
  }

  Checker& check_;
  int p_, w_;
};

// Part 2: the same tag on overlapping communicators X (wider) and Y (narrower).
void same_tag_on_overlapping(Checker& check, const std::string& name, const rbc::RangeComm& x,
                             const rbc::RangeComm& y, int w) {
  if (!y.is_member()) return;
  Context context(check, "same tag on ", name);
  const int j = y.rank(), n = y.size();
  const int right = (j + 1) % n, left = (j + n - 1) % n;
  const int right_x = x.rank_of_mpi(y.mpi_rank(right)), left_x = x.rank_of_mpi(y.mpi_rank(left));
  // Tag the payload with the communicator it travels on: 1 = X, 2 = Y.
  const int on_x[2] = {1, w}, on_y[2] = {2, w}, self_x[2] = {1, -w}, self_y[2] = {2, -w};
  std::vector<rbc::Request> sends;
  sends.push_back(rbc::isend(on_x, 2, MPI_INT, right_x, kTag, x));  // sent first ...
  sends.push_back(rbc::isend(on_y, 2, MPI_INT, right, kTag, y));
  sends.push_back(rbc::isend(self_x, 2, MPI_INT, x.rank(), kTag, x));
  sends.push_back(rbc::isend(self_y, 2, MPI_INT, j, kTag, y));
  int in[2] = {0, 0};
  const int left_world = y.mpi_rank(left);
  // ... but received second: Y's receives must skip X's messages.
  rbc::Status st = rbc::recv(in, 2, MPI_INT, left, kTag, y);
  check.check(in[0] == 2 && in[1] == left_world && st.source == left, "Y recv(left) got {", in[0],
              ",", in[1], "} from ", st.source, ", expected {2,", left_world, "} from ", left);
  st = rbc::recv(in, 2, MPI_INT, MPI_ANY_SOURCE, kTag, y);
  check.check(in[0] == 2 && in[1] == -w && st.source == j, "Y recv(ANY) for the self message got {",
              in[0], ",", in[1], "} from ", st.source, ", expected {2,", -w, "} from ", j);
  check.check(!rbc::iprobe(MPI_ANY_SOURCE, kTag, y).has_value(),
              "Y iprobe(ANY) reports a message after both Y messages were received");
  st = rbc::recv(in, 2, MPI_INT, left_x, kTag, x);
  check.check(in[0] == 1 && in[1] == left_world && st.source == left_x, "X recv(left) got {",
              in[0], ",", in[1], "} from ", st.source, ", expected {1,", left_world, "} from ",
              left_x);
  st = rbc::recv(in, 2, MPI_INT, x.rank(), kTag, x);
  check.check(in[0] == 1 && in[1] == -w, "X recv(self) got {", in[0], ",", in[1],
              "}, expected {1,", -w, "}");
  rbc::wait_all(sends);
}

// Part 3: `receiver` (a member of `sub`) has foreign messages with the sub's user tag pending:
// from each rank in `foreign` (world ranks), sent on `other` (a communicator the foreign sender
// and the receiver share, but not `sub`). Wildcard operations on `sub` must ignore them.
void foreign_pending(Checker& check, const std::string& name, MPI_Comm control,
                     const rbc::RangeComm& other, const rbc::RangeComm& sub, int receiver,
                     const std::vector<int>& foreign, const std::vector<int>& senders, int w) {
  Context context(check, "foreign messages on ", name);
  const bool is_foreign = std::find(foreign.begin(), foreign.end(), w) != foreign.end();
  const bool is_sender = std::find(senders.begin(), senders.end(), w) != senders.end();
  if (is_foreign) {
    const int payload[2] = {-1, w};
    rbc::send(payload, 2, MPI_INT, other.rank_of_mpi(receiver), kTag, other);
  }
  if (is_sender) {
    int go = 0;
    MPI_Recv(&go, 1, MPI_INT, receiver, 0, control, MPI_STATUS_IGNORE);
    const int payload[2] = {sub.rank(), w};
    rbc::send(payload, 2, MPI_INT, sub.rank_of_mpi(receiver), kTag, sub);
  }
  if (w != receiver) return;
  // The foreign messages have certainly arrived once a specific probe on `other` sees them.
  for (int f : foreign) {
    const rbc::Status st = rbc::probe(other.rank_of_mpi(f), kTag, other);
    check.equal(st.source, other.rank_of_mpi(f), "probe of the foreign message: source");
  }
  for (int i = 0; i < 200; ++i) {
    const auto found = rbc::iprobe(MPI_ANY_SOURCE, kTag, sub);
    if (!check.check(!found.has_value(), "iprobe(ANY) on the sub-range reported a message from ",
                     found ? found->source : -1, " while only foreign messages are pending"))
      break;
  }
  for (int s : senders) {
    const int go = 1;
    MPI_Send(&go, 1, MPI_INT, s, 0, control);
  }
  std::vector<int> seen;
  for (std::size_t i = 0; i < senders.size(); ++i) {
    int in[2] = {-7, -7};
    rbc::Status st;
    const char* how = "recv(ANY)";
    if (i % 3 == 0) {
      st = rbc::recv(in, 2, MPI_INT, MPI_ANY_SOURCE, kTag, sub);
    } else if (i % 3 == 1) {
      how = "probe(ANY) + recv";
      const rbc::Status pr = rbc::probe(MPI_ANY_SOURCE, kTag, sub);
      st = rbc::recv(in, 2, MPI_INT, pr.source, kTag, sub);
    } else {
      how = "iprobe(ANY) loop + irecv(ANY)";
      while (!rbc::iprobe(MPI_ANY_SOURCE, kTag, sub)) {
      }
      rbc::Request rq = rbc::irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, kTag, sub);
      rq.wait();
      st = rq.status();
    }
    const bool from_sender =
        std::find(senders.begin(), senders.end(), in[1]) != senders.end() && in[0] >= 0;
    check.check(from_sender && st.source == in[0] && st.source == sub.rank_of_mpi(in[1]), how,
                " on the sub-range took {", in[0], ",", in[1], "} with status.source ", st.source,
                (in[0] == -1 ? ": a FOREIGN message" : ""));
    seen.push_back(in[1]);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int> expected = senders;
  std::sort(expected.begin(), expected.end());
  check.equal_ranges(seen, expected, "senders received on the sub-range");
  for (int f : foreign) {
    int in[2] = {-7, -7};
    const rbc::Status st = rbc::recv(in, 2, MPI_INT, other.rank_of_mpi(f), kTag, other);
    check.check(in[0] == -1 && in[1] == f && st.source == other.rank_of_mpi(f),
                "the foreign message from world rank ", f, " was not received intact: {", in[0],
                ",", in[1], "}");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "interference_test", [](Checker& check) {
    int p = 0, w = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    MPI_Comm control;
    MPI_Comm_dup(MPI_COMM_WORLD, &control);  // test coordination, apart from RBC's tags
    try {
      {
        Context context(check, "concurrent nonblocking collectives");
        Concurrent(check, p, w).run(p >= 512 ? 2 : 3);
      }
      const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
      if (p >= 3) same_tag_on_overlapping(check, "world / 1..p-2", world, world.split(1, p - 2), w);
      if (p >= 2) same_tag_on_overlapping(check, "world / 1..p-1 stride 2", world,
                                          world.split(1, p - 1, 2), w);
      const auto halves = world.janus_split(p / 2, p / 2);
      same_tag_on_overlapping(check, "world / janus left", world, halves.first, w);
      MPI_Barrier(MPI_COMM_WORLD);
      if (p >= 2) {
        // Rank 0 is not in 1..p-1; rank 2 is, but sends on the world.
        std::vector<int> foreign = {0};
        if (p >= 3) foreign.push_back(2);
        std::vector<int> senders;
        for (int s : rbc_test::sample_ranks(p - 1, 4, 9))
          if (s + 1 != 1) senders.push_back(s + 1);
        foreign_pending(check, "world, ANY_SOURCE on 1..p-1", control, world,
                        world.split(1, p - 1), 1, foreign, senders, w);
        MPI_Barrier(MPI_COMM_WORLD);
      }
      if (p >= 3) {
        // Janus halves overlapping in m: m-1 sends on the left half, m receives on the right.
        const int m = p / 2;
        std::vector<int> senders;
        for (int s = m + 1; s < p && senders.size() < 3; ++s) senders.push_back(s);
        foreign_pending(check, "janus halves, ANY_SOURCE on the right half", control,
                        halves.first, halves.second, m, {m - 1}, senders, w);
      }
    } catch (const std::exception& e) {
      check.abort(std::string("unexpected exception: ") + e.what());
    }
    MPI_Comm_free(&control);
  });
}
