// Every RBC collective, blocking and nonblocking, against MPI's own collective on the same data
// over an MPI communicator with the same members (the reference), on full, sub-, strided,
// nested, janus, size-1 and reversed-parent layouts, for roots, counts 0/1/large, int, int64,
// a derived type with gaps (whose gap bytes must survive) and a non-commutative user MPI_Op.
//
//   collectives_test [--layouts N] [--large COUNT] [--progress]
//   (fewer layouts, another large count, a line per block on the layout's member 0)
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#include "support/layout.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;
using rbc_test::LayoutComms;
using rbc_test::mix;
using Bytes = std::vector<unsigned char>;

constexpr unsigned char kUnwritten = 0xA5;  // every byte of a receive buffer before the call
constexpr int kPoison = 0x5A5A5A5A;         // gap ints of send buffers; must never arrive
constexpr int kGuard = 2;                   // elements after the expected end of a receive buffer

enum class Kind { kInt, kInt64, kGappedPair, kMatrix };

// User ops get the datatype of the call; they find the layout from its size and extent, since
// no global may remember the handles (SMPI shares globals between ranks).
void gapped_pair_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_size(*type, &size);
  MPI_Type_get_extent(*type, &lb, &extent);
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  if (size == extent) {  // packed ints
    for (long i = 0; i < static_cast<long>(*len) * size / 4; ++i) b[i] += a[i];
    return;
  }
  const long step = extent / 4;  // ints 0 and 2 of each element are data
  for (long e = 0; e < *len; ++e) {
    b[e * step] += a[e * step];
    b[e * step + 2] += a[e * step + 2];
  }
}

// 2x2 matrix product modulo 2^32: associative, not commutative. inout = in * inout.
void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  const unsigned* a = static_cast<const unsigned*>(in);
  unsigned* b = static_cast<unsigned*>(inout);
  for (long m = 0; m < static_cast<long>(*len) * size / 16; ++m, a += 4, b += 4) {
    const unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                           a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof c);
  }
}

struct TypeCase {
  Kind kind;
  std::string name;
  MPI_Datatype type;
  MPI_Op op;
  int extent;        // bytes per element in user buffers
  bool sortable;     // usable with gatherm
  bool commutative;  // of `op`
};

void fill_element(Kind kind, unsigned char* e, unsigned long long h, bool sort_keys) {
  switch (kind) {
    case Kind::kInt: {
      const int v = sort_keys ? static_cast<int>(h % 50) - 25 : static_cast<int>(h % 2001) - 1000;
      std::memcpy(e, &v, sizeof v);
      break;
    }
    case Kind::kInt64: {
      const std::int64_t v = sort_keys ? static_cast<std::int64_t>(h % 50) * (1LL << 35)
                                       : static_cast<std::int64_t>(h % (1ULL << 41)) - (1LL << 40);
      std::memcpy(e, &v, sizeof v);
      break;
    }
    case Kind::kGappedPair: {
      const int v[4] = {static_cast<int>(h % 2001) - 1000, kPoison,
                        static_cast<int>((h >> 20) % 2001) - 1000, kPoison};
      std::memcpy(e, v, sizeof v);
      break;
    }
    case Kind::kMatrix: {
      const unsigned v[4] = {static_cast<unsigned>(h % 7), static_cast<unsigned>((h >> 8) % 7),
                             static_cast<unsigned>((h >> 16) % 7),
                             static_cast<unsigned>((h >> 24) % 7)};
      std::memcpy(e, v, sizeof v);
      break;
    }
  }
}

std::string show_element(Kind kind, const unsigned char* e) {
  std::ostringstream out;
  auto word = [&out](int v) {
    if (v == kPoison)
      out << "POISON";
    else if (static_cast<unsigned>(v) == 0xA5A5A5A5u)
      out << "unwritten";
    else
      out << v;
  };
  int v[4];
  switch (kind) {
    case Kind::kInt:
      std::memcpy(v, e, 4);
      word(v[0]);
      break;
    case Kind::kInt64: {
      std::int64_t x;
      std::memcpy(&x, e, 8);
      if (static_cast<std::uint64_t>(x) == 0xA5A5A5A5A5A5A5A5ull)
        out << "unwritten";
      else
        out << x;
      break;
    }
    case Kind::kGappedPair:
      std::memcpy(v, e, 16);
      out << "(";
      word(v[0]);
      out << ", gap ";
      word(v[1]);
      out << ", ";
      word(v[2]);
      out << ", gap ";
      word(v[3]);
      out << ")";
      break;
    case Kind::kMatrix:
      std::memcpy(v, e, 16);
      out << "[";
      for (int i = 0; i < 4; ++i) {
        if (i) out << (i == 2 ? "; " : " ");
        word(v[i]);
      }
      out << "]";
      break;
  }
  return out.str();
}

// Compares two buffers element by element (gap bytes included) as one check.
void compare(Checker& check, const TypeCase& t, const Bytes& got, const Bytes& expected,
             const std::string& what) {
  if (!check.equal(got.size(), expected.size(), what, ": buffer size (test bug)")) return;
  const std::size_t n = got.size() / t.extent;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i * t.extent], &expected[i * t.extent], t.extent) != 0 && bad++ == 0)
      first = i;
  }
  check.check(bad == 0, what, ": element ", first, " of ", n, " is ",
              bad ? show_element(t.kind, &got[first * t.extent]) : "", ", expected ",
              bad ? show_element(t.kind, &expected[first * t.extent]) : "", " (", bad,
              " elements differ)");
}

// With count 0 nothing may be written, so the expected buffers stay as they are and MPI is not
// asked: SMPI 3.32's MPI_Allreduce with count 0 and a derived datatype on 16 ranks dies with
// SIGFPE (allreduce__ompi_ring_segmented divides by zero).
struct Output {
  std::string name;
  Bytes got;
  Bytes expected;
};

// One started collective: its buffers live here until it completes and is compared.
struct Pending {
  std::string what;
  rbc::Request request;
  std::vector<Output> outputs;
  Bytes send;
  Bytes send_before;  // the send buffer must come back unchanged
  std::vector<int> counts, displs;
  rbc::Merger merger;
};

