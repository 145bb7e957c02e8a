#include "driver/generators.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "inputs/inputs.hpp"

namespace props {

namespace {

// A list of 1..max_n elements whose length grows with RapidCheck's size and shrinks by dropping
// elements anywhere in the list.
template <class T>
std::vector<T> pick_list(const rc::Gen<T>& g, int min_n, int max_n) {
  const int cap = *rc::gen::withSize([=](int size) { return rc::gen::just(std::max(min_n, 1 + size * max_n / 100)); });
  std::vector<T> v = *rc::gen::resize(cap, rc::gen::container<std::vector<T>>(g));
  if (static_cast<int>(v.size()) > cap) v.resize(cap);
  while (static_cast<int>(v.size()) < min_n) v.push_back(*g);
  return v;
}

template <class T>
T pick_of(const std::vector<T>& values) {
  return *rc::gen::elementOf(values);
}

}  // namespace

rc::Gen<int> gen_np(int max_np) {
  // Uniform for Open MPI's few ranks; quadratic skew towards small p for SMPI's many.
  const double skew = max_np <= 8 ? 1.0 : 2.0;
  return rc::gen::map(rc::gen::inRange(0, 1001), [max_np, skew](int x) {
    const double f = std::pow(x / 1000.0, skew);
    return 1 + static_cast<int>(std::lround(f * (max_np - 1)));
  });
}

rc::Gen<CommSpec> gen_comm(int np) {
  return rc::gen::exec([np] {
    CommSpec c;
    int m = np;
    const int length = *rc::gen::inRange(0, 4);
    for (int i = 0; i < length; ++i) {
      Step s;
      const int kind = *rc::gen::inRange(0, 3);
      if (kind == 0) {
        s.kind = Step::kSplit;
        s.a = *rc::gen::inRange(0, m);
        s.b = *rc::gen::inRange(s.a, m);
        const bool strided = *rc::gen::inRange(0, 3) == 0;
        s.stride = strided ? *rc::gen::inRange(1, std::max(2, s.b - s.a + 1)) : 1;
      } else {
        s.kind = kind == 1 ? Step::kJanusLeft : Step::kJanusRight;
        s.a = *rc::gen::inRange(0, m);                                // left_last
        s.b = *rc::gen::inRange(0, std::min(s.a + 1, m - 1) + 1);     // right_first <= left_last + 1
      }
      c.steps.push_back(s);
      m = static_cast<int>(members_of(c, np)->size());
    }
    return c;
  });
}

rc::Gen<std::vector<CommSpec>> gen_comms(int np, int extra, bool overlapping) {
  return rc::gen::exec([np, extra, overlapping] {
    std::vector<CommSpec> comms{CommSpec{}};
    // Equal specs stay: each is a communicator of its own (the same range split twice). Some
    // communicators hang off a second from_mpi handle on the same MPI communicator.
    auto add = [&](CommSpec c) {
      if (*rc::gen::inRange(0, 4) == 0) c.handle = 1;
      comms.push_back(c);
    };
    const int n = *rc::gen::inRange(0, extra + 1);
    for (int i = 0; i < n; ++i) {
      const int how = overlapping ? *rc::gen::inRange(0, 3) : 0;
      if (how == 0 || np < 2) {
        add(*gen_comm(np));
      } else if (how == 1) {
        // Both halves of an overlapping janus split of some communicator.
        CommSpec base = comms[*rc::gen::inRange(0, static_cast<int>(comms.size()))];
        const int m = static_cast<int>(members_of(base, np)->size());
        const int left_last = *rc::gen::inRange(0, m);
        const int right_first = *rc::gen::inRange(0, left_last + 1);
        CommSpec left = base, right = base;
        left.steps.push_back({Step::kJanusLeft, left_last, right_first, 1});
        right.steps.push_back({Step::kJanusRight, left_last, right_first, 1});
        add(left);
        add(right);
      } else {
        // The same members as an existing communicator, reached through a different parent
        // (an extra full-range split in front): equal ranges, different contexts.
        CommSpec base = comms[*rc::gen::inRange(0, static_cast<int>(comms.size()))];
        CommSpec twin;
        twin.steps.push_back({Step::kSplit, 0, np - 1, 1});
        twin.steps.insert(twin.steps.end(), base.steps.begin(), base.steps.end());
        add(twin);
      }
    }
    return comms;
  });
}

std::vector<int> comm_sizes(const std::vector<CommSpec>& comms, int np) {
  std::vector<int> sizes;
  for (const CommSpec& c : comms) sizes.push_back(static_cast<int>(members_of(c, np)->size()));
  return sizes;
}

rc::Gen<CollOp> gen_coll(const std::vector<int>& sizes, int rounds, bool large_counts) {
  return rc::gen::exec([sizes, rounds, large_counts] {
    CollOp o;
    o.comm = *rc::gen::inRange(0, static_cast<int>(sizes.size()));
    const int size = sizes[o.comm];
    o.kind = pick_of<Coll>({Coll::kBcast, Coll::kReduce, Coll::kAllreduce, Coll::kScan, Coll::kExscan,
                            Coll::kScanAndBcast, Coll::kGather, Coll::kGatherv, Coll::kAllgather,
                            Coll::kAllgatherv, Coll::kBarrier, Coll::kGatherm});
    o.root = *rc::gen::inRange(0, size);
    // Mostly small counts; sometimes beyond Open MPI's eager limit, kept under ~2 MB per root.
    const int big = std::max(1, 2000000 / (16 * size));
    const bool large = large_counts && *rc::gen::inRange(0, 4) == 0;
    o.count = large ? *rc::gen::inRange(0, std::min(big, 5000) + 1) : *rc::gen::inRange(0, 6);
    o.type = o.kind == Coll::kGatherm ? Type::kInt
                                      : pick_of<Type>({Type::kInt, Type::kLong, Type::kDouble, Type::kGapped, Type::kMatrix});
    o.op = is_reduction(o.kind) ? pick_of(ops_for(o.type)) : Op::kSum;
    o.nonblocking = *rc::gen::arbitrary<bool>();
    o.round = *rc::gen::inRange(0, rounds);
    return o;
  });
}

rc::Gen<Message> gen_message(const std::vector<int>& sizes, int rounds, int tags, bool large_counts) {
  return rc::gen::exec([sizes, rounds, tags, large_counts] {
    Message m;
    m.comm = *rc::gen::inRange(0, static_cast<int>(sizes.size()));
    m.src = *rc::gen::inRange(0, sizes[m.comm]);
    m.dst = *rc::gen::inRange(0, sizes[m.comm]);
    m.tag = *rc::gen::inRange(0, 10) == 0 ? 32767 : *rc::gen::inRange(0, tags);
    const bool large = large_counts && *rc::gen::inRange(0, 5) == 0;
    m.count = large ? *rc::gen::inRange(1000, 20001) : *rc::gen::inRange(1, 9);
    m.any_source = *rc::gen::arbitrary<bool>();
    m.blocking = *rc::gen::inRange(0, 3) == 0;
    m.round = *rc::gen::inRange(0, rounds);
    return m;
  });
}

rc::Gen<BadCall> gen_bad(const std::vector<CommSpec>& comms, int np) {
  (void)np;
  const int n = static_cast<int>(comms.size());
  return rc::gen::exec([n] {
    BadCall b;
    b.kind = pick_of<Bad>({Bad::kSplitStride, Bad::kSplitReversed, Bad::kSplitTooLarge, Bad::kJanusGap,
                           Bad::kJanusBound, Bad::kRootLarge, Bad::kRootNegative, Bad::kCountNegative,
                           Bad::kTagLarge, Bad::kTagNegative, Bad::kAnyTag, Bad::kDestLarge, Bad::kNullType,
                           Bad::kNullOp, Bad::kNonMember});
    b.comm = *rc::gen::inRange(0, n);
    return b;
  });
}

rc::Gen<Scenario> gen_collectives_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = *gen_np(budget.max_np(backend));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 3, *rc::gen::arbitrary<bool>());
    const int rounds = *rc::gen::inRange(1, 4);
    s.colls = pick_list(gen_coll(comm_sizes(s.comms, s.np), rounds, true), 1, budget.soak ? 16 : 10);
    return s;
  });
}