class Runner {
 public:
  Runner(Checker& check, int p, int max_layouts, int large, bool progress)
      : check_(check), p_(p), max_layouts_(max_layouts), large_(large), progress_(progress) {
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    // Simulated messages cost real time: beyond 8 ranks fewer layouts and blocks, each block
    // in one mode (blocking or nonblocking, alternating).
    sample_ = p > 8;
    huge_ = p > 8;
    root_limit_ = p <= 8 ? 8 : 4;
    if (p >= 64) max_layouts_ = std::min(max_layouts_, p >= 512 ? 3 : 4);
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, 16, &gapped_pair_);
    MPI_Type_free(&pair);
    MPI_Type_commit(&gapped_pair_);
    MPI_Type_contiguous(4, MPI_INT, &matrix_);
    MPI_Type_commit(&matrix_);
    MPI_Op_create(&gapped_pair_sum, 1, &pair_sum_);
    MPI_Op_create(&matrix_product, 0, &product_);
    types_ = {
        {Kind::kInt, "int/MPI_SUM", MPI_INT, MPI_SUM, 4, true, true},
        {Kind::kInt64, "int64/MPI_SUM", MPI_INT64_T, MPI_SUM, 8, true, true},
        {Kind::kGappedPair, "gapped pair (vector type, extent 16, size 8)/user sum", gapped_pair_,
         pair_sum_, 16, false, true},
        {Kind::kMatrix, "2x2 matrix/non-commutative user product", matrix_, product_, 16, false,
         false},
    };
  }

  ~Runner() {
    MPI_Op_free(&pair_sum_);
    MPI_Op_free(&product_);
    MPI_Type_free(&gapped_pair_);
    MPI_Type_free(&matrix_);
  }

  void run() {
    // The first handle on an MPI communicator (its blocking collectives run directly, messages
    // bare) before any other from_mpi, beside the splits, whose messages carry envelopes.
    run_layout(rbc_test::first_handle_layout(), kFirstHandleIndex);
    const auto layouts = rbc_test::standard_layouts(p_, sample_);
    for (std::size_t li = 0; li < layouts.size() && static_cast<int>(li) < max_layouts_; ++li) {
      run_layout(layouts[li], li);
    }
  }

 private:
  static constexpr std::size_t kFirstHandleIndex = 1000;

  void run_layout(const rbc_test::Layout& layout, std::size_t li) {
    LayoutComms lc(layout, check_);
    if (!lc.member()) return;
    Context context(check_, "layout ", lc.name(), " (size ", lc.size(), ", member ", lc.rank(),
                    ")");
    if (layout.first_handle) {
      check_.equal(rbc::wire_bytes(8, lc.comm()), 8, "the first handle's messages travel bare");
    }
    check_barrier(lc);
    auto blocks = blocks_for(li);
    if (layout.first_handle) {
      // Around the 128 bytes up to which scans go on the butterfly: 32 ints, 8 and 9 matrices.
      blocks.push_back({0, 32, 2});
      blocks.push_back({3, 8, 2});
      blocks.push_back({3, 9, 2});
    } else if (li == 0 && !huge_) {
      // On a split, a blocking collective of a predefined type runs directly up to 3944 bytes
      // (the envelope's in-place limit): 493 and 494 int64s on either side of it, 32 ints below.
      blocks.push_back({0, 32, 2});
      blocks.push_back({1, 493, 1});
      blocks.push_back({1, 494, 1});
    }
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
      const Block& b = blocks[bi];
      for (Mode mode : {Mode::kBlocking, Mode::kNonblocking, Mode::kMixed}) {
        const bool nonblocking = mode == Mode::kNonblocking;
        if (huge_ && nonblocking != ((li + bi) % 2 == 1)) continue;
        // Mixed: predefined types everywhere, every type on the first handle (members running
        // directly and members running the state machine must exchange the same messages).
        if (mode == Mode::kMixed && (huge_ || (b.type > 1 && !layout.first_handle))) continue;
        if (progress_ && lc.rank() == 0) {
          std::printf("layout %zu %s: type %d count %d %s\n", li, lc.name().c_str(), b.type,
                      b.count, mode_name(mode));
          std::fflush(stdout);
        }
        run_block(lc, types_[b.type], b.count, b.roots, mode, mix(li, bi, nonblocking));
      }
    }
  }

  struct Block {
    int type;   // index into types_
    int count;
    int roots;  // how many roots the rooted collectives try
  };

  // Every type at count 1, counts 0 and large for some; every root (up to root_limit_) for int
  // at count 1. Large worlds run fewer blocks, each either blocking or nonblocking.
  std::vector<Block> blocks_for(std::size_t layout_index) const {
    const int rotating = 1 + static_cast<int>(layout_index % 3);
    // About large_ * 4 bytes per rank: above SMPI's 64 KiB eager limit, Open MPI's 4 KiB and the
    // 128 KiB from which RBC's reduce halves on 4-15 ranks (its allreduce on 3-7).
    const int large = rotating == 1 ? large_ / 2 : large_ / 4;
    if (huge_) return {{0, 0, 2}, {0, 1, root_limit_}, {2, 1, 2}, {3, 1, 2}, {rotating, large, 1}};
    return {{0, 0, 2}, {2, 0, 2}, {0, 1, root_limit_}, {1, 1, 2},
            {2, 1, 2}, {3, 1, 2}, {0, large_, 2},      {rotating, large, 2}};
  }

  // Gather-type collectives deliver size * count elements (to every rank for the all-variants):
  // scale the large count down with the communicator size to keep memory and time modest.
  static int gather_count(int count, int size, bool to_all) {
    if (count <= 1) return count;
    const long budget = to_all ? 4000000L / (static_cast<long>(size) * size) : 2000000L / size;
    return static_cast<int>(std::max(2L, std::min<long>(count, budget)));
  }

  Bytes data(const TypeCase& t, int n, unsigned long long seed, bool sort_keys = false) const {
    Bytes b(static_cast<std::size_t>(n) * t.extent);
    unsigned long long x = mix(seed, world_rank_);
    for (int i = 0; i < n; ++i) {
      x += 0x9E3779B97F4A7C15ULL;  // one splitmix64 step per element
      unsigned long long z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      fill_element(t.kind, &b[static_cast<std::size_t>(i) * t.extent], z ^ (z >> 31), sort_keys);
    }
    return b;
  }
  static Bytes unwritten(const TypeCase& t, long n) {
    return Bytes(static_cast<std::size_t>(n + kGuard) * t.extent, kUnwritten);
  }

  // Per-member element counts for the v-variants and gatherm: zeros, ones and larger ones.
  static std::vector<int> varied_counts(int size, int count, unsigned long long salt) {
    std::vector<int> counts(size);
    for (int i = 0; i < size; ++i) {
      switch (mix(salt, i) % 4) {
        case 0: counts[i] = 0; break;
        case 1: counts[i] = std::min(count, 1); break;
        case 2: counts[i] = count / 2; break;
        default: counts[i] = count; break;
      }
    }
    return counts;
  }
  // Blocks in reverse member order with one unused element between neighbours.
  static std::vector<int> gapped_displs(const std::vector<int>& counts, int* total) {
    std::vector<int> displs(counts.size());
    int cursor = 1;
    for (std::size_t i = counts.size(); i-- > 0;) {
      displs[i] = cursor;
      cursor += counts[i] + 1;
    }
    *total = cursor;
    return displs;
  }

  // kMixed: blocking calls, while the odd members hold a receive from themselves in flight, so
  // they run each collective as a request and the even ones run it at once (a blocking
  // collective on an idle engine): both kinds of member must interoperate.
  enum class Mode { kBlocking, kNonblocking, kMixed };
  static const char* mode_name(Mode mode) {
    return mode == Mode::kBlocking ? "blocking" : mode == Mode::kNonblocking ? "nonblocking" : "mixed";
  }
  static constexpr int kHeldTag = 77;

  void run_block(const LayoutComms& lc, const TypeCase& t, int count, int root_count, Mode mode,
                 unsigned long long salt) {
    const bool nonblocking = mode == Mode::kNonblocking;
    Context context(check_, t.name, ", count ", count, ", ", mode_name(mode));
    int held_value = -1;
    rbc::Request held;
    if (mode == Mode::kMixed && lc.rank() % 2 == 1) {
      held = rbc::irecv(&held_value, 1, MPI_INT, lc.rank(), kHeldTag, lc.comm());
    }
    const int s = lc.size();
    std::vector<std::unique_ptr<Pending>> started;
    auto finish = [&](std::unique_ptr<Pending> pd) {
      if (progress_ && lc.rank() == 0) {
        std::printf("  started %s\n", pd->what.c_str());
        std::fflush(stdout);
      }
      if (nonblocking)
        started.push_back(std::move(pd));
      else
        compare_all(t, *pd);
    };
    unsigned long long seq = 0;
    const auto seed = [&] { return mix(salt, ++seq); };
    try {
      finish(allreduce(lc, t, count, nonblocking, seed()));
      finish(scan(lc, t, count, nonblocking, seed(), false));
      finish(scan(lc, t, count, nonblocking, seed(), true));
      finish(scan_and_bcast(lc, t, count, nonblocking, seed()));
      finish(allgather(lc, t, gather_count(count, s, true), nonblocking, seed(), false));
      finish(allgather(lc, t, gather_count(count, s, true), nonblocking, seed(), true));
      if (t.sortable) finish(allgatherm(lc, t, gather_count(count, s, false), nonblocking, seed()));
      for (int root : roots(s, root_count, salt)) {
        finish(bcast(lc, t, count, root, nonblocking, seed()));
        finish(reduce(lc, t, count, root, nonblocking, seed()));
        finish(gather(lc, t, gather_count(count, s, false), root, nonblocking, seed(), false));
        finish(gather(lc, t, gather_count(count, s, false), root, nonblocking, seed(), true));
        if (t.sortable)
          finish(gatherm(lc, t, gather_count(count, s, false), root, nonblocking, seed()));
      }
      // Long reductions cut the vector into blocks and gather them towards the root's
      // participant; a root folded into its neighbour (p not a power of two) or next to one
      // takes another path, so the longest int block tries every root.
      if (count >= large_ && s <= 17) {
        for (int root = 0; root < s; ++root) finish(reduce(lc, t, count, root, nonblocking, seed()));
      }
      // Beyond 16 ranks reductions halve from 256 KiB.
      if (count >= large_ && s > 16) {
        const int halved = (1 << 18) / t.extent + 3;
        for (int root : {0, s / 2, s - 1}) finish(reduce(lc, t, halved, root, nonblocking, seed()));
      }
      // From 512 KiB on 8 to 16 ranks a broadcast scatters blocks and allgathers them (around
      // a ring when p is not a power of two): every root for int, one for the other long blocks.
      if (count > 1 && count >= large_ / 4 && s >= 8 && s <= 16) {
        int type_size = 0;
        MPI_Type_size(t.type, &type_size);
        const int scattered = (1 << 19) / type_size + 3;
        if (count >= large_) {
          for (int root = 0; root < s; ++root) finish(bcast(lc, t, scattered, root, nonblocking, seed()));
        } else {
          finish(bcast(lc, t, scattered, s - 1, nonblocking, seed()));
        }
      }
      if (nonblocking) complete(t, started, salt);
      if (mode == Mode::kMixed && lc.rank() % 2 == 1) {
        check_.check(!held.done(), "the held receive completed before its message was sent");
        const int value = lc.rank();
        rbc::send(&value, 1, MPI_INT, lc.rank(), kHeldTag, lc.comm());
        held.wait();
        check_.check(held_value == lc.rank(), "the held receive got ", held_value);
      }
    } catch (const std::exception& e) {
      check_.abort(std::string("unexpected exception: ") + e.what());
    }
  }

  // `count` roots among 0, 1, size/2, size-1 and random ones, rotated by `salt`.
  static std::vector<int> roots(int size, int count, unsigned long long salt) {
    std::vector<int> candidates =
        rbc_test::sample_ranks(size, std::max(count, 4), static_cast<unsigned>(salt));
    std::rotate(candidates.begin(), candidates.begin() + salt % candidates.size(),
                candidates.end());
    candidates.resize(std::min<std::size_t>(candidates.size(), count));
    return candidates;
  }

  // Completes nonblocking collectives in one of four ways, chosen by the block.
  void complete(const TypeCase& t, std::vector<std::unique_ptr<Pending>>& started,
                unsigned long long salt) {
    std::vector<rbc::Request> requests;
    for (auto& pd : started) requests.push_back(std::move(pd->request));
    switch (salt % 4) {
      case 0:
        rbc::wait_all(requests);
        break;
      case 1:
        while (!rbc::test_all(requests)) {
        }
        break;
      case 2: {
        // Requests that completed when started are done already; wait_any skips them.
        std::vector<bool> returned(requests.size(), false);
        for (int i; (i = rbc::wait_any(requests)) >= 0;) {
          if (!check_.check(i < static_cast<int>(requests.size()) && !returned[i] &&
                                requests[i].done(),
                            "wait_any returned ", i, ", which is out of range, returned before "
                            "or not done"))
            break;
          returned[i] = true;
        }
        break;
      }
      default:
        for (std::size_t i = requests.size(); i-- > 0;) requests[i].wait();
        break;
    }
    for (std::size_t i = 0; i < started.size(); ++i) {
      check_.check(requests[i].done(), started[i]->what, ": request not done after completion");
      compare_all(t, *started[i]);
    }
  }

  void compare_all(const TypeCase& t, const Pending& pd) {
    for (const Output& o : pd.outputs) compare(check_, t, o.got, o.expected, pd.what + ": " + o.name);
    compare(check_, t, pd.send, pd.send_before, pd.what + ": send buffer changed");
  }

  std::unique_ptr<Pending> begin(const std::string& what, Bytes send) {
    auto pd = std::make_unique<Pending>();
    pd->what = what;
    pd->send = std::move(send);
    pd->send_before = pd->send;
    return pd;
  }

  static std::string at_root(const char* name, int root) {
    return std::string(name) + " root " + std::to_string(root);
  }

  std::unique_ptr<Pending> allreduce(const LayoutComms& lc, const TypeCase& t, int n, bool nb,
                                     unsigned long long seed) {
    auto pd = begin("allreduce", data(t, n, seed));
    Output o{"result", unwritten(t, n), unwritten(t, n)};
    if (n > 0) MPI_Allreduce(pd->send.data(), o.expected.data(), n, t.type, t.op, lc.reference());
    pd->outputs.push_back(std::move(o));
    Output& out = pd->outputs.back();
    if (nb)
      pd->request = rbc::iallreduce(pd->send.data(), out.got.data(), n, t.type, t.op, lc.comm());
    else
      rbc::allreduce(pd->send.data(), out.got.data(), n, t.type, t.op, lc.comm());
    return pd;
  }

  // MPI_Scan / MPI_Exscan into `out` (n elements). For non-commutative ops and beyond 32 ranks
  // the reference is a chain of MPI_Send/MPI_Recv and MPI_Reduce_local instead: SMPI 3.32's
  // MPI_Scan and MPI_Exscan ignore a non-commutative user op (each rank gets its own value,
  // exscan writes nothing), and its linear scan takes minutes at 127 ranks.
  void reference_scan(const LayoutComms& lc, const TypeCase& t, int n, const Bytes& send,
                      Bytes& out, bool exclusive) {
    if (n == 0) return;
    if (t.commutative && lc.size() <= 32) {
      if (exclusive)
        MPI_Exscan(send.data(), out.data(), n, t.type, t.op, lc.reference());
      else
        MPI_Scan(send.data(), out.data(), n, t.type, t.op, lc.reference());
      return;
    }
    const int r = lc.rank();
    Bytes prefix = send;  // x_0 op ... op x_r
    if (r > 0) {
      Bytes before = unwritten(t, n);
      MPI_Recv(before.data(), n, t.type, r - 1, 91, lc.reference(), MPI_STATUS_IGNORE);
      MPI_Reduce_local(before.data(), prefix.data(), n, t.type, t.op);
      if (exclusive) std::copy(before.begin(), before.begin() + send.size(), out.begin());
    }
    if (r + 1 < lc.size()) MPI_Send(prefix.data(), n, t.type, r + 1, 91, lc.reference());
    if (!exclusive)  // a typed copy, which leaves the gaps of `out` alone
      MPI_Sendrecv(prefix.data(), n, t.type, 0, 92, out.data(), n, t.type, 0, 92, MPI_COMM_SELF,
                   MPI_STATUS_IGNORE);
  }

  std::unique_ptr<Pending> scan(const LayoutComms& lc, const TypeCase& t, int n, bool nb,
                                unsigned long long seed, bool exclusive) {
    auto pd = begin(exclusive ? "exscan" : "scan", data(t, n, seed));
    Output o{"result", unwritten(t, n), unwritten(t, n)};
    reference_scan(lc, t, n, pd->send, o.expected, exclusive);
    if (exclusive && lc.rank() == 0) o.expected = unwritten(t, n);  // documented: untouched
    pd->outputs.push_back(std::move(o));
    Output& out = pd->outputs.back();
    const rbc::RangeComm& c = lc.comm();
    if (exclusive && nb)
      pd->request = rbc::iexscan(pd->send.data(), out.got.data(), n, t.type, t.op, c);
    else if (exclusive)
      rbc::exscan(pd->send.data(), out.got.data(), n, t.type, t.op, c);
    else if (nb)
      pd->request = rbc::iscan(pd->send.data(), out.got.data(), n, t.type, t.op, c);
    else
      rbc::scan(pd->send.data(), out.got.data(), n, t.type, t.op, c);
    return pd;
  }

  std::unique_ptr<Pending> scan_and_bcast(const LayoutComms& lc, const TypeCase& t, int n,
                                          bool nb, unsigned long long seed) {
    auto pd = begin("scan_and_bcast", data(t, n, seed));
    Output prefix{"prefix", unwritten(t, n), unwritten(t, n)};
    Output total{"total", unwritten(t, n), unwritten(t, n)};
    reference_scan(lc, t, n, pd->send, prefix.expected, false);
    if (lc.rank() == lc.size() - 1) total.expected = prefix.expected;
    if (n > 0) MPI_Bcast(total.expected.data(), n, t.type, lc.size() - 1, lc.reference());
    pd->outputs.push_back(std::move(prefix));
    pd->outputs.push_back(std::move(total));
    void* p = pd->outputs[0].got.data();
    void* q = pd->outputs[1].got.data();
    if (nb)
      pd->request = rbc::iscan_and_bcast(pd->send.data(), p, q, n, t.type, t.op, lc.comm());
    else
      rbc::scan_and_bcast(pd->send.data(), p, q, n, t.type, t.op, lc.comm());
    return pd;
  }

  std::unique_ptr<Pending> bcast(const LayoutComms& lc, const TypeCase& t, int n, int root,
                                 bool nb, unsigned long long seed) {
    auto pd = begin(at_root("bcast", root), {});
    Bytes initial = unwritten(t, n);
    if (lc.rank() == root) {
      const Bytes d = data(t, n, seed);
      std::copy(d.begin(), d.end(), initial.begin());
    }
    Output o{"buffer", initial, initial};
    if (n > 0) MPI_Bcast(o.expected.data(), n, t.type, root, lc.reference());
    pd->outputs.push_back(std::move(o));
    void* buf = pd->outputs.back().got.data();
    if (nb)
      pd->request = rbc::ibcast(buf, n, t.type, root, lc.comm());
    else
      rbc::bcast(buf, n, t.type, root, lc.comm());
    return pd;
  }

  // Non-roots pass a null receive buffer, which MPI allows.
  std::unique_ptr<Pending> reduce(const LayoutComms& lc, const TypeCase& t, int n, int root,
                                  bool nb, unsigned long long seed) {
    auto pd = begin(at_root("reduce", root), data(t, n, seed));
    const bool is_root = lc.rank() == root;
    void* got = nullptr;
    if (is_root) {
      pd->outputs.push_back({"result", unwritten(t, n), unwritten(t, n)});
      got = pd->outputs.back().got.data();
    }
    if (n > 0) MPI_Reduce(pd->send.data(), is_root ? pd->outputs.back().expected.data() : nullptr, n, t.type,
               t.op, root, lc.reference());
    if (nb)
      pd->request = rbc::ireduce(pd->send.data(), got, n, t.type, t.op, root, lc.comm());
    else
      rbc::reduce(pd->send.data(), got, n, t.type, t.op, root, lc.comm());
    return pd;
  }

  std::unique_ptr<Pending> gather(const LayoutComms& lc, const TypeCase& t, int n, int root,
                                  bool nb, unsigned long long seed, bool varied) {
    const int s = lc.size();
    const bool is_root = lc.rank() == root;
    auto pd = begin(at_root(varied ? "gatherv" : "gather", root), Bytes());
    int total = s * n;
    if (varied) {
      pd->counts = varied_counts(s, n, seed);
      pd->displs = gapped_displs(pd->counts, &total);
    }
    const int mine = varied ? pd->counts[lc.rank()] : n;
    pd->send = data(t, mine, mix(seed, 1));
    pd->send_before = pd->send;
    void* got = nullptr;
    void* expected = nullptr;
    if (is_root) {
      pd->outputs.push_back({"result", unwritten(t, total), unwritten(t, total)});
      got = pd->outputs.back().got.data();
      expected = pd->outputs.back().expected.data();
    }
    const void* send = pd->send.data();
    const rbc::RangeComm& c = lc.comm();
    if (varied) {
      const int* counts = pd->counts.data();
      const int* displs = pd->displs.data();
      if (n > 0) MPI_Gatherv(send, mine, t.type, expected, counts, displs, t.type, root, lc.reference());
      if (nb)
        pd->request = rbc::igatherv(send, mine, t.type, got, counts, displs, t.type, root, c);
      else
        rbc::gatherv(send, mine, t.type, got, counts, displs, t.type, root, c);
    } else {
      if (n > 0) MPI_Gather(send, n, t.type, expected, n, t.type, root, lc.reference());
      if (nb)
        pd->request = rbc::igather(send, n, t.type, got, n, t.type, root, c);
      else
        rbc::gather(send, n, t.type, got, n, t.type, root, c);
    }
    return pd;
  }

  std::unique_ptr<Pending> allgather(const LayoutComms& lc, const TypeCase& t, int n, bool nb,
                                     unsigned long long seed, bool varied) {
    const int s = lc.size();
    auto pd = begin(varied ? "allgatherv" : "allgather", Bytes());
    int total = s * n;
    if (varied) {
      pd->counts = varied_counts(s, n, seed);
      pd->displs = gapped_displs(pd->counts, &total);
    }
    const int mine = varied ? pd->counts[lc.rank()] : n;
    pd->send = data(t, mine, mix(seed, 1));
    pd->send_before = pd->send;
    pd->outputs.push_back({"result", unwritten(t, total), unwritten(t, total)});
    void* got = pd->outputs.back().got.data();
    void* expected = pd->outputs.back().expected.data();
    const void* send = pd->send.data();
    const rbc::RangeComm& c = lc.comm();
    if (varied) {
      const int* counts = pd->counts.data();
      const int* displs = pd->displs.data();
      if (n > 0 && s == 1) {
        // MPICH 4.0.2's MPI_Allgatherv on one rank ignores the displacement (writes at 0): the
        // reference is the copy itself.
        MPI_Aint lb = 0, extent = 0;
        MPI_Type_get_extent(t.type, &lb, &extent);
        MPI_Sendrecv(send, mine, t.type, 0, 0, static_cast<char*>(expected) + displs[0] * extent, mine, t.type, 0, 0,
                     MPI_COMM_SELF, MPI_STATUS_IGNORE);
      } else if (n > 0) {
        MPI_Allgatherv(send, mine, t.type, expected, counts, displs, t.type, lc.reference());
      }
      if (nb)
        pd->request = rbc::iallgatherv(send, mine, t.type, got, counts, displs, t.type, c);
      else
        rbc::allgatherv(send, mine, t.type, got, counts, displs, t.type, c);
    } else {
      if (n > 0) MPI_Allgather(send, n, t.type, expected, n, t.type, lc.reference());
      if (nb)
        pd->request = rbc::iallgather(send, n, t.type, got, n, t.type, c);
      else
        rbc::allgather(send, n, t.type, got, n, t.type, c);
    }
    return pd;
  }

  // Sorts the first `count` elements of `b` (int or int64 cases).
  static void sort_elements(const TypeCase& t, Bytes& b, int count) {
    if (t.kind == Kind::kInt) {
      std::sort(reinterpret_cast<int*>(b.data()), reinterpret_cast<int*>(b.data()) + count);
    } else {
      std::sort(reinterpret_cast<std::int64_t*>(b.data()), reinterpret_cast<std::int64_t*>(b.data()) + count);
    }
  }

  // The merging gathers' inputs: varied counts per member (and their displacements), this
  // member's sorted run and the merger. Returns the total.
  int sorted_runs(const LayoutComms& lc, const TypeCase& t, int n, unsigned long long seed, Pending& pd) const {
    const int s = lc.size();
    pd.counts = varied_counts(s, n, seed);
    pd.displs.assign(s, 0);
    for (int i = 1; i < s; ++i) pd.displs[i] = pd.displs[i - 1] + pd.counts[i - 1];
    const int mine = pd.counts[lc.rank()];
    pd.send = data(t, mine, mix(seed, 1), true);
    sort_elements(t, pd.send, mine);
    pd.merger = t.kind == Kind::kInt ? rbc::merger_for<int>() : rbc::merger_for<std::int64_t>();
    pd.send_before = pd.send;
    return pd.displs[s - 1] + pd.counts[s - 1];
  }

  // Reference: gather everything (MPI_Gatherv) and sort at the root.
  std::unique_ptr<Pending> gatherm(const LayoutComms& lc, const TypeCase& t, int n, int root,
                                   bool nb, unsigned long long seed) {
    const bool is_root = lc.rank() == root;
    auto pd = begin(at_root("gatherm", root), Bytes());
    const int total = sorted_runs(lc, t, n, seed, *pd);
    const int mine = pd->counts[lc.rank()];
    void* got = nullptr;
    Bytes expected = unwritten(t, total);
    if (n > 0) MPI_Gatherv(pd->send.data(), mine, t.type, is_root ? expected.data() : nullptr,
                pd->counts.data(), pd->displs.data(), t.type, root, lc.reference());
    if (is_root) {
      sort_elements(t, expected, total);
      pd->outputs.push_back({"merged result", unwritten(t, total), std::move(expected)});
      got = pd->outputs.back().got.data();
    }
    if (nb)
      pd->request = rbc::igatherm(pd->send.data(), mine, got, is_root ? total : 0, t.type, root,
                                  pd->merger, lc.comm());
    else
      rbc::gatherm(pd->send.data(), mine, got, is_root ? total : 0, t.type, root, pd->merger,
                   lc.comm());
    return pd;
  }

  // Reference: everything (MPI_Allgatherv), sorted on every member.
  std::unique_ptr<Pending> allgatherm(const LayoutComms& lc, const TypeCase& t, int n, bool nb,
                                      unsigned long long seed) {
    auto pd = begin("allgatherm", Bytes());
    const int total = sorted_runs(lc, t, n, seed, *pd);
    const int mine = pd->counts[lc.rank()];
    Bytes expected = unwritten(t, total);
    if (total > 0) {
      MPI_Allgatherv(pd->send.data(), mine, t.type, expected.data(), pd->counts.data(), pd->displs.data(), t.type,
                     lc.reference());
    }
    sort_elements(t, expected, total);
    pd->outputs.push_back({"merged result", unwritten(t, total), std::move(expected)});
    void* got = pd->outputs.back().got.data();
    if (nb)
      pd->request = rbc::iallgatherm(pd->send.data(), mine, got, total, t.type, pd->merger, lc.comm());
    else
      rbc::allgatherm(pd->send.data(), mine, got, total, t.type, pd->merger, lc.comm());
    return pd;
  }

  // No member's barrier may complete before the last one enters it. The late member enters
  // only after every other member has reported (over the reference communicator) that its
  // ibarrier was still incomplete after several tests, so the outcome is deterministic.
  void check_barrier(const LayoutComms& lc) {
    rbc::barrier(lc.comm());
    for (int late : rbc_test::sample_ranks(lc.size(), root_limit_, 3)) {
      Context context(check_, "ibarrier with member ", late, " entering last");
      if (lc.rank() == late) {
        for (int i = 0; i < lc.size() - 1; ++i) {
          int report[2];
          MPI_Status status;
          MPI_Recv(report, 2, MPI_INT, MPI_ANY_SOURCE, 77, lc.reference(), &status);
          check_.check(report[1] == 0, "member ", report[0],
                       "'s barrier completed before this member entered it");
        }
        rbc::Request r = rbc::ibarrier(lc.comm());
        r.wait();
        check_.check(r.done(), "ibarrier not done after wait()");
      } else {
        rbc::Request r = rbc::ibarrier(lc.comm());
        int completed = 0;
        for (int i = 0; i < 5; ++i) completed |= r.test() ? 1 : 0;
        const int report[2] = {lc.rank(), completed};
        MPI_Send(report, 2, MPI_INT, late, 77, lc.reference());
        r.wait();
      }
    }
  }

  Checker& check_;
  int p_;
  int max_layouts_;
  int large_;
  bool progress_ = false;
  int world_rank_ = 0;
  bool sample_ = false;  // fewer layouts
  bool huge_ = false;    // fewer blocks, each in one mode only
  int root_limit_ = 8;
  MPI_Datatype gapped_pair_ = MPI_DATATYPE_NULL;
  MPI_Datatype matrix_ = MPI_DATATYPE_NULL;
  MPI_Op pair_sum_ = MPI_OP_NULL;
  MPI_Op product_ = MPI_OP_NULL;
  std::vector<TypeCase> types_;
};

}  // namespace

// Members of a pair that pass different counts to a blocking broadcast run directly, on its first
// handle and on a split of it: the one expecting more gets rbc::Error MPI_ERR_COUNT, not a buffer
// written in part, and the pair goes on. `pair` stays allocated until the end (a freed value's reuse would give
// the runner's first handle another handle number, whose messages carry envelopes).
void short_broadcast_refused(Checker& check, const rbc::RangeComm& comm, const std::string& where) {
  Context context(check, where);
  std::vector<int> values = {1, 2, 3, 4};
  if (comm.rank() == 0) {
    rbc::bcast(values.data(), 2, MPI_INT, 0, comm);
  } else {
    std::vector<int> got(4, -1);
    int error_class = MPI_SUCCESS;
    try {
      rbc::bcast(got.data(), 4, MPI_INT, 0, comm);
    } catch (const rbc::Error& e) {
      error_class = e.error_class();
    }
    check.equal(error_class, static_cast<int>(MPI_ERR_COUNT), "a broadcast of 2 ints into a receive of 4");
  }
  int value = comm.rank() == 0 ? 7 : 0;
  rbc::bcast(&value, 1, MPI_INT, 0, comm);
  check.equal(value, 7, "the next broadcast on the pair");
}

// The same for a nonblocking broadcast (its state machine checks every receive's size too), and
// an allreduce of 3000 ints on one member and 6000 on the other, whose payloads travel apart from
// their envelopes: each side's error names the mismatch, no payload goes into a receive smaller
// than it (Open MPI 4.1.4 writes a larger single-copy message past the buffer), and no side
// waits for a payload that will not come. Not on the handle: there the allreduce's messages are
// bare, and only MPI can find a message larger than its receive.
void counts_refused(Checker& check, const rbc::RangeComm& comm, const std::string& where, bool bare) {
  Context context(check, where);
  std::vector<int> values = {1, 2, 3, 4};
  int error_class = MPI_SUCCESS;
  {
    rbc::Request failed = rbc::ibcast(values.data(), comm.rank() == 0 ? 2 : 4, MPI_INT, 0, comm);
    try {
      failed.wait();
    } catch (const rbc::Error& e) {
      error_class = e.error_class();
    }
    if (comm.rank() == 1) {
      check.equal(error_class, static_cast<int>(MPI_ERR_COUNT), "an ibcast of 2 ints into 4");
      // The failed request keeps its error: waited or tested again it reports it again, instead
      // of running its later steps and returning as if it had succeeded.
      int again = MPI_SUCCESS;
      try {
        failed.wait();
      } catch (const rbc::Error& e) {
        again = e.error_class();
      }
      check.equal(again, static_cast<int>(MPI_ERR_COUNT), "the failed ibcast waited again");
      again = MPI_SUCCESS;
      try {
        failed.test();
      } catch (const rbc::Error& e) {
        again = e.error_class();
      }
      check.equal(again, static_cast<int>(MPI_ERR_COUNT), "the failed ibcast tested");
      check.check(!failed.done(), "a failed request is not done");
    }
    // Another request on the communicator, waited while the failed one is alive, completes
    // without the other's error.
    int other = comm.rank() == 0 ? 5 : 0;
    rbc::ibcast(&other, 1, MPI_INT, 0, comm).wait();
    check.equal(other, 5, "an ibcast while a failed one is alive");
  }
  if (!bare) {
    const int count = comm.rank() == 0 ? 3000 : 6000;
    std::vector<int> in(static_cast<std::size_t>(count), 1), out(in.size() + 16, -1);
    error_class = MPI_SUCCESS;
    try {
      rbc::allreduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, comm);
    } catch (const rbc::Error& e) {
      error_class = e.error_class();
    }
    check.equal(error_class, static_cast<int>(comm.rank() == 0 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT),
                "an allreduce of 3000 ints against 6000");
    check.equal(out[static_cast<std::size_t>(count)], -1, "nothing written past the receive");
  }
  int value = comm.rank() == 0 ? 9 : 0;
  rbc::bcast(&value, 1, MPI_INT, 0, comm);
  check.equal(value, 9, "the next broadcast on the pair");
}