rc::Gen<Scenario> gen_p2p_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = *gen_np(budget.max_np(backend));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 3, true);
    const int rounds = *rc::gen::inRange(1, 3);
    s.messages = pick_list(gen_message(comm_sizes(s.comms, s.np), rounds, 3, true), 1, budget.soak ? 40 : 16);
    return s;
  });
}

rc::Gen<Scenario> gen_interference_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = std::max(2, *gen_np(budget.max_np(backend)));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 4, true);
    const auto sizes = comm_sizes(s.comms, s.np);
    const int rounds = *rc::gen::inRange(1, 3);
    // Two user tags only, reused on every communicator; some messages get a twin between the
    // same two processes with the same tag on another communicator that holds both.
    s.messages = pick_list(gen_message(sizes, rounds, 2, false), 1, budget.soak ? 40 : 20);
    std::vector<std::vector<int>> members;
    for (const CommSpec& c : s.comms) members.push_back(*members_of(c, s.np));
    const std::size_t originals = s.messages.size();
    for (std::size_t i = 0; i < originals; ++i) {
      if (!*rc::gen::arbitrary<bool>()) continue;
      Message twin = s.messages[i];
      twin.comm = *rc::gen::inRange(0, static_cast<int>(s.comms.size()));
      const auto& from = members[s.messages[i].comm];
      const auto& to = members[twin.comm];
      const auto src = std::find(to.begin(), to.end(), from[twin.src]);
      const auto dst = std::find(to.begin(), to.end(), from[twin.dst]);
      if (twin.comm == s.messages[i].comm || src == to.end() || dst == to.end()) continue;
      twin.src = static_cast<int>(src - to.begin());
      twin.dst = static_cast<int>(dst - to.begin());
      s.messages.push_back(twin);
    }
    s.colls = pick_list(gen_coll(sizes, rounds, false), 1, budget.soak ? 12 : 6);
    return s;
  });
}