void short_message_refused(Checker& check, MPI_Comm pair) {
  int size = 0;
  MPI_Comm_size(pair, &size);
  if (size != 2) return;
  MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
  const rbc::RangeComm first = rbc::RangeComm::from_mpi(pair);
  check.equal(rbc::wire_bytes(8, first), 8, "the pair's first handle sends bare");
  short_broadcast_refused(check, first, "the first handle (bare messages)");
  const rbc::RangeComm split = first.split(0, 1);
  check.check(rbc::wire_bytes(8, split) > 8, "a split's messages carry envelopes");
  short_broadcast_refused(check, split, "a split of it (envelopes)");
  counts_refused(check, first, "the first handle (bare messages)", true);
  counts_refused(check, split, "a split of it (envelopes)", false);
}

int main(int argc, char** argv) {
  int max_layouts = 1 << 30, large = 40000;
  bool progress = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--progress") progress = true;
    if (i + 1 == argc) break;
    if (std::string(argv[i]) == "--layouts") max_layouts = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--large") large = std::stoi(argv[i + 1]);
  }
  return janus::testing::run_test(argc, argv, "collectives_test", [&](Checker& check) {
    int p = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    // What rbc::algorithm reports is what the runs above exercise: the size and p thresholds.
    check.equal(rbc::algorithm("allreduce", 512, MPI_DOUBLE, 64), std::string("recursive doubling"), "4 KiB");
    check.equal(rbc::algorithm("allreduce", 513, MPI_DOUBLE, 64),
                std::string("recursive halving + doubling (Rabenseifner)"), "above 4 KiB, 64 ranks");
    check.equal(rbc::algorithm("allreduce", 1023, MPI_DOUBLE, 16), std::string("recursive doubling"), "16 ranks");
    check.equal(rbc::algorithm("allreduce", 1024, MPI_DOUBLE, 16),
                std::string("recursive halving + doubling (Rabenseifner)"), "8 KiB, 16 ranks");
    check.equal(rbc::algorithm("allreduce", 16383, MPI_DOUBLE, 4), std::string("recursive doubling"), "4 ranks");
    check.equal(rbc::algorithm("allreduce", 16384, MPI_DOUBLE, 4),
                std::string("recursive halving + doubling (Rabenseifner)"), "128 KiB, 4 ranks");
    check.equal(rbc::algorithm("reduce", 1023, MPI_DOUBLE, 16), std::string("binomial tree"), "reduce, 16 ranks");
    check.equal(rbc::algorithm("reduce", 1024, MPI_DOUBLE, 16),
                std::string("recursive halving + binomial gather (Rabenseifner)"), "reduce, 8 KiB, 16 ranks");
    check.equal(rbc::algorithm("reduce", 16383, MPI_DOUBLE, 15), std::string("binomial tree"), "reduce, 15 ranks");
    check.equal(rbc::algorithm("reduce", 16384, MPI_DOUBLE, 8),
                std::string("recursive halving + binomial gather (Rabenseifner)"), "reduce, 128 KiB, 8 ranks");
    check.equal(rbc::algorithm("reduce", 1 << 20, MPI_DOUBLE, 2), std::string("binomial tree"), "reduce, 2 ranks");
    check.equal(rbc::algorithm("bcast", 1, MPI_DOUBLE, 16), std::string("latency tree"), "bcast, 8 B, 16 ranks");
    check.equal(rbc::algorithm("bcast", 511, MPI_DOUBLE, 8), std::string("latency tree"), "bcast, 4088 B, 8 ranks");
    check.equal(rbc::algorithm("bcast", 512, MPI_DOUBLE, 8), std::string("binomial tree"), "bcast, 4 KiB, 8 ranks");
    check.equal(rbc::algorithm("bcast", 1, MPI_DOUBLE, 7), std::string("binomial tree"), "bcast, 8 B, 7 ranks");
    check.equal(rbc::algorithm("bcast", 1, MPI_DOUBLE, 17), std::string("latency tree"), "bcast, 8 B, 17 ranks");
    check.equal(rbc::algorithm("barrier", 0, MPI_BYTE, 7, true), std::string("dissemination"), "barrier, 7 ranks, one node");
    check.equal(rbc::algorithm("barrier", 0, MPI_BYTE, 7), std::string("recursive doubling"), "barrier, 7 ranks");
    check.equal(rbc::algorithm("barrier", 0, MPI_BYTE, 8, true), std::string("recursive doubling"), "barrier, 8 ranks, one node");
    check.equal(rbc::algorithm("barrier", 0, MPI_BYTE, 2, true), std::string("recursive doubling"), "barrier, 2 ranks, one node");
    check.equal(rbc::algorithm("bcast", 511, MPI_DOUBLE, 32768), std::string("latency tree"), "bcast, 4088 B, 2^15 ranks");
    check.equal(rbc::algorithm("bcast", 512, MPI_DOUBLE, 100), std::string("binomial tree"), "bcast, 4 KiB, 100 ranks");
    check.equal(rbc::algorithm("bcast", 65535, MPI_DOUBLE, 16), std::string("binomial tree"), "bcast, 16 ranks");
    check.equal(rbc::algorithm("bcast", 65536, MPI_DOUBLE, 16),
                std::string("binomial scatter + recursive doubling allgather"), "bcast, 512 KiB, 16 ranks");
    check.equal(rbc::algorithm("bcast", 65536, MPI_DOUBLE, 12), std::string("binomial scatter + ring allgather"),
                "bcast, 512 KiB, 12 ranks");
    check.equal(rbc::algorithm("bcast", 1 << 20, MPI_DOUBLE, 4), std::string("binomial tree"), "bcast, 4 ranks");
    check.equal(rbc::algorithm("bcast", 1 << 20, MPI_DOUBLE, 32), std::string("binomial tree"), "bcast, 32 ranks");
    check.equal(rbc::algorithm("reduce", 32767, MPI_DOUBLE, 32), std::string("binomial tree"), "reduce, 32 ranks");
    check.equal(rbc::algorithm("reduce", 32768, MPI_DOUBLE, 32),
                std::string("recursive halving + binomial gather (Rabenseifner)"), "reduce, 256 KiB, 32 ranks");
    check.equal(rbc::algorithm("allreduce", 4096, MPI_DOUBLE, 2),
                std::string("recursive halving + doubling (Rabenseifner)"), "32 KiB, 2 ranks");
    check.equal(rbc::algorithm("allreduce", 100, MPI_DOUBLE, 1), std::string("recursive doubling"), "1 rank");
    check.equal(rbc::algorithm("scan", 1 << 20, MPI_DOUBLE, 16), std::string("recursive doubling"), "scan, 16");
    check.equal(rbc::algorithm("scan", 16, MPI_DOUBLE, 1024), std::string("recursive doubling (butterfly)"),
                "scan, 128 B");
    check.equal(rbc::algorithm("exscan", 17, MPI_DOUBLE, 1024), std::string("recursive doubling"), "exscan, 136 B");
    check.equal(rbc::algorithm("scan", 1 << 20, MPI_DOUBLE, 17), std::string("binomial tree (up-down sweep)"),
                "scan, 17");
    check.equal(rbc::algorithm("allgather", 1 << 16, MPI_DOUBLE, 16), std::string("recursive doubling"),
                "allgather, 16 ranks");
    check.equal(rbc::algorithm("allgather", 85, MPI_DOUBLE, 24), std::string("recursive doubling"),
                "allgather, 24 ranks, 16320 B");
    check.equal(rbc::algorithm("allgather", 86, MPI_DOUBLE, 24), std::string("binomial tree gather + broadcast"),
                "allgather, 24 ranks, 16512 B");
    check.equal(rbc::algorithm("allgather", 86, MPI_DOUBLE, 24, true), std::string("halves (ceil(log2 p) rounds)"),
                "allgather, 24 ranks on one node, 16512 B");
    check.equal(rbc::algorithm("allgather", 1, MPI_DOUBLE, 3, true), std::string("halves (ceil(log2 p) rounds)"),
                "allgather, 3 ranks on one node, 24 B");
    check.equal(rbc::algorithm("allgather", 1 << 16, MPI_DOUBLE, 16, true), std::string("recursive doubling"),
                "allgather, 16 ranks on one node");
    check.throws<rbc::Error>([] { rbc::algorithm("alltoall", 1, MPI_DOUBLE, 4); }, "unknown collective", "unknown name");
    int w = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, w / 2, w, &pair);
    {
      Context context(check, "counts that differ on a pair");
      short_message_refused(check, pair);
    }
    Runner(check, p, max_layouts, large, progress).run();
    MPI_Comm_free(&pair);
  });
}