rc::Gen<Scenario> gen_bad_input_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = *gen_np(budget.max_np(backend));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 2, false);
    s.bad = pick_list(gen_bad(s.comms, s.np), 1, 6);
    const auto sizes = comm_sizes(s.comms, s.np);
    // Some legitimate traffic around the bad calls: nothing may be lost or left over.
    s.colls = pick_list(gen_coll(sizes, 1, false), 0, 3);
    s.messages = pick_list(gen_message(sizes, 1, 3, false), 0, 4);
    return s;
  });
}

rc::Gen<Scenario> gen_mixed_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = *gen_np(budget.max_np(backend));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 3, true);
    const auto sizes = comm_sizes(s.comms, s.np);
    const int rounds = *rc::gen::inRange(1, 3);
    s.colls = pick_list(gen_coll(sizes, rounds, true), 1, 6);
    s.messages = pick_list(gen_message(sizes, rounds, 3, true), 0, 8);
    return s;
  });
}

rc::Gen<Scenario> gen_large_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    const int low = std::min(128, budget.large_np(backend));
    s.np = *rc::gen::inRange(low, budget.large_np(backend) + 1);
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 2, true);
    const auto sizes = comm_sizes(s.comms, s.np);
    s.colls = pick_list(gen_coll(sizes, 1, false), 1, 3);
    s.messages = pick_list(gen_message(sizes, 1, 2, false), 0, 6);
    return s;
  });
}

rc::Gen<std::int64_t> gen_gather_elements(std::int64_t n) {
  return rc::gen::exec([n]() -> std::int64_t {
    switch (*rc::gen::inRange(0, 6)) {
      case 0: return 0;
      case 1: return *rc::gen::inRange<std::int64_t>(1, 65);
      case 2: return *rc::gen::inRange<std::int64_t>(1, 2 * n + 2);
      default: return -1;
    }
  });
}

rc::Gen<SortScenario> gen_sort_scenario(const std::string& algorithm, Backend backend, const Budget& budget) {
  return rc::gen::exec([algorithm, backend, budget] {
    SortScenario s;
    s.algorithm = algorithm;
    s.np = *gen_np(budget.max_np(backend));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.layer = pick_of(layers_of(algorithm));
    std::vector<std::string> names;
    for (inputs::Distribution d : inputs::all_distributions()) names.push_back(inputs::name(d));
    s.distribution = pick_of(names);
    const int size_class = *rc::gen::inRange(0, 4);
    const int max_n = size_class == 0 ? 3 : size_class == 1 ? 20 : size_class == 2 ? 300 : (budget.soak ? 20000 : 2000);
    s.n_per_pe = static_cast<std::uint64_t>(*rc::gen::inRange(0, max_n + 1));
    s.type = pick_of<std::string>({"i32", "i64", "f64"});
    s.first = 0;
    s.last = s.np - 1;
    s.stride = 1;
    if (s.np > 1 && *rc::gen::inRange(0, 3) == 0) {
      // A sub-range of the world (strided sometimes): the sort must keep to its members.
      s.first = *rc::gen::inRange(0, s.np);
      s.last = *rc::gen::inRange(s.first, s.np);
      s.stride = *rc::gen::inRange(0, 3) == 0 ? *rc::gen::inRange(1, std::max(2, s.last - s.first + 1)) : 1;
      s.last = s.first + (s.last - s.first) / s.stride * s.stride;
    }
    if (algorithm == "jquick") {
      const std::int64_t members = (s.last - s.first) / s.stride + 1;
      s.gather_elements = *gen_gather_elements(static_cast<std::int64_t>(s.n_per_pe) * members);
    }
    return s;
  });
}

rc::Gen<Scenario> gen_wildcard_isolation_scenario(Backend backend, const Budget& budget) {
  return rc::gen::exec([backend, budget] {
    Scenario s;
    s.np = std::max(2, *gen_np(budget.max_np(backend)));
    s.seed = *rc::gen::inRange(0, 1000000);
    s.comms = *gen_comms(s.np, 4, true);
    const auto sizes = comm_sizes(s.comms, s.np);
    std::vector<std::vector<int>> members;
    for (const CommSpec& c : s.comms) members.push_back(*members_of(c, s.np));
    auto in = [&](int world, int comm) {
      return std::find(members[comm].begin(), members[comm].end(), world) != members[comm].end();
    };
    // Keep a message only if, for every kept message to the same process with the same tag in
    // the same round on another communicator, neither sender is a member of the other's
    // communicator: then only RBC's member filter separates them once contexts collide.
    const auto candidates = pick_list(gen_message(sizes, 2, 2, false), 1, budget.soak ? 40 : 20);
    for (const Message& m : candidates) {
      const int src = members[m.comm][m.src], dst = members[m.comm][m.dst];
      bool ok = true;
      for (const Message& k : s.messages) {
        const int ksrc = members[k.comm][k.src], kdst = members[k.comm][k.dst];
        if (k.comm == m.comm || kdst != dst || k.tag != m.tag || k.round != m.round) continue;
        if (in(src, k.comm) || in(ksrc, m.comm)) ok = false;
      }
      if (ok) s.messages.push_back(m);
    }
    return s;
  });
}

}  // namespace props
