#include "rbc/collectives.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bcast.hpp"
#include "buffers.hpp"
#include "checks.hpp"
#include "collective.hpp"
#include "cost/charge.hpp"
#include "direct.hpp"
#include "inline_vector.hpp"
#include "overlap.hpp"
#include "rbc/error.hpp"
#include "tree.hpp"

namespace rbc {

namespace {

using detail::Bcast;
using detail::BinomialTree;
using detail::check_apart;
using detail::region;
using detail::Collective;
using detail::InlineVector;
using detail::TypeInfo;
using detail::TypedBuffer;

char* at(void* base, std::int64_t index, MPI_Aint extent) {
  return static_cast<char*>(base) + index * extent;
}

int message_bytes(const char* call, std::int64_t bytes) {
  if (bytes > INT_MAX) {
    throw Error(std::string(call) + ": " + std::to_string(bytes) +
                " bytes in one message exceed the 2^31-1 bytes MPI counts can express");
  }
  return static_cast<int>(bytes);
}

// memcpy that accepts the null buffers of empty parts.
void copy_bytes(void* to, const void* from, std::int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, static_cast<std::size_t>(bytes));
}

// Bytes of `count` elements of `type`.
long long vector_bytes(MPI_Datatype type, int count) { return static_cast<long long>(TypeInfo(type).size) * count; }

// inout = in op inout, element by element.
void reduce_local(const void* in, void* inout, int count, const TypeInfo& info, MPI_Op op) {
  detail::check_mpi(MPI_Reduce_local(in, inout, count, info.type, op), "MPI_Reduce_local");
  // Simulation only: SMPI applies the operator without advancing time.
  cost::charge(cost::Kernel::reduce, static_cast<std::size_t>(count) * static_cast<std::size_t>(info.size));
}

// The running combination `acc` takes the block in `incoming` (from the left of it, or from the
// right) in rank order; the result may end up in either buffer, which then swap.
void absorb(void*& acc, void*& incoming, bool left, bool commute, int count, const TypeInfo& info, MPI_Op op) {
  if (commute || left) {
    reduce_local(incoming, acc, count, info, op);
  } else {
    reduce_local(acc, incoming, count, info, op);
    std::swap(acc, incoming);
  }
}

bool commutative(MPI_Op op) {
  int result = 0;
  detail::check_mpi(MPI_Op_commutative(op, &result), "MPI_Op_commutative");
  return result != 0;
}

// Short vectors, and any vector on up to 16 ranks, go by recursive doubling (one message per
// round) rather than up and down a tree (two messages per level, one after the other). Beyond 16
// ranks (more than one node of the modelled machines) the doubling's distant rounds send whole
// long vectors over links that many ranks share, where the tree sends each vector once per level.
bool doubling(MPI_Datatype type, int count, int p) {
  const int size = TypeInfo(type).size;
  return p <= 16 || static_cast<long long>(size) * count <= detail::kEagerBytes;
}

// Scans and exscans of at most this many bytes go on the butterfly (ScanButterfly), longer ones
// by Hillis and Steele (ScanDoubling) or the tree: simulated supermuc, the butterfly was ahead
// up to 16 doubles at 256 ranks and 64 at 1024, behind from 32 at 256.
constexpr long long kButterflyScanBytes = 128;
enum class ScanAlgorithm { butterfly, doubling, tree };
ScanAlgorithm scan_algorithm(MPI_Datatype type, int count, int p) {
  if (static_cast<long long>(TypeInfo(type).size) * count <= kButterflyScanBytes) return ScanAlgorithm::butterfly;
  if (doubling(type, count, p)) return ScanAlgorithm::doubling;
  return ScanAlgorithm::tree;
}

// Allreduce of long vectors by halving (ReduceHalving), once every participant gets at least
// one element. Where whole vectors by recursive doubling (fewer rounds) stop paying: on two
// ranks from 32 KiB (Open MPI on two cores: at 32 KiB halving took 0.8x the doubling's time, at
// 8 KiB 1.1x); on 8 to 16 ranks from 8 KiB and on 3 to 7 from 128 KiB (Open MPI 4.1.6 on a
// 16-core node, docs/results/node-16c-ab: at 16 ranks, 8-64 KiB, halving took 0.73-0.87x the
// doubling's time; at 4 ranks it was 1.05-1.15x below 128 KiB); on more, above the eager size,
// since the doubling's distant rounds send whole vectors over links that many ranks share.
int pow2_floor(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}
bool halving(MPI_Datatype type, int count, int p) {
  const long long bytes = static_cast<long long>(TypeInfo(type).size) * count;
  if (p < 2 || count < pow2_floor(p)) return false;
  if (p == 2) return bytes >= (32 << 10);
  if (p <= 16) return bytes >= (p >= 8 ? 8 << 10 : 128 << 10);
  return bytes > detail::kEagerBytes;
}

// Reduce (to a root) by halving and a gather of the pieces, rather than the binomial tree: on 16
// ranks from 8 KiB, on 4 to 15 from 128 KiB, on more from 256 KiB. On the 16-core node
// (docs/results/node-16c-ab, medians): on 16 ranks halving took 0.95, 0.91, 0.86, 0.81 and 0.81x
// the tree's time at 8, 16, 32, 64 and 128 KiB; on 4, 8 and 12 ranks the tree was as fast or
// faster below 128 KiB; 512 KiB to 8 MiB on 4-16 ranks took 0.5-0.8x. Simulated on 32-256 ranks
// (supermuc, juqueen) halving took 0.56-0.85x the tree's time from 256 KiB, 0.86-1.08x at
// 128 KiB and 1.07-1.54x at 8-32 KiB. On two ranks the tree's single message wins (Open MPI on
// two cores: halving took 1.2-1.7x from 32 KiB to 8 MiB).
bool reduce_halving(MPI_Datatype type, int count, int p) {
  const long long bytes = static_cast<long long>(TypeInfo(type).size) * count;
  if (p < 4 || count < pow2_floor(p)) return false;
  if (p == 16) return bytes >= (8 << 10);
  return bytes >= (p < 16 ? 128 << 10 : 256 << 10);
}

enum class AllreduceAlgorithm { halving, doubling, tree };
AllreduceAlgorithm allreduce_algorithm(MPI_Datatype type, int count, int p) {
  if (halving(type, count, p)) return AllreduceAlgorithm::halving;
  if (doubling(type, count, p)) return AllreduceAlgorithm::doubling;
  return AllreduceAlgorithm::tree;
}

// Broadcast of long vectors (van de Geijn): the root scatters the vector's p blocks down the
// binomial tree (each member gets its subtree's blocks in one message), then the members
// allgather the blocks: by recursive doubling when p is a power of two, around a ring
// otherwise. Each member receives about 2 m instead of m, but the root sends about 2 m instead
// of the tree's m log2 p, and every level of the tree forwards less. Blocks stay where they
// belong in the buffer, so nothing is copied. From 512 KiB on 8 to 16 ranks: on a 16-core
// node (Open MPI 4.1.6, docs/results/node-16c-ab) at 8, 12 and 16 ranks its time relative to
// Open MPI's fell from 0.57-0.64 (the tree) to 0.45-0.61 at 512 KiB and from 0.49-1.40 to
// 0.41-1.07 from 1 MiB; at 4 ranks it gained nothing (0.65-0.85 against 0.67-0.82). Not
// beyond one node of the modelled machines: there the allgather's far rounds send half the
// vector from every rank of a node over the same link, where the tree sends it once (simulated
// supermuc, 32 and 64 ranks, 1-8 MiB: 3.0-3.3x the tree's time).
bool scatter_bcast(MPI_Datatype type, int count, int p) {
  return p >= 8 && p <= 16 && count >= p && static_cast<long long>(TypeInfo(type).size) * count >= (1LL << 19);
}

class BcastScatter final : public Collective {
 public:
  BcastScatter(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm)
      : Collective(comm, detail::Kind::bcast, root, count),
        buf_(buf),
        count_(count),
        info_(type),
        tree_(comm.size(), root, comm.rank()),
        p_(comm.size()),
        power_of_two_(pow2_floor(p_) == p_) {}

 private:
  static constexpr int kReceive = 0;   // this member's subtree's blocks, from the parent
  static constexpr int kForward = 1;   // each child its own subtree's, largest first
  static constexpr int kAllgather = 2;

  // The first element of block b (relative rank b's).
  int first(int b) const { return static_cast<int>(static_cast<std::int64_t>(b) * count_ / p_); }
  char* block(int b) const { return at(buf_, first(b), info_.extent); }
  int elements(int lo, int hi) const { return first(hi) - first(lo); }
  int v() const { return tree_.relative(); }
  // Member w holds the blocks of [w, held_end(w)) after the scatter: its subtree's.
  int held_end(int w) const { return tree_.subtree_end(w); }

  void step() override {
    if (state_ == kReceive) {
      state_ = kForward;
      if (!tree_.is_root()) {
        receive(block(v()), elements(v(), held_end(v())), info_.type, tree_.absolute(tree_.parent()), detail::kDown);
      }
      return;
    }
    if (state_ == kForward) {
      state_ = kAllgather;
      const auto& children = tree_.children();
      for (auto c = children.rbegin(); c != children.rend(); ++c) {
        send(block(*c), elements(*c, held_end(*c)), info_.type, tree_.absolute(*c), detail::kDown);
      }
      if (!children.empty()) return;
    }
    if (power_of_two_ ? doubling_round() : ring_round()) return;
    finish();
  }

  // Round `bit_`: the member holds the aligned group of `bit_` blocks around its own and swaps
  // it for its partner's, where the partner lacks it (the scatter gave a member its subtree's).
  bool doubling_round() {
    if (bit_ >= p_) return false;
    const int bit = bit_;
    bit_ <<= 1;
    const int partner = v() ^ bit;
    const int mine = v() & ~(bit - 1), theirs = partner & ~(bit - 1);
    const bool i_lack = !(v() <= theirs && theirs + bit <= held_end(v()));
    const bool they_lack = !(partner <= mine && mine + bit <= held_end(partner));
    const int peer = tree_.absolute(partner);
    if (i_lack && they_lack) {
      exchange(block(mine), elements(mine, mine + bit), info_, block(theirs), elements(theirs, theirs + bit), info_,
               peer, detail::kForward);
    } else if (they_lack) {
      send(block(mine), elements(mine, mine + bit), info_.type, peer, detail::kForward);
    } else if (i_lack) {
      receive(block(theirs), elements(theirs, theirs + bit), info_.type, peer, detail::kForward);
    }
    return true;
  }

  // Step s of p - 1: pass block v - s on to the right, take block v - s - 1 from the left, each
  // only where the receiving side does not hold it yet (the root's buffer is never written).
  bool ring_round() {
    if (ring_step_ >= p_ - 1) return false;
    const int s = ring_step_++;
    const int right = (v() + 1) % p_, left = (v() + p_ - 1) % p_;
    const int out = ((v() - s) % p_ + p_) % p_, in = ((v() - s - 1) % p_ + p_) % p_;
    if (!holds(right, out)) send(block(out), elements(out, out + 1), info_.type, tree_.absolute(right), detail::kForward);
    if (!holds(v(), in)) receive(block(in), elements(in, in + 1), info_.type, tree_.absolute(left), detail::kForward);
    return true;
  }
  // Whether the scatter gave member w block b.
  bool holds(int w, int b) const { return w <= b && b < held_end(w); }

  void* buf_;
  int count_;
  TypeInfo info_;
  BinomialTree tree_;
  int p_;
  bool power_of_two_;
  int bit_ = 1;
  int ring_step_ = 0;
};

// Reduce (to a root) and allreduce (to everyone) on a binomial tree. Non-commutative operations
// run on the tree rooted at rank 0, whose subtrees are rank-ordered blocks, and the result is
// forwarded to the root; commutative ones use the tree rooted at the root directly and
// accumulate in place (in the receive buffer wherever it holds the result). Leaves send their
// input as it is.
class Reduce final : public Collective {
 public:
  Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
         bool to_all, const RangeComm& comm)
      : Collective(comm, to_all ? detail::Kind::allreduce : detail::Kind::reduce, to_all ? -1 : root, count),
        input_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
        recvbuf_(recvbuf),
        count_(count),
        info_(type),
        op_(op),
        root_(root),
        to_all_(to_all),
        commutative_(commutative(op)),
        tree_(comm.size(), commutative_ && !to_all ? root : 0, comm.rank()) {
    sends_along_tree();
  }

 private:
  enum State { kReceive, kCombine, kReceiveDown, kForwardDown };

  int parent() const { return tree_.absolute(tree_.parent()); }
  // Whether this rank's receive buffer gets the result.
  bool holds_result() const { return to_all_ || comm().rank() == root_; }

  // Combines the input with the children's parts (in rank order); returns where the result is.
  const void* combine() {
    if (target_ != nullptr) {
      // target_ holds the first child's part, or (in place) the input itself.
      if (input_ != target_) reduce_local(input_, target_, count_, info_, op_);
      for (auto& part : parts_) reduce_local(part.get(), target_, count_, info_, op_);
      return target_;
    }
    if (parts_.empty()) return input_;
    acc_ = TypedBuffer(scratch(), info_, count_);
    detail::copy_elements(input_, acc_.get(), count_, info_);
    for (auto& part : parts_) {
      reduce_local(acc_.get(), part.get(), count_, info_, op_);
      std::swap(acc_, part);
    }
    return acc_.get();
  }

  void step() override {
    switch (state_++) {
      case kReceive: {
        const auto& children = tree_.children();
        std::size_t first = 0;
        if (commutative_ && !children.empty()) {
          // The result is made in the receive buffer where this rank gets it, else in scratch.
          // Unless the input is already there (in place), the first child's part arrives there
          // and the input is combined into it: no copy of the input (a commutative operation
          // takes either order).
          if (holds_result()) {
            target_ = recvbuf_;
          } else {
            acc_ = TypedBuffer(scratch(), info_, count_);
            target_ = acc_.get();
          }
          if (input_ != target_) {
            receive(target_, count_, info_.type, tree_.absolute(children[0]), detail::kUp);
            first = 1;
          }
        }
        parts_.reserve(children.size() - first);
        for (std::size_t i = first; i < children.size(); ++i) {
          parts_.emplace_back(scratch(), info_, count_);
          receive(parts_.back().get(), count_, info_.type, tree_.absolute(children[i]), detail::kUp);
        }
        return;
      }
      case kCombine: {
        const void* result = combine();
        if (!tree_.is_root()) send(result, count_, info_.type, parent(), detail::kUp);
        if (to_all_) {
          if (tree_.is_root()) {
            detail::copy_elements(result, recvbuf_, count_, info_);
            state_ = kForwardDown;
          } else if (result != recvbuf_ && input_ != recvbuf_) {
            receive(recvbuf_, count_, info_.type, parent(), detail::kDown);
            state_ = kForwardDown;
          }
          // Otherwise the receive buffer is still being sent from: receive once that is done.
          return;
        }
        if (tree_.is_root()) {
          if (comm().rank() == root_) {
            detail::copy_elements(result, recvbuf_, count_, info_);
          } else {
            send(result, count_, info_.type, root_, detail::kForward);
          }
        } else if (comm().rank() == root_) {
          receive(recvbuf_, count_, info_.type, tree_.absolute(0), detail::kForward);
        }
        finish();
        return;
      }
      case kReceiveDown:
        receive(recvbuf_, count_, info_.type, parent(), detail::kDown);
        return;
      default: {
        const auto& children = tree_.children();
        for (auto c = children.rbegin(); c != children.rend(); ++c) {
          send(recvbuf_, count_, info_.type, tree_.absolute(*c), detail::kDown);
        }
        finish();
      }
    }
  }

  const void* input_;
  void* recvbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  int root_;
  bool to_all_;
  bool commutative_;
  BinomialTree tree_;
  TypedBuffer acc_;
  void* target_ = nullptr;  // where a commutative operation makes the result
  std::vector<TypedBuffer> parts_;
};

// Recursive doubling on any p, with MPICH's fold for p not a power of two: with q the largest
// power of two <= p and rem = p - q, the ranks below 2 rem pair up (the even one hands its input
// to the odd one), the odd ones take part as rank r / 2 and those from 2 rem on as r - rem; after
// log2 q exchange rounds each odd one hands the result back. Partners' blocks are contiguous, so
// combining can respect rank order.
//
// Spread (for operations whose result does not depend on the order of combining): with nodes of
// 2^b consecutive participants, the b rounds inside the node come first as always, and each
// participant then takes the rounds across nodes starting at the (its place on the node mod
// their number)-th. In rank order all 2^b ranks of a node send each such round to the same
// node, over the same links (simulated juqueen, 1024 ranks: the barrier 10.8 against 7.7 us).
// Partners differ only in bits above b, so both take the same round at the same time.
class Butterfly {
 public:
  Butterfly(int p, int rank, int spread_bits = 0) : rank_(rank), q_(pow2_floor(p)), rem_(p - q_) {
    while ((1 << rounds_) < q_) ++rounds_;
    inside_ = std::min(spread_bits, rounds_);
    if (rounds_ > inside_) offset_ = (virtual_rank() & ((1 << inside_) - 1)) % (rounds_ - inside_);
  }
  // q: how many ranks take part in the exchange rounds.
  int participants() const { return q_; }
  // Hands its input to rank + 1 and waits for the result.
  bool folded_in() const { return folded_in(rank_); }
  bool folded_in(int rank) const { return rank < 2 * rem_ && rank % 2 == 0; }
  // Takes rank - 1's input first and hands it the result at the end.
  bool folds() const { return rank_ < 2 * rem_ && rank_ % 2 == 1; }
  // The partner of the next exchange round, or -1 once all are done.
  int next_partner() {
    if (round_ >= rounds_) return -1;
    int bit = 1 << round_;
    if (offset_ > 0 && round_ >= inside_) {
      bit = 1 << (inside_ + (round_ - inside_ + offset_) % (rounds_ - inside_));
    }
    const int v = virtual_rank() ^ bit;
    ++round_;
    done_ |= bit;
    bit_ = bit;
    return v < rem_ ? 2 * v + 1 : v + rem_;
  }
  // The bits of the rounds done so far: after them, participant v holds the blocks of every
  // u with u & ~done() == v & ~done(). Without spread, done() is 2^k - 1 after k rounds.
  int done() const { return done_; }
  // The bit of the round next_partner last returned.
  int bit() const { return bit_; }
  // Whether next_partner has returned the partner of the last round.
  bool rounds_done() const { return round_ >= rounds_; }
  // How many exchange rounds there are: log2 q.
  int rounds() const { return rounds_; }
  // Whether the rounds go in bit order (no spread for this participant): after k rounds
  // done() is 2^k - 1.
  bool in_order() const { return offset_ == 0; }
  // This rank's place among the q participants.
  int virtual_rank() const { return virtual_rank(rank_); }
  int virtual_rank(int rank) const { return rank < 2 * rem_ ? rank / 2 : rank - rem_; }
  // The ranks that participant v stands for: [first(v), first(v + 1)).
  int first(int v) const { return v < rem_ ? 2 * v : v + rem_; }

 private:
  int rank_;
  int q_;
  int rem_;
  int rounds_ = 0;  // log2 q
  int inside_ = 0;  // rounds inside a node
  int offset_ = 0;  // where this participant starts the rounds across nodes
  int round_ = 0;    // rounds done
  int done_ = 0;
  int bit_ = 0;
};

// Allreduce on the butterfly. The running combination lives in the receive buffer (after one copy
// of the input) except on a folded-in rank, which sends its input and receives the result.
class AllreduceDoubling final : public Collective {
 public:
  AllreduceDoubling(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    const RangeComm& comm)
      : Collective(comm, detail::Kind::allreduce, -1, count),
        recvbuf_(recvbuf),
        count_(count),
        info_(type),
        op_(op),
        commutative_(commutative(op)),
        incoming_(scratch(), info_, count) {
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (fly_.folded_in()) {
      own_ = TypedBuffer(scratch(), info_, count);
      acc_ = own_.get();
    } else {
      acc_ = recvbuf;
    }
    detail::copy_elements(input, acc_, count, info_);
    spare_ = incoming_.get();
  }

 private:
  int me() const { return comm().rank(); }

  // acc = (partner's block, own block) in rank order.
  void absorb(int partner) { rbc::absorb(acc_, spare_, partner < me(), commutative_, count_, info_, op_); }

  void step() override {
    if (state_ == 0) {
      ++state_;
      if (fly_.folded_in()) {
        send(acc_, count_, info_.type, me() + 1, detail::kUp);
        receive(recvbuf_, count_, info_.type, me() + 1, detail::kDown);
        finish();
      } else if (fly_.folds()) {
        receive(spare_, count_, info_.type, me() - 1, detail::kUp);
        partner_ = me() - 1;
      }
      return;
    }
    if (partner_ >= 0) absorb(partner_);
    partner_ = fly_.next_partner();
    if (partner_ >= 0) {
      exchange(acc_, count_, info_, spare_, count_, info_, partner_, detail::kForward);
      return;
    }
    detail::copy_elements(acc_, recvbuf_, count_, info_);
    if (fly_.folds()) send(recvbuf_, count_, info_.type, me() - 1, detail::kDown);
    finish();
  }

  void* recvbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  bool commutative_;
  TypedBuffer incoming_;
  TypedBuffer own_;          // a folded-in rank's input, as sent
  void* acc_ = nullptr;      // the running combination: the receive buffer or a scratch buffer
  void* spare_ = nullptr;    // where the partner's block arrives
  Butterfly fly_{comm().size(), comm().rank(), commutative_ ? detail::CommAccess::node_bits(comm()) : 0};
  int partner_ = -1;
};

// Rabenseifner's reduction on the butterfly's q = 2^k participants: a reduce-scatter by
// recursive halving, then the halving rounds in reverse, so each rank sends and receives about
// 2 m (q-1)/q elements instead of the tree's m log2 p (and combines m (q-1)/q instead of up to
// m log2 p at the root). The vector is cut into q blocks. Halving pairs the nearest partners
// first (distance 1, 2, ..., q/2), so the largest messages stay between neighbouring ranks (in
// a block placement, on one node) and only small pieces cross to distant ranks. After each
// halving round a rank's partial result covers an aligned run of participants, so combining in
// rank order keeps non-commutative operations right.
// Allreduce (root -1): the reverse rounds are an allgather by recursive doubling. Reduce: they
// are a binomial gather towards the participant that stands for the root; in each round the
// rank on the far side of the round's bit sends its segment and is done.
class ReduceHalving final : public Collective {
 public:
  ReduceHalving(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                const RangeComm& comm)
      : Collective(comm, root < 0 ? detail::Kind::allreduce : detail::Kind::reduce, root, count),
        input_(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
        recvbuf_(recvbuf),
        count_(count),
        info_(type),
        op_(op),
        root_(root),
        commutative_(commutative(op)) {
    hi_ = fly_.participants();
    if (fly_.folded_in()) return;
    if (root_ < 0 || me() == root_) {
      work_ = recvbuf;
    } else {
      own_ = TypedBuffer(scratch(), info_, count);
      work_ = own_.get();
    }
    if (input_ != work_) detail::copy_elements(input_, work_, count, info_);
    // The first round's kept half is the largest piece that arrives (blocks differ by at most
    // one element); a folding rank first takes its partner's whole input.
    const int largest = fly_.folds() ? count : std::max(first(hi_ / 2), count - first(hi_ / 2));
    spare_ = TypedBuffer(scratch(), info_, largest);
    if (root_ >= 0) {
      // The participant that ends with the result: the root, or the rank a folded-in root
      // handed its input to.
      const int holder = fly_.folded_in(root_) ? root_ + 1 : root_;
      holder_ = fly_.virtual_rank(holder);
    }
  }

 private:
  static constexpr int kHalve = 1;
  static constexpr int kDouble = 2;
  static constexpr int kFoldedIn = 3;

  int me() const { return comm().rank(); }
  // The first element of block b of q.
  int first(int b) const {
    return static_cast<int>(static_cast<std::int64_t>(b) * count_ / fly_.participants());
  }
  char* element(int index) const { return at(work_, index, info_.extent); }
  int elements(int lo, int hi) const { return first(hi) - first(lo); }

  // This rank's blocks [lo_, hi_) = (partner's part, own part) in rank order.
  void absorb() {
    char* own = element(first(lo_));
    const int n = elements(lo_, hi_);
    if (commutative_ || partner_ < me()) {
      reduce_local(spare_.get(), own, n, info_, op_);
    } else {
      reduce_local(own, spare_.get(), n, info_, op_);
      detail::copy_elements(spare_.get(), own, n, info_);
    }
  }

  void step() override {
    if (state_ == kFoldedIn) {
      // The input may have gone out from the receive buffer (in place), so the result comes
      // in only after that send.
      receive(recvbuf_, count_, info_.type, me() + 1, detail::kDown);
      finish();
      return;
    }
    if (state_ == 0) {
      state_ = kHalve;
      if (fly_.folded_in()) {
        send(input_, count_, info_.type, me() + 1, detail::kUp);
        if (root_ < 0 || me() == root_) {
          state_ = kFoldedIn;
        } else {
          finish();
        }
        return;
      }
      if (fly_.folds()) {
        partner_ = me() - 1;
        receive(spare_.get(), count_, info_.type, partner_, detail::kUp);
        return;
      }
    }
    if (state_ == kHalve) {
      if (partner_ >= 0) absorb();
      partner_ = fly_.next_partner();
      if (partner_ >= 0) {
        partners_[rounds_++] = partner_;
        // Keep the half on this rank's side of the partner, send the other.
        const int mid = (lo_ + hi_) / 2;
        const bool low = me() < partner_;
        const int send_lo = low ? mid : lo_, send_hi = low ? hi_ : mid;
        lo_ = low ? lo_ : mid;
        hi_ = low ? mid : hi_;
        exchange(element(first(send_lo)), elements(send_lo, send_hi), info_, spare_.get(), elements(lo_, hi_), info_,
                 partner_, detail::kForward);
        return;
      }
      state_ = kDouble;
    }
    if (rounds_ > 0) {
      // The halving rounds in reverse: the partner holds the other half of the segment this
      // rank's one was cut from.
      const int partner = partners_[--rounds_];
      const int width = hi_ - lo_;
      const int other_lo = me() < partner ? hi_ : lo_ - width;
      if (root_ < 0) {
        exchange(element(first(lo_)), elements(lo_, hi_), info_, element(first(other_lo)),
                 elements(other_lo, other_lo + width), info_, partner, detail::kCount);
      } else {
        const int bit = fly_.virtual_rank() ^ fly_.virtual_rank(partner);
        if ((fly_.virtual_rank() & bit) != (holder_ & bit)) {
          send(element(first(lo_)), elements(lo_, hi_), info_.type, partner, detail::kCount);
          finish();
          return;
        }
        receive(element(first(other_lo)), elements(other_lo, other_lo + width), info_.type, partner, detail::kCount);
      }
      lo_ = std::min(lo_, other_lo);
      hi_ = lo_ + 2 * width;
      return;
    }
    if (fly_.folds() && (root_ < 0 || me() - 1 == root_)) send(work_, count_, info_.type, me() - 1, detail::kDown);
    finish();
  }

  const void* input_;
  void* recvbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  int root_;  // -1: allreduce
  bool commutative_;
  Butterfly fly_{comm().size(), comm().rank()};
  TypedBuffer own_;      // a reduce's working copy on a rank other than the root
  void* work_ = nullptr;  // where this rank's segment is combined: the receive buffer or own_
  TypedBuffer spare_;    // where the partner's half (or a folded-in rank's input) arrives
  int holder_ = -1;      // reduce: the participant that ends with the result
  int partner_ = -1;
  int lo_ = 0, hi_ = 0;  // this rank's segment, in blocks
  int partners_[32] = {};  // the halving rounds' partners, for the reverse rounds
  int rounds_ = 0;
};

enum class ScanKind { kInclusive, kExclusive, kInclusiveAndTotal };

// Prefix sums on the tree rooted at rank 0. Up: each node combines its own value with its
// children's subtree totals in rank order, keeping the running prefixes. Down: each node gets
// the combination of everything left of its subtree (and, for scan_and_bcast, the total) and
// hands each child everything left of that child's subtree.
class Scan final : public Collective {
 public:
  Scan(const void* sendbuf, void* recvbuf, void* totalbuf, int count, MPI_Datatype type, MPI_Op op,
       ScanKind kind, const RangeComm& comm)
      : Collective(comm,
                   kind == ScanKind::kInclusive   ? detail::Kind::scan
                   : kind == ScanKind::kExclusive ? detail::Kind::exscan
                                                  : detail::Kind::scan_and_bcast,
                   -1, count),
        recvbuf_(recvbuf),
        totalbuf_(totalbuf),
        count_(count),
        info_(type),
        op_(op),
        kind_(kind),
        tree_(comm.size(), 0, comm.rank()) {
    prefixes_.emplace_back(scratch(), info_, count);
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    detail::copy_elements(input, prefixes_[0].get(), count, info_);
  }

 private:
  bool with_total() const { return kind_ == ScanKind::kInclusiveAndTotal; }
  int down_count() const { return with_total() ? 2 * count_ : count_; }
  char* second_half(TypedBuffer& b) const { return at(b.get(), count_, info_.extent); }
  int parent() const { return tree_.absolute(tree_.parent()); }

  void step() override {
    const auto& children = tree_.children();
    switch (state_++) {
      case 0:
        receive_from_children(tree_, info_, count_, parts_);
        return;
      case 1:
        // prefixes_[j] = own op (subtrees of children 0..j-1); the last one is the subtree total.
        for (auto& part : parts_) {
          reduce_local(prefixes_.back().get(), part.get(), count_, info_, op_);
          prefixes_.push_back(std::move(part));
        }
        if (!tree_.is_root()) {
          send(prefixes_.back().get(), count_, info_.type, parent(), detail::kUp);
          left_ = TypedBuffer(scratch(), info_, down_count());
          receive(left_.get(), down_count(), info_.type, parent(), detail::kDown);
        }
        return;
      default:
        deliver();
        for (std::size_t j = children.size(); j-- > 0;) {
          out_.emplace_back(scratch(), info_, down_count());
          TypedBuffer& out = out_.back();
          detail::copy_elements(prefixes_[j].get(), out.get(), count_, info_);
          if (!tree_.is_root()) reduce_local(left_.get(), out.get(), count_, info_, op_);
          if (with_total()) detail::copy_elements(total(), second_half(out), count_, info_);
          send(out.get(), down_count(), info_.type, tree_.absolute(children[j]), detail::kDown);
        }
        finish();
    }
  }

  const void* total() { return tree_.is_root() ? prefixes_.back().get() : second_half(left_); }

  void deliver() {
    if (kind_ == ScanKind::kExclusive) {
      if (!tree_.is_root()) detail::copy_elements(left_.get(), recvbuf_, count_, info_);
      return;
    }
    // Nothing is sent from the receive buffer, so it can take the result directly.
    detail::copy_elements(prefixes_[0].get(), recvbuf_, count_, info_);
    if (!tree_.is_root()) reduce_local(left_.get(), recvbuf_, count_, info_, op_);
    if (with_total()) detail::copy_elements(total(), totalbuf_, count_, info_);
  }

  void* recvbuf_;
  void* totalbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  ScanKind kind_;
  BinomialTree tree_;
  std::vector<TypedBuffer> prefixes_;
  std::vector<TypedBuffer> parts_;
  TypedBuffer left_;
  std::vector<TypedBuffer> out_;
};

// Inclusive scan plus the total on the butterfly (with its fold for p not a power of two): each
// (virtual) rank keeps the combination of its current block and of the part of that block left
// of it; in each round partners swap block combinations, and the one on the right puts what
// arrives in front of both. log2 q + 2 rounds of one message each way, where the tree's up and
// down sweeps take 2 log2 p one after the other. A folded-in even rank gets back (everything left
// of its pair, the total), rank 0 only the total.
//
// Long vectors make copies cost more than the messages (a copy of 512 KiB takes tens of
// microseconds), so the running combination lives in totalbuf and what is left of this rank in
// recvbuf wherever they are free, and the first piece from the left arrives straight in recvbuf.
class ScanTotalDoubling final : public Collective {
 public:
  ScanTotalDoubling(const void* sendbuf, void* recvbuf, void* totalbuf, int count, MPI_Datatype type, MPI_Op op,
                    const RangeComm& comm)
      : Collective(comm, detail::Kind::scan_and_bcast, -1, count),
        recvbuf_(recvbuf),
        totalbuf_(totalbuf),
        count_(count),
        info_(type),
        op_(op),
        commutative_(commutative(op)) {
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    own_ = input;
    if (fly_.folded_in()) {
      left_buf_ = TypedBuffer(scratch(), info_, back_count(me()));
      return;
    }
    spare_buf_ = TypedBuffer(scratch(), info_, count);
    spare_ = spare_buf_.get();
    if (fly_.folds()) {
      // The pair's block, the even rank's input in front, once it arrives.
      own_buf_ = TypedBuffer(scratch(), info_, count);
      detail::copy_elements(input, own_buf_.get(), count, info_);
      own_ = own_buf_.get();
    }
    if (totalbuf != recvbuf && totalbuf != input) {
      acc_ = totalbuf;
    } else {
      acc_buf_ = TypedBuffer(scratch(), info_, count);
      acc_ = acc_buf_.get();
    }
    if (fly_.folds()) {
      // Sent back as (left of the pair, total) in one message.
      left_buf_ = TypedBuffer(scratch(), info_, 2 * count);
      left_ = left_buf_.get();
    } else if (own_ != recvbuf && acc_ != recvbuf) {
      left_ = recvbuf;
    } else {
      left_buf_ = TypedBuffer(scratch(), info_, count);
      left_ = left_buf_.get();
    }
  }

 private:
  int me() const { return comm().rank(); }
  char* second_half(TypedBuffer& b) const { return at(b.get(), count_, info_.extent); }
  // A folded-in rank's message back: the total, preceded by what is left of its pair unless
  // the pair is the leftmost.
  int back_count(int even_rank) const { return even_rank == 0 ? count_ : 2 * count_; }

  void step() override {
    if (state_ == 0) {
      ++state_;
      if (fly_.folded_in()) {
        send(own_, count_, info_.type, me() + 1, detail::kUp);
        receive(left_buf_.get(), back_count(me()), info_.type, me() + 1, detail::kDown);
        state_ = kFoldedIn;
        return;
      }
      if (fly_.folds()) {
        receive(spare_, count_, info_.type, me() - 1, detail::kUp);
        fold_pending_ = true;
        return;
      }
      detail::copy_elements(own_, acc_, count_, info_);
    }
    if (state_ == kFoldedIn) {
      // left_buf_ holds (left of the pair, total), or the total alone on rank 0.
      detail::copy_elements(own_, recvbuf_, count_, info_);
      if (me() > 0) {
        reduce_local(left_buf_.get(), recvbuf_, count_, info_, op_);
        detail::copy_elements(second_half(left_buf_), totalbuf_, count_, info_);
      } else {
        detail::copy_elements(left_buf_.get(), totalbuf_, count_, info_);
      }
      finish();
      return;
    }
    if (fold_pending_) {
      fold_pending_ = false;
      reduce_local(spare_, own_buf_.get(), count_, info_, op_);
      detail::copy_elements(own_, acc_, count_, info_);
    } else if (partner_ >= 0) {
      absorb();
    }
    partner_ = fly_.next_partner();
    if (partner_ >= 0) {
      send(acc_, count_, info_.type, partner_, detail::kForward);
      incoming_ = partner_ < me() && !has_left_ ? left_ : spare_;
      receive(incoming_, count_, info_.type, partner_, detail::kForward);
      return;
    }
    deliver_prefix();
    detail::copy_elements(acc_, totalbuf_, count_, info_);
    if (fly_.folds()) {
      const int even = me() - 1;
      if (even == 0) {
        send(totalbuf_, count_, info_.type, even, detail::kDown);
      } else {
        // Everything left of the pair is in left_ (the leftmost pair has nothing on its left).
        detail::copy_elements(totalbuf_, second_half(left_buf_), count_, info_);
        send(left_buf_.get(), 2 * count_, info_.type, even, detail::kDown);
      }
    }
    finish();
  }

  // What arrived from partner_ joins the block; from the left, it also joins what is left of
  // this rank (the first such piece arrived where that is kept).
  void absorb() {
    const int partner = partner_;
    partner_ = -1;
    if (partner < me()) {
      reduce_local(incoming_, acc_, count_, info_, op_);
      if (incoming_ != left_) reduce_local(incoming_, left_, count_, info_, op_);
      has_left_ = true;
    } else if (commutative_) {
      reduce_local(incoming_, acc_, count_, info_, op_);
    } else {
      reduce_local(acc_, incoming_, count_, info_, op_);
      std::swap(acc_, spare_);
    }
  }

  // recvbuf = (what is left of this rank) op (its block).
  void deliver_prefix() {
    if (!has_left_ || left_ != recvbuf_) {
      detail::copy_elements(own_, recvbuf_, count_, info_);
      if (has_left_) reduce_local(left_, recvbuf_, count_, info_, op_);
    } else if (commutative_) {
      reduce_local(own_, recvbuf_, count_, info_, op_);
    } else {
      detail::copy_elements(own_, spare_, count_, info_);
      reduce_local(recvbuf_, spare_, count_, info_, op_);
      detail::copy_elements(spare_, recvbuf_, count_, info_);
    }
  }

  static constexpr int kFoldedIn = 100;
  void* recvbuf_;
  void* totalbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  bool commutative_;
  const void* own_ = nullptr;  // this (virtual) rank's block: its input, or the folded pair's
  void* acc_ = nullptr;        // the current block's combination: totalbuf where it is free
  void* left_ = nullptr;       // what is left of this rank in that block: recvbuf where it is free
  void* spare_ = nullptr;      // where a partner's block arrives (swaps with acc_)
  void* incoming_ = nullptr;
  TypedBuffer own_buf_;
  TypedBuffer acc_buf_;
  TypedBuffer left_buf_;
  TypedBuffer spare_buf_;
  bool has_left_ = false;
  bool fold_pending_ = false;
  Butterfly fly_{comm().size(), comm().rank()};
  int partner_ = -1;
};

// Inclusive and exclusive scans of vectors up to kButterflyScanBytes by recursive doubling on
// the butterfly (MPICH's scheme): in round k rank r and partner r ^ 2^k swap the combinations of
// their aligned blocks of 2^k ranks, and a block from the left also goes in front of r's result.
// A partner past p is skipped: its block holds no rank that r or anyone it sends to later needs,
// so any p works without a fold, in ceil(log2 p) rounds. The left member of a pair gets the right
// one's block only if it has rounds to come (on two ranks: one message). The partners are the
// nearest first (on one node in a block placement), where Hillis and Steele's r + 2^k cross node
// and switch boundaries in every round (simulated supermuc, one double: 16.4 against 25.9 us at
// 1024 ranks, 7.1 against 9.5 at 64). Most ranks send in every round, though: from 32 doubles at
// 256 ranks the shared links make Hillis and Steele's fewer messages the faster.
// Whether `rank` of p has a partner in a round of the scan's butterfly from `mask` on: then it
// needs its block's combination.
bool butterfly_sends_from(int rank, int mask, int p) {
  for (; mask < p; mask *= 2) {
    if ((rank ^ mask) < p) return true;
  }
  return false;
}

class ScanButterfly final : public Collective {
 public:
  ScanButterfly(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, bool exclusive,
                const RangeComm& comm)
      : Collective(comm, exclusive ? detail::Kind::exscan : detail::Kind::scan, -1, count),
        recvbuf_(recvbuf),
        count_(count),
        info_(type),
        op_(op),
        commutative_(commutative(op)),
        have_result_(!exclusive) {
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    partial_ = input;
    // The result grows in recvbuf, so an input there needs a copy of its own for the block.
    if (input == recvbuf && comm.size() > 1) writable_partial();
    if (!exclusive && input != recvbuf) detail::copy_elements(input, recvbuf, count, info_);
  }

 private:
  bool sends_from(int rank, int mask) const { return butterfly_sends_from(rank, mask, comm().size()); }

  // Two scratch buffers, taken when first needed: the block's combination and what arrives.
  struct Slot {
    TypedBuffer buffer;
    bool taken = false;
  };
  void* take(Slot& slot) {
    if (!slot.taken) {
      slot.buffer = TypedBuffer(scratch(), info_, count_);
      slot.taken = true;
    }
    return slot.buffer.get();
  }
  static bool holds(Slot& slot, const void* p) { return slot.taken && slot.buffer.get() == p; }

  // The block's combination in a buffer of this operation's, not the one a block is arriving in
  // (the input is never written).
  void* writable_partial() {
    if (holds(a_, partial_) || holds(b_, partial_)) return const_cast<void*>(partial_);
    void* into = holds(a_, incoming_) ? take(b_) : take(a_);
    detail::copy_elements(partial_, into, count_, info_);
    partial_ = into;
    return into;
  }

  // A buffer of this operation's that does not hold the block's combination.
  void* spare() { return holds(a_, partial_) ? take(b_) : take(a_); }

  void absorb() {
    const bool later = sends_from(comm().rank(), mask_);
    if (partner_ < comm().rank()) {
      // The block on the left: in front of the result and of the block's combination.
      if (!direct_) reduce_local(incoming_, recvbuf_, count_, info_, op_);
      have_result_ = true;
      if (later) reduce_local(direct_ ? recvbuf_ : incoming_, writable_partial(), count_, info_, op_);
    } else if (commutative_) {
      reduce_local(incoming_, writable_partial(), count_, info_, op_);
    } else {
      // The block on the right: behind the block's combination, which moves to where it arrived.
      reduce_local(partial_, incoming_, count_, info_, op_);
      partial_ = incoming_;
    }
  }

  void step() override {
    if (receiving_) absorb();
    receiving_ = false;
    incoming_ = nullptr;
    const int me = comm().rank();
    while (mask_ < comm().size()) {
      partner_ = me ^ mask_;
      mask_ *= 2;
      if (partner_ >= comm().size()) continue;
      // Only a left member with rounds to come needs the right one's block.
      const int left = std::min(me, partner_);
      const bool left_needs = sends_from(left, mask_);
      if (me < partner_) {
        send(partial_, count_, info_.type, partner_, detail::kUp);
        if (!left_needs) continue;
        incoming_ = spare();
        direct_ = false;
      } else {
        if (left_needs) send(partial_, count_, info_.type, partner_, detail::kUp);
        // An exclusive scan's first block from the left is its result so far: straight into recvbuf.
        direct_ = !have_result_;
        incoming_ = direct_ ? recvbuf_ : spare();
      }
      receive(incoming_, count_, info_.type, partner_, detail::kUp);
      receiving_ = true;
      return;
    }
    finish();
  }

  void* recvbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  bool commutative_;
  bool have_result_;          // recvbuf holds a result (an exclusive scan's only once a block came)
  bool receiving_ = false;    // a block is on its way into incoming_
  bool direct_ = false;       // it arrives in recvbuf
  Slot a_;
  Slot b_;
  const void* partial_;       // the combination of this rank's aligned block so far
  void* incoming_ = nullptr;  // where the partner's block arrives
  int mask_ = 1;
  int partner_ = -1;
};

// Inclusive and exclusive scans of short vectors above kButterflyScanBytes by recursive doubling
// (Hillis and Steele): in round k, rank r sends what it has combined so far (ranks r - 2^k + 1 ..
// r) to r + 2^k and puts what r - 2^k sends in front of it. ceil(log2 p) rounds of one message
// each way; the last 2^k ranks send nothing in round k, so fewer bytes cross shared links than
// on the butterfly, whose every rank sends in every round.
class ScanDoubling final : public Collective {
 public:
  ScanDoubling(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, bool exclusive,
               const RangeComm& comm)
      : Collective(comm, exclusive ? detail::Kind::exscan : detail::Kind::scan, -1, count),
        recvbuf_(recvbuf),
        count_(count),
        info_(type),
        op_(op),
        exclusive_(exclusive) {
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (!exclusive) {
      // The running combination lives in the receive buffer.
      detail::copy_elements(input, recvbuf, count, info_);
      partial_ = recvbuf;
    } else if (input == recvbuf) {
      // The receive buffer takes what arrives from the left; keep the input apart.
      own_ = TypedBuffer(scratch(), info_, count);
      detail::copy_elements(input, own_.get(), count, info_);
      partial_ = own_.get();
    } else {
      partial_ = input;
    }
  }

 private:
  // Whether this rank sends again in a later round (then it needs its running combination).
  bool sends_later() const { return comm().rank() + distance_ < comm().size(); }

  void step() override {
    const int me = comm().rank();
    if (received_) {
      received_ = false;
      if (!exclusive_) {
        reduce_local(incoming_.get(), recvbuf_, count_, info_, op_);
      } else {
        // recvbuf = (everything left of this rank so far); the first block arrived there directly.
        const void* arrived = rounds_received_ == 1 ? recvbuf_ : incoming_.get();
        if (rounds_received_ > 1) reduce_local(arrived, recvbuf_, count_, info_, op_);
        if (sends_later()) {
          if (partial_ != combined_.get()) {
            combined_ = TypedBuffer(scratch(), info_, count_);
            detail::copy_elements(partial_, combined_.get(), count_, info_);
            partial_ = combined_.get();
          }
          reduce_local(arrived, combined_.get(), count_, info_, op_);
        }
      }
    }
    if (distance_ < comm().size()) {
      if (me + distance_ < comm().size()) send(partial_, count_, info_.type, me + distance_, detail::kUp);
      if (me - distance_ >= 0) {
        void* into = recvbuf_;
        if (!(exclusive_ && rounds_received_ == 0)) {
          if (incoming_.get() == nullptr) incoming_ = TypedBuffer(scratch(), info_, count_);
          into = incoming_.get();
        }
        receive(into, count_, info_.type, me - distance_, detail::kUp);
        received_ = true;
        ++rounds_received_;
      }
      distance_ *= 2;
      return;
    }
    finish();
  }

  void* recvbuf_;
  int count_;
  TypeInfo info_;
  MPI_Op op_;
  bool exclusive_;
  const void* partial_ = nullptr;  // this rank's running combination (ranks r - 2^k + 1 .. r)
  TypedBuffer own_;
  TypedBuffer combined_;
  TypedBuffer incoming_;
  int rounds_received_ = 0;
  int distance_ = 1;
  bool received_ = false;
};

// Gather family. Data travels packed (MPI_Pack layout, i.e. type size bytes per element); each
// subtree's contributions form one contiguous block in relative rank order.
enum class Layout {
  kEqual,       // every rank contributes recvcount elements (gather, allgather)
  kRootCounts,  // counts known at the root only (gatherv): subtree sizes travel up first
  kAllCounts,   // counts known everywhere (allgatherv)
};

// Where each rank's part lies in a gather's receive buffer: `recvcount` elements at
// rank * recvcount (counts == nullptr), or counts[rank] at displs[rank]. Only meaningful where the
// receive arguments are significant.
struct Slots {
  int recvcount;
  const int* counts;
  const int* displs;
  MPI_Aint extent;

  int count(int rank) const { return counts == nullptr ? recvcount : counts[rank]; }
  std::int64_t displ(int rank) const {
    return counts == nullptr ? static_cast<std::int64_t>(rank) * recvcount : displs[rank];
  }
  void* at_rank(void* recvbuf, int rank) const { return at(recvbuf, displ(rank), extent); }
};

// A receiving rank's own part must fill its slot exactly.
void check_own_part(const char* call, int me, std::int64_t own_bytes, std::int64_t slot_bytes) {
  if (own_bytes != slot_bytes) {
    throw Error(std::string(call) + ": rank " + std::to_string(me) + " sends " + std::to_string(own_bytes) +
                " bytes but its receive slot holds " + std::to_string(slot_bytes));
  }
}

class Gather final : public Collective {
 public:
  // to_all: the assembled block is broadcast back down and unpacked everywhere (allgather[v]).
  Gather(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
         int recvcount, const int* counts, const int* displs, MPI_Datatype recvtype, int root,
         Layout layout, bool to_all, const RangeComm& comm)
      : Collective(comm, to_all ? detail::Kind::allgather : detail::Kind::gather, to_all ? -1 : root, -1),
        call_(call),
        recvbuf_(recvbuf),
        recv_(recvtype),
        slots_{recvcount, counts, displs, recv_.extent},
        send_(sendbuf == MPI_IN_PLACE ? recvtype : sendtype),
        layout_(layout),
        to_all_(to_all),
        tree_(comm.size(), root, comm.rank()),
        in_place_(sendbuf == MPI_IN_PLACE) {
    const int me = comm.rank();
    const int p = comm.size();
    const bool receives = to_all || me == root;
    own_count_ = in_place_ ? slots_.count(me) : sendcount;
    own_bytes_ = static_cast<std::int64_t>(own_count_) * send_.size;
    if (receives) check_own_part(call, me, own_bytes_, static_cast<std::int64_t>(slots_.count(me)) * recv_.size);
    if (layout_ != Layout::kRootCounts) {
      offsets_.assign(static_cast<std::size_t>(p) + 1, 0);
      for (int j = 0; j < p; ++j) {
        const std::int64_t bytes =
            layout_ == Layout::kEqual ? own_bytes_
                                      : static_cast<std::int64_t>(slots_.count(tree_.absolute(j))) * recv_.size;
        offsets_[j + 1] = offsets_[j] + bytes;
      }
    }
    own_ = in_place_ ? slots_.at_rank(recvbuf, me) : sendbuf;
    direct_ = receives && assembles_in_place(p);
    sends_along_tree();
  }

 private:
  int parent() const { return tree_.absolute(tree_.parent()); }
  int v() const { return tree_.relative(); }

  // Whether this rank only sends its own contiguous part: then it needs no block of its own.
  bool sends_own_buffer() const {
    return !to_all_ && !tree_.is_root() && tree_.children().empty() && send_.contiguous();
  }

  // Whether the receive buffer has exactly the layout of the assembled block (rank order, no
  // gaps), so that the block can be assembled there and nothing needs unpacking.
  bool assembles_in_place(int p) const {
    if (layout_ == Layout::kRootCounts || tree_.absolute(0) != 0 || !recv_.contiguous()) return false;
    for (int j = 0; j < p; ++j) {
      if (slots_.displ(j) * recv_.size != offsets_[j]) return false;
    }
    return true;
  }

  void step() override {
    const auto& children = tree_.children();
    switch (state_++) {
      case 0:
        if (layout_ == Layout::kRootCounts) {
          child_bytes_.assign(children.size(), 0);
          for (std::size_t i = 0; i < children.size(); ++i) {
            receive(&child_bytes_[i], 1, MPI_INT64_T, tree_.absolute(children[i]), detail::kCount);
          }
        }
        return;
      case 1: {
        if (layout_ != Layout::kRootCounts) {
          for (int c : children) child_bytes_.push_back(offsets_[tree_.subtree_end(c)] - offsets_[c]);
        }
        subtree_bytes_ = own_bytes_;
        for (auto b : child_bytes_) subtree_bytes_ += b;
        if (layout_ == Layout::kRootCounts && !tree_.is_root()) send(&subtree_bytes_, 1, MPI_INT64_T, parent(), detail::kCount);
        block_bytes_ = to_all_ ? offsets_.back() : subtree_bytes_;
        const std::int64_t base = to_all_ ? offsets_[v()] : 0;
        if (sends_own_buffer()) {
          // A leaf that receives nothing sends its contribution from where it is.
          block_ = static_cast<char*>(const_cast<void*>(own_));
          return;
        }
        if (direct_) {
          block_ = static_cast<char*>(recvbuf_);
        } else {
          storage_ = TypedBuffer(scratch(), TypeInfo(MPI_BYTE), message_bytes(call_, block_bytes_));
          block_ = static_cast<char*>(storage_.get());
        }
        if (!(direct_ && in_place_)) detail::pack_elements(own_, own_count_, send_, block_ + base);
        std::int64_t offset = base + own_bytes_;
        for (std::size_t i = 0; i < children.size(); ++i) {
          receive(block_ + offset, message_bytes(call_, child_bytes_[i]), MPI_BYTE,
                  tree_.absolute(children[i]), detail::kUp);
          offset += child_bytes_[i];
        }
        return;
      }
      case 2:
        if (!tree_.is_root()) {
          const std::int64_t base = to_all_ ? offsets_[v()] : 0;
          send(block_ + base, message_bytes(call_, subtree_bytes_), MPI_BYTE, parent(), detail::kUp);
          if (to_all_) receive(block_, message_bytes(call_, block_bytes_), MPI_BYTE, parent(), detail::kDown);
        }
        if (!to_all_) {
          if (tree_.is_root()) unpack();
          finish();
        }
        return;
      default:
        for (auto c = children.rbegin(); c != children.rend(); ++c) {
          send(block_, message_bytes(call_, block_bytes_), MPI_BYTE, tree_.absolute(*c), detail::kDown);
        }
        unpack();
        finish();
    }
  }

  void unpack() {
    if (direct_) return;
    const int p = comm().size();
    std::int64_t offset = 0;
    for (int j = 0; j < p; ++j) {
      const int rank = tree_.absolute(j);
      const std::int64_t bytes = static_cast<std::int64_t>(slots_.count(rank)) * recv_.size;
      if (offset + bytes > block_bytes_) break;
      if (!(in_place_ && rank == comm().rank())) {
        detail::unpack_elements(block_ + offset, slots_.count(rank), recv_, slots_.at_rank(recvbuf_, rank));
      }
      offset += bytes;
    }
    if (offset != block_bytes_) {
      throw Error(std::string(call_) + ": received " + std::to_string(block_bytes_) +
                  " bytes in all but the receive counts describe " + std::to_string(offset));
    }
  }

  const char* call_;
  void* recvbuf_;
  TypeInfo recv_;
  Slots slots_;
  TypeInfo send_;
  Layout layout_;
  bool to_all_;
  BinomialTree tree_;
  bool in_place_;
  bool direct_ = false;
  const void* own_ = nullptr;
  int own_count_ = 0;
  std::int64_t own_bytes_ = 0;
  std::int64_t subtree_bytes_ = 0;
  std::int64_t block_bytes_ = 0;
  // Inline up to 16 ranks (and children: a binomial tree over 2^16 ranks has 16).
  InlineVector<std::int64_t, 17> offsets_;
  InlineVector<std::int64_t, 16> child_bytes_;
  TypedBuffer storage_;
  char* block_ = nullptr;
};

// The levels of the halves' schedule for one rank (allgatherm's, and allgather's on one node),
// innermost first: [0, p) splits into halves [lo, lo + ceil(m/2)) and the rest, recursively, and
// each level joins two halves. Partners i and ceil(m/2) + i swap runs; for m odd the lower half's
// last rank has none, and the upper half's last rank sends its run to it as well. Every rank
// receives one run per level: ceil(log2 p) rounds on the first rank, floor(log2 p) on the last,
// and on p a power of two the butterfly's rounds in bit order. Against MPICH's fold (a pair hands
// its input over first and gets the whole result back last) that is two rounds fewer where p is
// not a power of two, and no round that carries everything (simulated supermuc, 12 ranks, 3072
// keys: docs/benchmarks.md, "A merging allgather by halves").
struct HalvesLevel {
  int partner;  // exchanges runs with this rank; -1 for the lone rank
  int from;     // receives its run from this rank (the partner, or the upper half's last rank)
  int extra;    // also sends its run to this rank (the lone rank), or -1
  int first, last;              // this rank's half: the ranks it holds before the level
  int other_first, other_last;  // the other half: the ranks it receives
};

// A rank's levels in place (p < 2^31: at most 31), so that a call allocates nothing for them.
struct HalvesLevels {
  std::array<HalvesLevel, 31> level{};
  int count = 0;
  void push_back(const HalvesLevel& next) { level[static_cast<std::size_t>(count++)] = next; }
};

inline HalvesLevels halves_levels(int p, int rank) {
  HalvesLevels levels;
  int lo = 0, m = p;
  while (m > 1) {
    const int a = (m + 1) / 2, b = m / 2;
    const int i = rank - lo;
    if (i < a) {
      if (i < b) {
        levels.push_back({lo + a + i, lo + a + i, -1, lo, lo + a, lo + a, lo + m});
      } else {
        levels.push_back({-1, lo + a + b - 1, -1, lo, lo + a, lo + a, lo + m});
      }
      m = a;
    } else {
      const int j = i - a;
      levels.push_back({lo + j, lo + j, a > b && j == b - 1 ? lo + a - 1 : -1, lo + a, lo + m, lo, lo + a});
      lo += a;
      m = b;
    }
  }
  std::reverse(levels.level.begin(), levels.level.begin() + levels.count);
  return levels;
}

// Allgather and allgatherv assembled in one block of the parts in rank order, in the receive
// buffer where its layout allows: what the schedules below share. A schedule sends and receives
// ranges of ranks' parts, each one range of the block.
class AllgatherBlock : public Collective {
 protected:
  AllgatherBlock(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, const int* counts, const int* displs, MPI_Datatype recvtype, const RangeComm& comm)
      : Collective(comm, detail::Kind::allgather, -1, -1),
        call_(call),
        recvbuf_(recvbuf),
        recv_(recvtype),
        slots_{recvcount, counts, displs, recv_.extent} {
    const int p = comm.size();
    const int me = comm.rank();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const TypeInfo send(in_place ? recvtype : sendtype);
    const int own_count = in_place ? slots_.count(me) : sendcount;
    check_own_part(call, me, static_cast<std::int64_t>(own_count) * send.size,
                   static_cast<std::int64_t>(slots_.count(me)) * recv_.size);
    offsets_.assign(static_cast<std::size_t>(p) + 1, 0);
    bool direct = recv_.contiguous();
    for (int j = 0; j < p; ++j) {
      offsets_[j + 1] = offsets_[j] + static_cast<std::int64_t>(slots_.count(j)) * recv_.size;
      direct = direct && slots_.displ(j) * recv_.size == offsets_[j];
    }
    direct_ = direct;
    if (direct_) {
      block_ = static_cast<char*>(recvbuf);
    } else {
      storage_ = TypedBuffer(scratch(), TypeInfo(MPI_BYTE), message_bytes(call, offsets_.back()));
      block_ = static_cast<char*>(storage_.get());
    }
    if (!(direct_ && in_place)) {
      own_ = in_place ? slots_.at_rank(recvbuf, me) : sendbuf;
      own_count_ = own_count;
      send_ = send;
      // The first round sends only this rank's part: straight from the send buffer where it is
      // contiguous, copied into the block while the exchange runs; beyond the eager size once the
      // round is done, since a long message moves only while both ranks are in MPI (Open MPI
      // 4.1.4, two ranks, 4 MiB each: 0.84x the time of the copy during the round).
      if (in_place || !send.contiguous()) pack_own();
      pack_after_round_ = static_cast<std::int64_t>(own_count) * send.size > detail::kEagerBytes;
    }
  }

  void pack_own() {
    detail::pack_elements(own_, own_count_, send_, block_ + offsets_[comm().rank()]);
    own_ = nullptr;
  }
  // Copy this rank's part into the block where it is still in the send buffer: before any round
  // but the first, which sends only this part, and right after the first round is posted unless
  // the part is long (pack_after_round_).
  void pack_own_before_round(bool first_round) {
    if (own_ != nullptr && !first_round) pack_own();
  }
  void pack_own_after_post() {
    if (own_ != nullptr && !pack_after_round_) pack_own();
  }

  // Where the parts of ranks [first, last) go out from: straight from the send buffer while only
  // this rank's part is due and not yet packed, else the block.
  const char* ranks_out(int first, int last) const {
    return own_ != nullptr && last - first == 1 ? static_cast<const char*>(own_) : block_ + offsets_[first];
  }
  int ranks_bytes(int first, int last) const { return message_bytes(call_, offsets_[last] - offsets_[first]); }
  // Sends the parts of ranks [first, last) to `partner`.
  void send_ranks(int first, int last, int partner, detail::Phase phase) {
    send(ranks_out(first, last), ranks_bytes(first, last), MPI_BYTE, partner, phase);
  }
  // Receives the parts of ranks [first, last) from `partner` into their place in the block.
  void receive_ranks(int first, int last, int partner, detail::Phase phase) {
    receive(block_ + offsets_[first], ranks_bytes(first, last), MPI_BYTE, partner, phase);
  }
  // Sends the parts of ranks [first, last) to `partner` and receives those of [from, to) from it.
  void exchange_ranks(int first, int last, int from, int to, int partner, detail::Phase phase) {
    exchange(ranks_out(first, last), ranks_bytes(first, last), bytes_, block_ + offsets_[from], ranks_bytes(from, to),
             bytes_, partner, phase);
  }
  // The whole block is here: into the receive buffer where it was assembled elsewhere.
  void complete() {
    if (own_ != nullptr) pack_own();
    if (!direct_) {
      for (int j = 0; j < comm().size(); ++j) {
        detail::unpack_elements(block_ + offsets_[j], slots_.count(j), recv_, slots_.at_rank(recvbuf_, j));
      }
    }
    finish();
  }

  const char* call_;
  void* recvbuf_;
  TypeInfo recv_;
  Slots slots_;
  bool direct_ = false;
  InlineVector<std::int64_t, 17> offsets_;  // inline up to 16 ranks
  TypedBuffer storage_;
  char* block_ = nullptr;
  const void* own_ = nullptr;  // this rank's part until it is copied into the block
  int own_count_ = 0;
  TypeInfo send_{MPI_BYTE};
  bool pack_after_round_ = false;  // own_ is copied once the first round is done, not during it
  TypeInfo bytes_{MPI_BYTE};  // what the rounds' messages are counted in
};

// Allgather and allgatherv by recursive doubling on the butterfly: in round k, participant v and
// v xor 2^k swap the blocks of their 2^k-aligned groups, so after log2 q rounds of one message
// each way every participant has everything (a tree needs 2 log2 p rounds: it gathers up, then
// broadcasts the whole block down). For p not a power of two the butterfly's fold hands a
// folded-in rank's part to its odd neighbour first and the whole block back at the end; the
// ranks a participant stands for are contiguous, so every block is one range of ranks.
// The ranks two partners hold before a butterfly round where each holds one run of `run`
// consecutive participants (the rounds `done` so far): [first, last) participant v's, [from, to)
// its partner's across `bit`.
struct RoundRanks {
  int first, last, from, to;
};
RoundRanks round_ranks(const Butterfly& fly, int v, int done, int bit, int run) {
  const int mine = v & ~done, theirs = (v ^ bit) & ~done;
  return {fly.first(mine), fly.first(mine + run), fly.first(theirs), fly.first(theirs + run)};
}

class AllgatherDoubling final : public AllgatherBlock {
 public:
  AllgatherDoubling(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, const int* counts, const int* displs, MPI_Datatype recvtype, const RangeComm& comm)
      : AllgatherBlock(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, counts, displs, recvtype, comm) {
    // Spread over a node's ranks while the whole block is short: longer ones would pay a copy
    // of the runs each way per round.
    if (offsets_.back() <= kSpreadBytes) fly_ = Butterfly(comm.size(), comm.rank(), detail::CommAccess::node_bits(comm));
  }

  // The whole block's bytes up to which the rounds spread over a node's ranks.
  static constexpr std::int64_t kSpreadBytes = 16384;

 private:
  void step() override {
    const int me = comm().rank();
    const int p = comm().size();
    if (state_ == 0) {
      ++state_;
      if (fly_.folded_in()) {
        // Its part goes to the odd neighbour, which hands the whole block back once this send
        // has completed (the block may cover the send buffer).
        send_ranks(me, me + 1, me + 1, detail::kUp);
        state_ = kFoldedIn;
        return;
      }
      if (fly_.folds()) {
        if (own_ != nullptr) pack_own();
        receive_ranks(me - 1, me, me - 1, detail::kUp);
        return;
      }
    }
    if (state_ == kFoldedIn) {
      receive_ranks(0, p, me + 1, detail::kDown);
      state_ = kUnpack;
      return;
    }
    if (state_ != kUnpack) {
      unpack_incoming();
      const int done = fly_.done();
      const int partner = fly_.next_partner();
      if (partner >= 0) {
        pack_own_before_round(done == 0);
        round_with(fly_.virtual_rank(), done, fly_.bit(), partner);
        pack_own_after_post();
        return;
      }
      if (own_ != nullptr) pack_own();
      if (fly_.folds()) send_ranks(0, p, me - 1, detail::kDown);
    }
    complete();
  }

  // How many consecutive participants a run holds after the rounds `done`: 2^(its trailing ones).
  static int run_length(int done) {
    int run = 1;
    while (done & run) run *= 2;
    return run;
  }
  // The blocks of the participants u with u & ~done == v & ~done, as runs of consecutive
  // participants (run_length each), in rank order: f(first rank, end rank).
  template <typename F>
  void for_runs(int v, int done, F&& f) const {
    const int run = run_length(done);
    const int high = done & ~(run - 1);
    const int base = v & ~done;
    for (int s = 0;; s = (s - high) & high) {
      f(fly_.first(base | s), fly_.first((base | s) + run));
      if (s == high) break;
    }
  }
  std::int64_t run_bytes(int v, int done) const {
    std::int64_t bytes = 0;
    for_runs(v, done, [&](int a, int b) { bytes += offsets_[b] - offsets_[a]; });
    return bytes;
  }
  // One round with partner `partner` whose group is v ^ bit: a single run goes to and from its
  // place in the block; several (spread rounds) are packed, and unpacked by the next step.
  void round_with(int v, int done, int bit, int partner) {
    const int run = run_length(done);
    if ((done & ~(run - 1)) == 0) {
      const RoundRanks r = round_ranks(fly_, v, done, bit, run);
      exchange_ranks(r.first, r.last, r.from, r.to, partner, detail::kUp);
      return;
    }
    // For p not a power of two the partner's runs may hold more ranks than this one's.
    const std::int64_t bytes = run_bytes(v, done), theirs = run_bytes(v ^ bit, done);
    outgoing_ = TypedBuffer(scratch(), TypeInfo(MPI_BYTE), message_bytes(call_, bytes));
    incoming_ = TypedBuffer(scratch(), TypeInfo(MPI_BYTE), message_bytes(call_, theirs));
    char* out = static_cast<char*>(outgoing_.get());
    for_runs(v, done, [&](int a, int b) {
      std::copy(block_ + offsets_[a], block_ + offsets_[b], out);
      out += offsets_[b] - offsets_[a];
    });
    exchange(outgoing_.get(), message_bytes(call_, bytes), bytes_, incoming_.get(), message_bytes(call_, theirs),
             bytes_, partner, detail::kUp);
    unpack_from_ = v ^ bit;
    unpack_done_ = done;
  }
  void unpack_incoming() {
    if (unpack_from_ < 0) return;
    const char* in = static_cast<const char*>(incoming_.get());
    for_runs(unpack_from_, unpack_done_, [&](int a, int b) {
      std::copy(in, in + (offsets_[b] - offsets_[a]), block_ + offsets_[a]);
      in += offsets_[b] - offsets_[a];
    });
    unpack_from_ = -1;
  }

  TypedBuffer outgoing_;  // a spread round's packed runs
  TypedBuffer incoming_;
  int unpack_from_ = -1;  // whose runs incoming_ holds, and after which rounds
  int unpack_done_ = 0;
  Butterfly fly_{comm().size(), comm().rank()};
  static constexpr int kFoldedIn = 100;
  static constexpr int kUnpack = 101;
};

// Which schedule an allgather takes (allgather_schedule).
enum class AllgatherSchedule { doubling, halves, tree };

// Up to this many bytes in all, p not a power of two across nodes takes the fold.
constexpr std::int64_t kAllgatherFoldBytes = 16384;

// Powers of two take the butterfly; on one node other p take the halves (AllgatherHalves).
// Across nodes the fold beats the tree's 2 log2 p rounds while the whole block is short; for
// longer blocks the butterfly's rounds, in which every rank sends, crowd the links a node's
// ranks share (simulated supermuc, 24 ranks on two nodes: 27.9 against 38.8 us at 8 KiB in
// all, 57.8 against 56.9 us at 32 KiB, 665 against 354 us at 512 KiB). On one node the tree's
// root sends and receives everything: simulated supermuc, 12 ranks, the fold took 0.45-0.71x
// the tree's time from 48 KiB to 8 MiB in all, and the halves 0.44-0.60x the fold's. Across
// nodes the halves' top levels send every rank's block over the node boundary at once: 24 ranks
// on two nodes, 24 and 192 doubles in all, 1.56x and 1.39x the library's time against the fold's
// 1.01x and 1.05x (docs/benchmarks.md, "The allgather on one node" and "The allgather by halves
// on one node"). `elements`: of `type`, in the whole block.
AllgatherSchedule allgather_schedule(int p, std::int64_t elements, MPI_Datatype type, bool one_node) {
  if ((p & (p - 1)) == 0) return AllgatherSchedule::doubling;
  if (one_node) return AllgatherSchedule::halves;
  return elements * TypeInfo(type).size <= kAllgatherFoldBytes ? AllgatherSchedule::doubling : AllgatherSchedule::tree;
}

// Allgather and allgatherv by halves (halves_levels) on one node, p not a power of two: on each
// level a rank swaps its half's parts with its partner's, and the upper half's last rank sends
// them to the lower half's lone rank too. ceil(log2 p) rounds, each rank receiving every other
// rank's part once; the butterfly's fold takes two more, the last carrying the whole block.
class AllgatherHalves final : public AllgatherBlock {
 public:
  AllgatherHalves(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, const int* counts, const int* displs, MPI_Datatype recvtype, const RangeComm& comm)
      : AllgatherBlock(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, counts, displs, recvtype, comm),
        levels_(halves_levels(comm.size(), comm.rank())) {}

 private:
  void step() override {
    if (level_ == levels_.count) {
      complete();
      return;
    }
    const HalvesLevel& l = levels_.level[static_cast<std::size_t>(level_)];
    pack_own_before_round(level_ == 0);
    if (l.extra >= 0) send_ranks(l.first, l.last, l.extra, detail::kForward);
    if (l.partner >= 0) {
      exchange_ranks(l.first, l.last, l.other_first, l.other_last, l.partner, detail::kForward);
    } else {
      receive_ranks(l.other_first, l.other_last, l.from, detail::kForward);
    }
    pack_own_after_post();
    ++level_;
  }

  HalvesLevels levels_;
  int level_ = 0;
};

// Merging gather: like gatherv, but every node merges its children's sorted runs into its own.
class Gatherm final : public Collective {
 public:
  Gatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
          int root, Merger merge, const RangeComm& comm)
      : Collective(comm, detail::Kind::gatherm, root, -1),
        recvbuf_(recvbuf),
        recvcount_(recvcount),
        element_(TypeInfo(type).size),
        merge_(std::move(merge)),
        tree_(comm.size(), root, comm.rank()),
        own_count_(sendcount),
        block_(scratch().take(static_cast<std::size_t>(sendcount) * element_)) {
    block_.assign(static_cast<const char*>(sendbuf),
                  static_cast<const char*>(sendbuf) + static_cast<std::size_t>(sendcount) * element_);
  }
  ~Gatherm() override { scratch().give(std::move(block_)); }

 private:
  // Room for the subtree's elements behind this rank's own, from the pool (as MergingAllgather's).
  void make_room(std::size_t bytes) {
    if (block_.capacity() < bytes) {
      detail::Bytes larger = scratch().take(bytes);
      std::copy(block_.begin(), block_.end(), larger.begin());
      scratch().give(std::move(block_));
      block_ = std::move(larger);
    }
    block_.resize(bytes);
  }

  void step() override {
    const auto& children = tree_.children();
    switch (state_++) {
      case 0:
        child_counts_.resize(children.size());
        for (std::size_t i = 0; i < children.size(); ++i) {
          receive(&child_counts_[i], 1, MPI_INT64_T, tree_.absolute(children[i]), detail::kCount);
        }
        return;
      case 1: {
        subtree_count_ = own_count_;
        for (auto c : child_counts_) subtree_count_ += c;
        if (!tree_.is_root()) {
          send(&subtree_count_, 1, MPI_INT64_T, tree_.absolute(tree_.parent()), detail::kCount);
        } else if (subtree_count_ != recvcount_) {
          throw Error("gatherm: the root expects " + std::to_string(recvcount_) +
                      " elements but the ranks contribute " + std::to_string(subtree_count_));
        }
        make_room(static_cast<std::size_t>(subtree_count_ * element_));
        std::int64_t offset = own_count_;
        for (std::size_t i = 0; i < children.size(); ++i) {
          receive(block_.data() + offset * element_, message_bytes("gatherm", child_counts_[i] * element_),
                  MPI_BYTE, tree_.absolute(children[i]), detail::kUp);
          offset += child_counts_[i];
        }
        return;
      }
      default: {
        std::int64_t merged = own_count_;
        for (auto c : child_counts_) {
          merge_(block_.data(), block_.data() + merged * element_, block_.data() + (merged + c) * element_);
          merged += c;
        }
        if (tree_.is_root()) {
          std::copy(block_.begin(), block_.end(), static_cast<char*>(recvbuf_));
        } else {
          send(block_.data(), message_bytes("gatherm", subtree_count_ * element_), MPI_BYTE,
               tree_.absolute(tree_.parent()), detail::kUp);
        }
        finish();
      }
    }
  }

  void* recvbuf_;
  std::int64_t recvcount_;
  std::int64_t element_;
  Merger merge_;
  BinomialTree tree_;
  std::int64_t own_count_;
  std::int64_t subtree_count_ = 0;
  std::vector<std::int64_t> child_counts_;
  detail::Bytes block_;
};

// What both merging allgathers share: a block of the runs gathered so far, in rank order, and
// the run that arrives from a partner, which joins it before or after and is merged. Block sizes
// travel with the data: a receive is posted for at most what the total leaves, and its status
// tells how much came.
class MergingAllgather : public Collective {
 protected:
  MergingAllgather(detail::Kind kind, const void* sendbuf, int sendcount, void* recvbuf, int total,
                   MPI_Datatype type, Merger merge, const RangeComm& comm)
      : Collective(comm, kind, -1, total),
        recvbuf_(recvbuf),
        total_(total),
        element_(TypeInfo(type).size),
        merge_(std::move(merge)),
        block_(scratch().take(static_cast<std::size_t>(total) * element_)),
        incoming_(scratch().take(static_cast<std::size_t>(total) * element_)) {
    block_.assign(static_cast<const char*>(sendbuf),
                  static_cast<const char*>(sendbuf) + static_cast<std::size_t>(sendcount) * element_);
  }
  ~MergingAllgather() override {
    scratch().give(std::move(block_));
    scratch().give(std::move(incoming_));
  }

  int me() const { return comm().rank(); }
  int bytes(std::int64_t elements) const { return message_bytes("allgatherm", elements * element_); }
  // Elements gathered so far.
  std::int64_t count() const { return static_cast<std::int64_t>(block_.size()) / element_; }

  // Completions of sends come here too (a large payload's); only the receive's status counts.
  void completed(std::size_t index, const MPI_Status& status) override {
    if (index == receive_slot_) arrived_ = detail::payload_count(status, MPI_BYTE) / element_;
  }

  // Posts a receive of at most `capacity` elements into `into`.
  void receive_counted(void* into, std::int64_t capacity, int partner, detail::Phase phase) {
    receive_slot_ = awaited().size();
    receive_at_most(into, bytes(capacity), MPI_BYTE, partner, phase);
  }

  // Posts the receive of a partner's run, at most what the total leaves.
  void receive_run(int partner, detail::Phase phase) {
    const std::int64_t room = std::max<std::int64_t>(total_ - count(), 0);
    incoming_.resize(static_cast<std::size_t>(room * element_));
    receive_counted(incoming_.data(), room, partner, phase);
    partner_ = partner;
  }

  // Joins the run that arrived from partner_ to this block, in rank order, and merges.
  void absorb() {
    const std::size_t mine = block_.size();
    const std::size_t theirs = static_cast<std::size_t>(arrived_ * element_);
    const bool before = partner_ < me();
    block_.insert(before ? block_.begin() : block_.end(), incoming_.begin(), incoming_.begin() + theirs);
    char* first = block_.data();
    merge_(first, first + (before ? theirs : mine), first + mine + theirs);
    partner_ = -1;
  }

  [[noreturn]] void throw_total(std::int64_t got) const {
    throw Error("allgatherm: the ranks expect " + std::to_string(total_) + " elements in all but contribute " +
                std::to_string(got));
  }

  void* recvbuf_;
  std::int64_t total_;
  std::int64_t element_;
  Merger merge_;
  std::int64_t arrived_ = 0;
  std::size_t receive_slot_ = 0;
  // Pooled (and never zeroed): a fresh block per call faulted its pages in again once the heap
  // had been trimmed, which on 4 ranks sharing 2 cores made a merging allgather of 64 KiB in
  // all 10x slower (docs/benchmarks.md, "Pages faulted in again").
  detail::Bytes block_;
  detail::Bytes incoming_;
  int partner_ = -1;  // whose run is awaited, or -1
};

// Merging allgather by halves (halves_levels): partners swap their blocks' sorted runs and both
// merge them, the lower ranks' run first, so ties stay in rank order. Against a merging gather's
// counts and data up a tree and a broadcast down it, one exchange per level. The last merge
// call on a rank is its top level's, whose result only goes to recvbuf (allgatherm_partial_call).
class AllgathermHalves final : public MergingAllgather {
 public:
  AllgathermHalves(const void* sendbuf, int sendcount, void* recvbuf, int total, MPI_Datatype type, Merger merge,
                   const RangeComm& comm)
      : MergingAllgather(detail::Kind::allgatherm, sendbuf, sendcount, recvbuf, total, type, std::move(merge), comm),
        levels_(halves_levels(comm.size(), comm.rank())) {}

 private:
  // Every rank sends its run on every level even when the total is wrong, so that its peers
  // throw too instead of waiting; each throws once nothing of its own is in flight.
  void step() override {
    if (partner_ >= 0) absorb();
    if (level_ < levels_.count) {
      const HalvesLevel& level = levels_.level[static_cast<std::size_t>(level_++)];
      if (level.partner >= 0) send(block_.data(), bytes(count()), MPI_BYTE, level.partner, detail::kForward);
      if (level.extra >= 0) send(block_.data(), bytes(count()), MPI_BYTE, level.extra, detail::kForward);
      receive_run(level.from, detail::kForward);
      return;
    }
    finish();
    if (count() != total_) throw_total(count());
    std::copy(block_.begin(), block_.end(), static_cast<char*>(recvbuf_));
  }

  HalvesLevels levels_;
  int level_ = 0;
};

// Merging allgather on the butterfly with MPICH's fold (AllgathermSchedule::fold): partners swap
// their blocks' sorted runs and both merge them (the lower ranks' run first, so ties stay in
// rank order). log2 q + 2 rounds. Above kForwardBytes in all, a folding rank
// hands its partner the two runs of its last round (its block as it sends it, the other one as
// it arrives) rather than their merge, so that on every rank the last merge call is the one
// whose result only goes to recvbuf (allgatherm_partial_call); below, the extra message costs
// more than the merge it spares.
class AllgathermFold final : public MergingAllgather {
 public:
  AllgathermFold(const void* sendbuf, int sendcount, void* recvbuf, int total, MPI_Datatype type, Merger merge,
                 const RangeComm& comm)
      : MergingAllgather(detail::Kind::allgatherm_fold, sendbuf, sendcount, recvbuf, total, type, std::move(merge),
                         comm),
        forward_(forwards(total * element_)) {}

  // Above this many bytes in all, a folding rank hands its neighbour its last round's two runs.
  static constexpr std::int64_t kForwardBytes = 8 << 10;
  static bool forwards(std::int64_t total_bytes) { return total_bytes > kForwardBytes; }

 private:
  // A folding rank past its last round's partner: it hands both of that round's runs over.
  bool hands_runs_over() const { return forward_ && fly_.folds() && fly_.rounds_done(); }
  void step() override {
    if (state_ == 0) {
      ++state_;
      if (fly_.folded_in()) {
        send(block_.data(), bytes(count()), MPI_BYTE, me() + 1, detail::kUp);
        if (!forward_) {
          receive_counted(recvbuf_, total_, me() + 1, detail::kDown);
          state_ = kFoldedMerged;
          return;
        }
        incoming_.resize(static_cast<std::size_t>(total_ * element_));
        receive_counted(incoming_.data(), total_, me() + 1, detail::kDown);
        state_ = kFoldedIn;
        return;
      }
      if (fly_.folds()) {
        receive_run(me() - 1, detail::kUp);
        return;
      }
    }
    if (state_ == kFoldedMerged) {
      finish();
      if (arrived_ != total_) throw_total(arrived_);
      return;
    }
    if (state_ == kFoldedIn) {
      // The folding rank's block came; its last partner's run follows.
      block_.assign(incoming_.begin(), incoming_.begin() + static_cast<std::ptrdiff_t>(arrived_ * element_));
      receive_run(me() + 1, detail::kDown);
      partner_ = last_partner_of(me() + 1);
      state_ = kFoldedLast;
      return;
    }
    if (state_ == kFoldedLast) {
      absorb();
      finish();
      if (count() != total_) throw_total(count());
      std::copy(block_.begin(), block_.end(), static_cast<char*>(recvbuf_));
      return;
    }
    if (state_ == kDone) {
      finish();  // before the throw: a later wait (the request's destructor) then completes
      if (count() != total_) throw_total(count());
      return;
    }
    if (partner_ >= 0) {
      // The last round's run goes on to the folded-in rank before this rank's last merge. Both
      // runs go even when the total is wrong, so that the folded-in rank throws too instead of
      // waiting; each throws once nothing of its own is in flight.
      if (hands_runs_over()) send(incoming_.data(), bytes(arrived_), MPI_BYTE, me() - 1, detail::kDown);
      absorb();
    }
    const int partner = fly_.next_partner();
    if (partner >= 0) {
      send(block_.data(), bytes(count()), MPI_BYTE, partner, detail::kForward);
      if (hands_runs_over()) send(block_.data(), bytes(count()), MPI_BYTE, me() - 1, detail::kDown);
      receive_run(partner, detail::kForward);
      return;
    }
    if (count() == total_) std::copy(block_.begin(), block_.end(), static_cast<char*>(recvbuf_));
    // Without forwarding the folded-in rank gets the merge, sent even when the total is wrong.
    if (!forward_ && fly_.folds()) send(block_.data(), bytes(count()), MPI_BYTE, me() - 1, detail::kDown);
    state_ = kDone;
  }

  // The partner of `rank`'s last round.
  int last_partner_of(int rank) const {
    Butterfly fly(comm().size(), rank);
    int last = -1;
    for (int partner = fly.next_partner(); partner >= 0; partner = fly.next_partner()) last = partner;
    return last;
  }

  static constexpr int kFoldedIn = 100;
  static constexpr int kFoldedLast = 101;
  static constexpr int kFoldedMerged = 102;
  static constexpr int kDone = 103;
  bool forward_;  // above kForwardBytes: the folded-in rank merges the last round itself
  Butterfly fly_{comm().size(), comm().rank()};
};

// Whether a barrier on p ranks disseminates (round k: rank r signals r + 2^k and waits for
// r - 2^k, mod p; ceil(log2 p) rounds) rather than runs the butterfly (round k: r ^ 2^k), whose
// fold costs p not a power of two two rounds more (floor(log2 p) + 2). On one node only, where
// every round costs alike: across nodes the dissemination's partners cross node and switch
// boundaries in every round, where the butterfly's nearest partners stay on the node for the
// first rounds (simulated supermuc: 1024 ranks 25.8 against 13.5 us, 24 ranks on two nodes 8.1
// against 5.3; 7 ranks on one node 2.5 against 3.0, docs/benchmarks.md).
bool disseminates(int p, bool one_node) { return one_node && p > 2 && pow2_floor(p) != p; }

class Barrier final : public Collective {
 public:
  explicit Barrier(const RangeComm& comm) : Collective(comm, detail::Kind::barrier, -1, 0) {}

 private:
  void step() override {
    const int me = comm().rank();
    const int p = comm().size();
    if (disseminate_) {
      if (distance_ >= p) {
        finish();
        return;
      }
      send(&token_, 0, MPI_BYTE, static_cast<int>((me + distance_) % p), detail::kForward);
      receive(&incoming_, 0, MPI_BYTE, static_cast<int>((me - distance_ + p) % p), detail::kForward);
      distance_ *= 2;
      return;
    }
    if (state_++ == 0) {
      if (fly_.folded_in()) {
        send(&token_, 0, MPI_BYTE, me + 1, detail::kUp);
        receive(&incoming_, 0, MPI_BYTE, me + 1, detail::kDown);
        finish();
        return;
      }
      if (fly_.folds()) {
        receive(&incoming_, 0, MPI_BYTE, me - 1, detail::kUp);
        return;
      }
    }
    const int partner = fly_.next_partner();
    if (partner >= 0) {
      send(&token_, 0, MPI_BYTE, partner, detail::kForward);
      receive(&incoming_, 0, MPI_BYTE, partner, detail::kForward);
      return;
    }
    if (fly_.folds()) send(&token_, 0, MPI_BYTE, me - 1, detail::kDown);
    finish();
  }

  Butterfly fly_{comm().size(), comm().rank(), detail::CommAccess::node_bits(comm())};
  bool disseminate_ = disseminates(comm().size(), comm().on_one_node());
  long long distance_ = 1;  // of the next dissemination round (doubling past p, so no int overflow)
  char token_ = 0;
  char incoming_ = 0;
};

void check_reduction(const char* call, int count, MPI_Datatype type, MPI_Op op) {
  detail::check_count(call, count);
  detail::check_type(call, type);
  detail::check_op(call, op);
}

// A reduction's or scan's buffers where they are significant (sendbuf: unless in place).
void check_buffers(const char* call, const void* sendbuf, const void* recvbuf, int count, MPI_Datatype type) {
  if (sendbuf != MPI_IN_PLACE) detail::check_buffer(call, sendbuf, count, type);
  detail::check_buffer(call, recvbuf, count, type);
}

// How a collective call runs: as a request, or (a blocking call) to its end at once where the
// engine allows it (runs_immediately).
enum class Launch { request, blocking };

template <class Op, class... Args>
Request start(Launch launch, const RangeComm& comm, Args&&... args) {
  if (launch == Launch::blocking && detail::runs_immediately(comm)) {
    Op op(std::forward<Args>(args)...);
    op.mark_blocking();
    op.run_immediately();
    return Request();
  }
  detail::OperationPtr op = detail::make_operation<Op>(*comm.engine(), std::forward<Args>(args)...);
  if (launch == Launch::blocking) static_cast<Op&>(*op).mark_blocking();
  return Request(std::move(op));
}

}  // namespace

namespace {
// Bcast's messages, sent directly (detail::Direct).
void direct_bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int p = CommAccess::size(comm);
  const detail::BcastTree tree(vector_bytes(type, count), p, root, CommAccess::rank(comm));
  if (!tree.is_root()) {
    run.receive(buf, count, type, CommAccess::mpi_rank(comm, tree.absolute(tree.parent())), detail::kDown);
  }
  for (std::size_t i = tree.child_count(); i-- > 0;) {
    run.send(buf, count, type, CommAccess::mpi_rank(comm, tree.absolute(tree.child(i))), detail::kDown);
  }
}

Request bcast_call(Launch launch, void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm) {
  detail::check_count("bcast", count);
  detail::check_type("bcast", type);
  detail::check_rank("bcast", "root", root, comm);
  detail::check_buffer("bcast", buf, count, type);
  if (scatter_bcast(type, count, comm.size())) return start<BcastScatter>(launch, comm, buf, count, type, root, comm);
  if (launch == Launch::blocking && detail::Direct::applies(comm, type, vector_bytes(type, count))) {
    direct_bcast(buf, count, type, root, comm);
    return Request();
  }
  return start<Bcast>(launch, comm, buf, count, type, root, comm);
}
}  // namespace

Request ibcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm) {
  return bcast_call(Launch::request, buf, count, type, root, comm);
}

void bcast(void* buf, int count, MPI_Datatype type, int root, const RangeComm& comm) {
  bcast_call(Launch::blocking, buf, count, type, root, comm).wait();
}

namespace {
// Reduce's messages (to one root), sent directly (detail::Direct): the children's parts come up
// the tree and are combined in rank order behind this rank's input.
void direct_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                   const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int me = CommAccess::rank(comm);
  const TypeInfo info(type);
  const bool commute = commutative(op);
  const BinomialTree tree(CommAccess::size(comm), commute ? root : 0, me);
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const void* result = input;
  const auto& children = tree.children();
  const int held = children.empty() ? 0 : count;
  detail::DirectBuffer own(run.scratch(), info, held);
  detail::DirectBuffer other(run.scratch(), info, held);
  if (!children.empty()) {
    // The running combination: in the receive buffer where this rank gets the result.
    void* acc = me == root && tree.is_root() ? recvbuf : own.get();
    void* part = other.get();
    if (acc != input) detail::copy_elements(input, acc, count, info);
    for (int c : children) {
      run.receive(part, count, type, CommAccess::mpi_rank(comm, tree.absolute(c)), detail::kUp);
      absorb(acc, part, false, commute, count, info, op);
    }
    result = acc;
  }
  if (!tree.is_root()) {
    run.send(result, count, type, CommAccess::mpi_rank(comm, tree.absolute(tree.parent())), detail::kUp);
  }
  if (tree.is_root()) {
    if (me != root) {
      run.send(result, count, type, CommAccess::mpi_rank(comm, root), detail::kForward);
    } else if (result != recvbuf) {
      detail::copy_elements(result, recvbuf, count, info);
    }
  } else if (me == root) {
    run.receive(recvbuf, count, type, CommAccess::mpi_rank(comm, tree.absolute(0)), detail::kForward);
  }
}

Request reduce_call(Launch launch, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    int root, const RangeComm& comm) {
  check_reduction("reduce", count, type, op);
  detail::check_rank("reduce", "root", root, comm);
  if (comm.rank() == root) {
    check_buffers("reduce", sendbuf, recvbuf, count, type);
    check_apart("reduce", "sendbuf", sendbuf, "recvbuf", recvbuf, count, type);
  } else {
    detail::check_buffer("reduce", sendbuf, count, type);
  }
  if (reduce_halving(type, count, comm.size())) {
    return start<ReduceHalving>(launch, comm, sendbuf, recvbuf, count, type, op, root, comm);
  }
  if (launch == Launch::blocking && detail::Direct::applies(comm, type, vector_bytes(type, count))) {
    direct_reduce(sendbuf, recvbuf, count, type, op, root, comm);
    return Request();
  }
  return start<Reduce>(launch, comm, sendbuf, recvbuf, count, type, op, root, false, comm);
}
}  // namespace

Request ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                const RangeComm& comm) {
  return reduce_call(Launch::request, sendbuf, recvbuf, count, type, op, root, comm);
}

void reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
            const RangeComm& comm) {
  reduce_call(Launch::blocking, sendbuf, recvbuf, count, type, op, root, comm).wait();
}

namespace {
// AllreduceDoubling's messages, sent directly (detail::Direct).
void direct_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int me = CommAccess::rank(comm);
  const TypeInfo info(type);
  const bool commute = commutative(op);
  Butterfly fly(CommAccess::size(comm), me, commute ? CommAccess::node_bits(comm) : 0);
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  if (fly.folded_in()) {
    run.send(input, count, type, CommAccess::mpi_rank(comm, me + 1), detail::kUp);
    run.receive(recvbuf, count, type, CommAccess::mpi_rank(comm, me + 1), detail::kDown);
    return;
  }
  detail::DirectBuffer spare(run.scratch(), info, count);
  void* acc = recvbuf;
  void* incoming = spare.get();
  if (input != recvbuf) detail::copy_elements(input, recvbuf, count, info);
  if (fly.folds()) {
    run.receive(incoming, count, type, CommAccess::mpi_rank(comm, me - 1), detail::kUp);
    absorb(acc, incoming, true, commute, count, info, op);
  }
  for (int partner = fly.next_partner(); partner >= 0; partner = fly.next_partner()) {
    run.exchange(acc, count, incoming, count, type, CommAccess::mpi_rank(comm, partner), detail::kForward);
    absorb(acc, incoming, partner < me, commute, count, info, op);
  }
  if (acc != recvbuf) detail::copy_elements(acc, recvbuf, count, info);
  if (fly.folds()) run.send(recvbuf, count, type, CommAccess::mpi_rank(comm, me - 1), detail::kDown);
}

Request allreduce_call(Launch launch, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       const RangeComm& comm) {
  check_reduction("allreduce", count, type, op);
  check_buffers("allreduce", sendbuf, recvbuf, count, type);
  check_apart("allreduce", "sendbuf", sendbuf, "recvbuf", recvbuf, count, type);
  switch (allreduce_algorithm(type, count, comm.size())) {
    case AllreduceAlgorithm::halving:
      return start<ReduceHalving>(launch, comm, sendbuf, recvbuf, count, type, op, -1, comm);
    case AllreduceAlgorithm::doubling:
      if (launch == Launch::blocking && detail::Direct::applies(comm, type, vector_bytes(type, count))) {
        direct_allreduce(sendbuf, recvbuf, count, type, op, comm);
        return Request();
      }
      return start<AllreduceDoubling>(launch, comm, sendbuf, recvbuf, count, type, op, comm);
    case AllreduceAlgorithm::tree:
      break;
  }
  return start<Reduce>(launch, comm, sendbuf, recvbuf, count, type, op, 0, true, comm);
}
}  // namespace

Request iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  return allreduce_call(Launch::request, sendbuf, recvbuf, count, type, op, comm);
}

void allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  allreduce_call(Launch::blocking, sendbuf, recvbuf, count, type, op, comm).wait();
}

namespace {
// ScanButterfly's messages, sent directly (detail::Direct).
void direct_scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, bool exclusive,
                 const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int me = CommAccess::rank(comm);
  const int p = CommAccess::size(comm);
  const TypeInfo info(type);
  const bool commute = commutative(op);
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const auto sends_from = [p](int rank, int mask) { return butterfly_sends_from(rank, mask, p); };
  detail::DirectBuffer block(run.scratch(), info, count);
  detail::DirectBuffer arriving(run.scratch(), info, count);
  // The combination of this rank's aligned block so far: the input until something is combined
  // into it (on two ranks, never), unless the input is in the receive buffer, where results grow.
  const void* partial = input;
  void* incoming = arriving.get();
  const auto writable = [&]() -> void*& {
    if (partial == input) {
      detail::copy_elements(input, block.get(), count, info);
      partial = block.get();
    }
    return const_cast<void*&>(partial);
  };
  if (input == recvbuf) writable();
  if (!exclusive && input != recvbuf) detail::copy_elements(input, recvbuf, count, info);
  bool have_result = !exclusive;
  for (int mask = 1; mask < p; mask *= 2) {
    const int partner = me ^ mask;
    if (partner >= p) continue;
    const int mpi_partner = CommAccess::mpi_rank(comm, partner);
    const bool left_needs = sends_from(std::min(me, partner), mask * 2);
    if (me < partner) {
      if (!left_needs) {
        run.send(partial, count, type, mpi_partner, detail::kUp);
        continue;
      }
      run.exchange(partial, count, incoming, count, type, mpi_partner, detail::kUp);
      absorb(writable(), incoming, false, commute, count, info, op);
      continue;
    }
    // The block on the left: in front of the result and of the block's combination. An exclusive
    // scan's first is its result so far: straight into the receive buffer.
    void* into = have_result ? incoming : recvbuf;
    if (left_needs) {
      run.exchange(partial, count, into, count, type, mpi_partner, detail::kUp);
    } else {
      run.receive(into, count, type, mpi_partner, detail::kUp);
    }
    if (into != recvbuf) reduce_local(into, recvbuf, count, info, op);
    have_result = true;
    if (sends_from(me, mask * 2)) reduce_local(into, writable(), count, info, op);
  }
}

// ScanDoubling's messages, sent directly (detail::Direct).
void direct_scan_doubling(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          bool exclusive, const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int me = CommAccess::rank(comm);
  const int p = CommAccess::size(comm);
  const TypeInfo info(type);
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  detail::DirectBuffer arriving(run.scratch(), info, count);
  detail::DirectBuffer combined(run.scratch(), info, exclusive ? count : 0);
  // This rank's running combination (ranks r - 2^k + 1 .. r): an inclusive scan's is its result.
  const void* partial = input;
  if (!exclusive) {
    if (input != recvbuf) detail::copy_elements(input, recvbuf, count, info);
    partial = recvbuf;
  } else if (input == recvbuf) {
    detail::copy_elements(input, combined.get(), count, info);
    partial = combined.get();
  }
  int received = 0;
  for (int distance = 1; distance < p; distance *= 2) {
    const bool from_left = me - distance >= 0;
    void* into = exclusive && received == 0 ? recvbuf : arriving.get();
    run.sendrecv(partial, count, me + distance < p ? CommAccess::mpi_rank(comm, me + distance) : MPI_PROC_NULL, into,
                 count, from_left ? CommAccess::mpi_rank(comm, me - distance) : MPI_PROC_NULL, type, detail::kUp);
    if (!from_left) continue;
    ++received;
    if (!exclusive) {
      reduce_local(into, recvbuf, count, info, op);
      continue;
    }
    // recvbuf = (everything left of this rank so far); the first block arrived there directly.
    if (received > 1) reduce_local(into, recvbuf, count, info, op);
    if (me + 2 * distance < p) {
      if (partial != combined.get()) {
        detail::copy_elements(partial, combined.get(), count, info);
        partial = combined.get();
      }
      reduce_local(into, combined.get(), count, info, op);
    }
  }
}

// Scan and exscan: the algorithm scan_algorithm picks (rbc::algorithm names the same choice).
Request start_scan(Launch launch, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   bool exclusive, const RangeComm& comm) {
  switch (scan_algorithm(type, count, comm.size())) {
    case ScanAlgorithm::butterfly:
      if (launch == Launch::blocking && detail::Direct::applies(comm, type, vector_bytes(type, count))) {
        direct_scan(sendbuf, recvbuf, count, type, op, exclusive, comm);
        return Request();
      }
      return start<ScanButterfly>(launch, comm, sendbuf, recvbuf, count, type, op, exclusive, comm);
    case ScanAlgorithm::doubling:
      if (launch == Launch::blocking && detail::Direct::applies(comm, type, vector_bytes(type, count))) {
        direct_scan_doubling(sendbuf, recvbuf, count, type, op, exclusive, comm);
        return Request();
      }
      return start<ScanDoubling>(launch, comm, sendbuf, recvbuf, count, type, op, exclusive, comm);
    case ScanAlgorithm::tree:
      break;
  }
  return start<Scan>(launch, comm, sendbuf, recvbuf, nullptr, count, type, op,
                     exclusive ? ScanKind::kExclusive : ScanKind::kInclusive, comm);
}

Request scan_call(Launch launch, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  const RangeComm& comm) {
  check_reduction("scan", count, type, op);
  check_buffers("scan", sendbuf, recvbuf, count, type);
  check_apart("scan", "sendbuf", sendbuf, "recvbuf", recvbuf, count, type);
  return start_scan(launch, sendbuf, recvbuf, count, type, op, false, comm);
}
}  // namespace

Request iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  return scan_call(Launch::request, sendbuf, recvbuf, count, type, op, comm);
}

void scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  scan_call(Launch::blocking, sendbuf, recvbuf, count, type, op, comm).wait();
}

namespace {
Request exscan_call(Launch launch, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    const RangeComm& comm) {
  check_reduction("exscan", count, type, op);
  check_buffers("exscan", sendbuf, recvbuf, count, type);
  check_apart("exscan", "sendbuf", sendbuf, "recvbuf", recvbuf, count, type);
  return start_scan(launch, sendbuf, recvbuf, count, type, op, true, comm);
}
}  // namespace

Request iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  return exscan_call(Launch::request, sendbuf, recvbuf, count, type, op, comm);
}

void exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  exscan_call(Launch::blocking, sendbuf, recvbuf, count, type, op, comm).wait();
}

namespace {
Request scan_and_bcast_call(Launch launch, const void* sendbuf, void* recvbuf, void* totalbuf, int count,
                            MPI_Datatype type, MPI_Op op, const RangeComm& comm) {
  check_reduction("scan_and_bcast", count, type, op);
  check_buffers("scan_and_bcast", sendbuf, recvbuf, count, type);
  detail::check_buffer("scan_and_bcast", totalbuf, count, type);
  check_apart("scan_and_bcast", "sendbuf", sendbuf, "recvbuf", recvbuf, count, type);
  check_apart("scan_and_bcast", "sendbuf", sendbuf, "totalbuf", totalbuf, count, type);
  check_apart("scan_and_bcast", "recvbuf", recvbuf, "totalbuf", totalbuf, count, type);
  if (doubling(type, count, comm.size())) {
    return start<ScanTotalDoubling>(launch, comm, sendbuf, recvbuf, totalbuf, count, type, op, comm);
  }
  return start<Scan>(launch, comm, sendbuf, recvbuf, totalbuf, count, type, op, ScanKind::kInclusiveAndTotal, comm);
}
}  // namespace

Request iscan_and_bcast(const void* sendbuf, void* recvbuf, void* totalbuf, int count, MPI_Datatype type, MPI_Op op,
                        const RangeComm& comm) {
  return scan_and_bcast_call(Launch::request, sendbuf, recvbuf, totalbuf, count, type, op, comm);
}

void scan_and_bcast(const void* sendbuf, void* recvbuf, void* totalbuf, int count, MPI_Datatype type, MPI_Op op,
                    const RangeComm& comm) {
  scan_and_bcast_call(Launch::blocking, sendbuf, recvbuf, totalbuf, count, type, op, comm).wait();
}

namespace {
// Gather's messages for equal parts in contiguous buffers, sent directly (detail::Direct): each
// rank sends its subtree's parts, in relative rank order, up the binomial tree; false, with
// nothing sent, where it does not run directly (other buffers, longer blocks).
bool direct_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, int root, const RangeComm& comm) {
  using detail::CommAccess;
  const int me = CommAccess::rank(comm);
  const int p = CommAccess::size(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const TypeInfo recv(recvtype);
  const TypeInfo send(in_place ? recvtype : sendtype);
  if (!send.contiguous() || (me == root && !recv.contiguous())) return false;
  const std::int64_t part = in_place ? static_cast<std::int64_t>(recvcount) * recv.size
                                     : static_cast<std::int64_t>(sendcount) * send.size;
  if (!detail::Direct::applies(comm, MPI_BYTE, part * p)) return false;
  if (me == root) check_own_part("gather", me, part, static_cast<std::int64_t>(recvcount) * recv.size);
  const BinomialTree tree(p, root, me);
  const int subtree = message_bytes("gather", part * tree.subtree_size());
  detail::Direct run(comm);
  char* const out = static_cast<char*>(recvbuf);
  const void* own = in_place ? out + part * me : sendbuf;
  const auto& children = tree.children();
  if (children.empty() && !tree.is_root()) {
    run.send(own, subtree, MPI_BYTE, CommAccess::mpi_rank(comm, tree.absolute(tree.parent())), detail::kUp);
    return true;
  }
  // The subtree's parts in relative rank order: at a root of rank 0, the receive buffer itself.
  const bool in_recvbuf = tree.is_root() && root == 0;
  detail::DirectBuffer storage(run.scratch(), TypeInfo(MPI_BYTE), in_recvbuf ? 0 : subtree);
  char* const block = in_recvbuf ? out : static_cast<char*>(storage.get());
  if (!(in_recvbuf && in_place)) copy_bytes(block, own, part);
  std::int64_t offset = part;
  for (int c : children) {
    const std::int64_t bytes = part * (tree.subtree_end(c) - c);
    run.receive(block + offset, static_cast<int>(bytes), MPI_BYTE, CommAccess::mpi_rank(comm, tree.absolute(c)),
                detail::kUp);
    offset += bytes;
  }
  if (!tree.is_root()) {
    run.send(block, subtree, MPI_BYTE, CommAccess::mpi_rank(comm, tree.absolute(tree.parent())), detail::kUp);
    return true;
  }
  if (in_recvbuf) return true;
  for (int j = 0; j < p; ++j) {
    const int rank = tree.absolute(j);
    if (!(in_place && rank == me)) copy_bytes(out + part * rank, block + part * j, part);
  }
  return true;
}

Request gather_call(Launch launch, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, const RangeComm& comm) {
  detail::check_rank("gather", "root", root, comm);
  const bool is_root = comm.rank() == root;
  if (sendbuf == MPI_IN_PLACE && !is_root) throw Error("gather: MPI_IN_PLACE is only valid at the root");
  if (sendbuf != MPI_IN_PLACE) {
    detail::check_count("gather", sendcount);
    detail::check_type("gather", sendtype);
    detail::check_buffer("gather", sendbuf, sendcount, sendtype);
  }
  if (is_root) {
    detail::check_count("gather", recvcount);
    detail::check_type("gather", recvtype);
    detail::check_buffer("gather", recvbuf, recvcount, recvtype);
    check_apart("gather", "sendbuf", region(sendbuf, sendcount, sendtype), "recvbuf",
                region(recvbuf, static_cast<std::int64_t>(recvcount) * detail::CommAccess::size(comm), recvtype));
  } else {
    recvtype = sendtype;  // receive arguments are not significant off the root
  }
  if (launch == Launch::blocking && direct_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm)) {
    return Request();
  }
  return start<Gather>(launch, comm, "gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                       recvtype, root, Layout::kEqual, false, comm);
}
}  // namespace

Request igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, const RangeComm& comm) {
  return gather_call(Launch::request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

void gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const RangeComm& comm) {
  gather_call(Launch::blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm).wait();
}

namespace {
// Also the receive buffer: refused if null while a count is positive (check_buffer).
void check_counts(const char* call, const void* recvbuf, const int* counts, const int* displs, MPI_Datatype recvtype,
                  const RangeComm& comm) {
  if (counts == nullptr || displs == nullptr) throw Error(std::string(call) + ": null recvcounts or displs");
  int largest = 0;
  for (int r = 0; r < comm.size(); ++r) {
    if (counts[r] < 0) {
      throw Error(std::string(call) + ": negative receive count " + std::to_string(counts[r]) + " for rank " +
                  std::to_string(r));
    }
    largest = std::max(largest, counts[r]);
  }
  detail::check_buffer(call, recvbuf, largest, recvtype);
}
}  // namespace

namespace {
Request gatherv_call(Launch launch, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, const RangeComm& comm) {
  detail::check_rank("gatherv", "root", root, comm);
  const bool is_root = comm.rank() == root;
  if (sendbuf == MPI_IN_PLACE && !is_root) throw Error("gatherv: MPI_IN_PLACE is only valid at the root");
  if (sendbuf != MPI_IN_PLACE) {
    detail::check_count("gatherv", sendcount);
    detail::check_type("gatherv", sendtype);
    detail::check_buffer("gatherv", sendbuf, sendcount, sendtype);
  }
  if (is_root) {
    detail::check_type("gatherv", recvtype);
    check_counts("gatherv", recvbuf, recvcounts, displs, recvtype, comm);
    check_apart("gatherv", "sendbuf", region(sendbuf, sendcount, sendtype), "recvbuf",
                region(recvbuf, recvcounts, displs, comm.size(), recvtype));
  } else {
    recvtype = sendtype;
  }
  return start<Gather>(launch, comm, "gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                       root, Layout::kRootCounts, false, comm);
}
}  // namespace

Request igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                 const int* displs, MPI_Datatype recvtype, int root, const RangeComm& comm) {
  return gatherv_call(Launch::request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

void gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
             const int* displs, MPI_Datatype recvtype, int root, const RangeComm& comm) {
  gatherv_call(Launch::blocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm)
      .wait();
}

namespace {
// AllgatherHalves' messages for equal parts, sent directly (direct_allgather).
void direct_allgather_halves(detail::Direct& run, const void* own, char* block, std::int64_t part,
                             const RangeComm& comm) {
  using detail::CommAccess;
  const int me = CommAccess::rank(comm);
  const HalvesLevels levels = halves_levels(CommAccess::size(comm), me);
  const auto bytes = [&](int first, int last) { return static_cast<int>(part * (last - first)); };
  for (int k = 0; k < levels.count; ++k) {
    const HalvesLevel& l = levels.level[static_cast<std::size_t>(k)];
    // The first level sends only this rank's part, from the send buffer; it is placed after.
    const void* out = k == 0 ? own : block + part * l.first;
    char* in = block + part * l.other_first;
    // The lone rank's part first: it waits for nothing else on this level.
    if (l.extra >= 0) {
      run.send(out, bytes(l.first, l.last), MPI_BYTE, CommAccess::mpi_rank(comm, l.extra), detail::kForward);
    }
    if (l.partner >= 0) {
      run.exchange(out, bytes(l.first, l.last), in, bytes(l.other_first, l.other_last), MPI_BYTE,
                   CommAccess::mpi_rank(comm, l.partner), detail::kForward);
    } else {
      run.receive(in, bytes(l.other_first, l.other_last), MPI_BYTE, CommAccess::mpi_rank(comm, l.from),
                  detail::kForward);
    }
    if (k == 0 && own != block + part * me) copy_bytes(block + part * me, own, part);
  }
}

// AllgatherDoubling's or AllgatherHalves' messages for equal parts in contiguous buffers, sent
// directly (detail::Direct): the block is assembled in the receive buffer; false, with nothing
// sent, where it does not run directly (other buffers, longer blocks, or this rank's rounds would
// not go in bit order: spread across nodes).
bool direct_allgather(AllgatherSchedule schedule, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, const RangeComm& comm) {
  using detail::CommAccess;
  const int me = CommAccess::rank(comm);
  const int p = CommAccess::size(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const TypeInfo recv(recvtype);
  const TypeInfo send(in_place ? recvtype : sendtype);
  if (!recv.contiguous() || !send.contiguous()) return false;
  const std::int64_t part = static_cast<std::int64_t>(recvcount) * recv.size;
  if (!detail::Direct::applies(comm, MPI_BYTE, part * p)) return false;
  check_own_part("allgather", me, in_place ? part : static_cast<std::int64_t>(sendcount) * send.size, part);
  const int whole = message_bytes("allgather", part * p);
  if (schedule == AllgatherSchedule::halves) {
    detail::Direct run(comm);
    char* block = static_cast<char*>(recvbuf);
    direct_allgather_halves(run, in_place ? block + part * me : sendbuf, block, part, comm);
    return true;
  }
  Butterfly fly = part * p <= AllgatherDoubling::kSpreadBytes ? Butterfly(p, me, CommAccess::node_bits(comm))
                                                               : Butterfly(p, me);
  if (!fly.in_order()) return false;
  detail::Direct run(comm);
  char* block = static_cast<char*>(recvbuf);
  const auto bytes = [&](int first, int last) { return static_cast<int>(part * (last - first)); };
  if (fly.folded_in()) {
    // Its part goes to the odd neighbour, which hands the whole block back.
    run.send(in_place ? block + part * me : sendbuf, bytes(me, me + 1), MPI_BYTE, CommAccess::mpi_rank(comm, me + 1),
             detail::kUp);
    run.receive(block, whole, MPI_BYTE, CommAccess::mpi_rank(comm, me + 1), detail::kDown);
    return true;
  }
  // This rank's part goes into the block once the first round has sent it from the send buffer
  // (the state machine's overlap), or at once where the first round sends two parts.
  bool own_placed = in_place;
  const auto place_own = [&] {
    if (!own_placed) copy_bytes(block + part * me, sendbuf, part);
    own_placed = true;
  };
  if (fly.folds()) {
    place_own();
    run.receive(block + part * (me - 1), bytes(me - 1, me), MPI_BYTE, CommAccess::mpi_rank(comm, me - 1), detail::kUp);
  }
  const int v = fly.virtual_rank();
  for (int done = fly.done(), partner = fly.next_partner(); partner >= 0;
       done = fly.done(), partner = fly.next_partner()) {
    const RoundRanks r = round_ranks(fly, v, done, fly.bit(), done + 1);  // in bit order
    run.exchange(own_placed ? block + part * r.first : sendbuf, bytes(r.first, r.last), block + part * r.from,
                 bytes(r.from, r.to), MPI_BYTE, CommAccess::mpi_rank(comm, partner), detail::kUp);
    place_own();
  }
  place_own();
  if (fly.folds()) run.send(block, whole, MPI_BYTE, CommAccess::mpi_rank(comm, me - 1), detail::kDown);
  return true;
}

Request allgather_call(Launch launch, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, const RangeComm& comm) {
  if (sendbuf != MPI_IN_PLACE) {
    detail::check_count("allgather", sendcount);
    detail::check_type("allgather", sendtype);
    detail::check_buffer("allgather", sendbuf, sendcount, sendtype);
  }
  detail::check_count("allgather", recvcount);
  detail::check_type("allgather", recvtype);
  detail::check_buffer("allgather", recvbuf, recvcount, recvtype);
  const int p = comm.size();
  check_apart("allgather", "sendbuf", region(sendbuf, sendcount, sendtype), "recvbuf",
              region(recvbuf, static_cast<std::int64_t>(recvcount) * p, recvtype));
  const AllgatherSchedule schedule =
      allgather_schedule(p, static_cast<std::int64_t>(recvcount) * p, recvtype, comm.on_one_node());
  if (schedule != AllgatherSchedule::tree) {
    if (launch == Launch::blocking &&
        direct_allgather(schedule, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)) {
      return Request();
    }
    if (schedule == AllgatherSchedule::halves) {
      return start<AllgatherHalves>(launch, comm, "allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                    nullptr, nullptr, recvtype, comm);
    }
    return start<AllgatherDoubling>(launch, comm, "allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                    nullptr, nullptr, recvtype, comm);
  }
  return start<Gather>(launch, comm, "allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                       recvtype, 0, Layout::kEqual, true, comm);
}
}  // namespace

Request iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, const RangeComm& comm) {
  return allgather_call(Launch::request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, const RangeComm& comm) {
  allgather_call(Launch::blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm).wait();
}

namespace {
Request allgatherv_call(Launch launch, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int* recvcounts, const int* displs, MPI_Datatype recvtype, const RangeComm& comm) {
  if (sendbuf != MPI_IN_PLACE) {
    detail::check_count("allgatherv", sendcount);
    detail::check_type("allgatherv", sendtype);
    detail::check_buffer("allgatherv", sendbuf, sendcount, sendtype);
  }
  detail::check_type("allgatherv", recvtype);
  check_counts("allgatherv", recvbuf, recvcounts, displs, recvtype, comm);
  check_apart("allgatherv", "sendbuf", region(sendbuf, sendcount, sendtype), "recvbuf",
              region(recvbuf, recvcounts, displs, comm.size(), recvtype));
  std::int64_t elements = 0;
  for (int j = 0; j < comm.size(); ++j) elements += recvcounts[j];
  switch (allgather_schedule(comm.size(), elements, recvtype, comm.on_one_node())) {
    case AllgatherSchedule::doubling:
      return start<AllgatherDoubling>(launch, comm, "allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                                      recvcounts, displs, recvtype, comm);
    case AllgatherSchedule::halves:
      return start<AllgatherHalves>(launch, comm, "allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                    displs, recvtype, comm);
    case AllgatherSchedule::tree:
      break;
  }
  return start<Gather>(launch, comm, "allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                       recvtype, 0, Layout::kAllCounts, true, comm);
}
}  // namespace

Request iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                    const int* displs, MPI_Datatype recvtype, const RangeComm& comm) {
  return allgatherv_call(Launch::request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                const int* displs, MPI_Datatype recvtype, const RangeComm& comm) {
  allgatherv_call(Launch::blocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm).wait();
}

namespace {
// Barrier's messages, sent directly (detail::Direct).
void direct_barrier(const RangeComm& comm) {
  using detail::CommAccess;
  detail::Direct run(comm);
  const int me = CommAccess::rank(comm);
  const int p = CommAccess::size(comm);
  char token = 0;
  char incoming = 0;
  if (disseminates(p, comm.on_one_node())) {
    for (long long d = 1; d < p; d *= 2) {
      run.sendrecv(&token, 0, CommAccess::mpi_rank(comm, static_cast<int>((me + d) % p)), &incoming, 0,
                   CommAccess::mpi_rank(comm, static_cast<int>((me - d + p) % p)), MPI_BYTE, detail::kForward);
    }
    return;
  }
  Butterfly fly(p, me, CommAccess::node_bits(comm));
  if (fly.folded_in()) {
    run.send(&token, 0, MPI_BYTE, CommAccess::mpi_rank(comm, me + 1), detail::kUp);
    run.receive(&incoming, 0, MPI_BYTE, CommAccess::mpi_rank(comm, me + 1), detail::kDown);
    return;
  }
  if (fly.folds()) run.receive(&incoming, 0, MPI_BYTE, CommAccess::mpi_rank(comm, me - 1), detail::kUp);
  for (int partner = fly.next_partner(); partner >= 0; partner = fly.next_partner()) {
    run.exchange(&token, 0, &incoming, 0, MPI_BYTE, CommAccess::mpi_rank(comm, partner), detail::kForward);
  }
  if (fly.folds()) run.send(&token, 0, MPI_BYTE, CommAccess::mpi_rank(comm, me - 1), detail::kDown);
}

Request barrier_call(Launch launch, const RangeComm& comm) {
  comm.size();  // throws for non-members
  if (launch == Launch::blocking && detail::Direct::applies(comm, MPI_BYTE, 0)) {
    direct_barrier(comm);
    return Request();
  }
  return start<Barrier>(launch, comm, comm);
}
}  // namespace

Request ibarrier(const RangeComm& comm) { return barrier_call(Launch::request, comm); }

std::string algorithm(const std::string& collective, int count, MPI_Datatype type, int p, bool one_node) {
  if (collective == "allreduce") {
    switch (allreduce_algorithm(type, count, p)) {
      case AllreduceAlgorithm::halving:
        return "recursive halving + doubling (Rabenseifner)";
      case AllreduceAlgorithm::doubling:
        return "recursive doubling";
      case AllreduceAlgorithm::tree:
        break;
    }
    return "binomial tree reduce + broadcast";
  }
  if (collective == "scan" || collective == "exscan") {
    switch (scan_algorithm(type, count, p)) {
      case ScanAlgorithm::butterfly:
        return "recursive doubling (butterfly)";
      case ScanAlgorithm::doubling:
        return "recursive doubling";
      case ScanAlgorithm::tree:
        break;
    }
    return "binomial tree (up-down sweep)";
  }
  if (collective == "scan_and_bcast") {
    if (doubling(type, count, p)) return "recursive doubling";
    return "binomial tree (one up-down sweep)";
  }
  if (collective == "allgather" || collective == "allgatherv") {
    switch (allgather_schedule(p, static_cast<std::int64_t>(count) * p, type, one_node)) {
      case AllgatherSchedule::doubling:
        return "recursive doubling";
      case AllgatherSchedule::halves:
        return "halves (ceil(log2 p) rounds)";
      case AllgatherSchedule::tree:
        break;
    }
    return "binomial tree gather + broadcast";
  }
  if (collective == "allgatherm") return "halves (ceil(log2 p) rounds), merging";
  if (collective == "barrier") return disseminates(p, one_node) ? "dissemination" : "recursive doubling";
  if (collective == "bcast" && scatter_bcast(type, count, p)) {
    return std::string("binomial scatter + ") + (pow2_floor(p) == p ? "recursive doubling" : "ring") + " allgather";
  }
  if (collective == "reduce" && reduce_halving(type, count, p)) return "recursive halving + binomial gather (Rabenseifner)";
  if (collective == "bcast" && detail::bcast_latency_tree(vector_bytes(type, count), p)) return "latency tree";
  if (collective == "bcast" || collective == "reduce" || collective == "gather" || collective == "gatherv" ||
      collective == "gatherm") {
    return "binomial tree";
  }
  throw Error("rbc::algorithm: unknown collective '" + collective + "'");
}

void barrier(const RangeComm& comm) { barrier_call(Launch::blocking, comm).wait(); }

namespace {
Request gatherm_call(Launch launch, const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
                     int root, Merger merge, const RangeComm& comm) {
  detail::check_count("gatherm", sendcount);
  detail::check_type("gatherm", type);
  detail::check_buffer("gatherm", sendbuf, sendcount, type);
  detail::check_rank("gatherm", "root", root, comm);
  if (!merge) throw Error("gatherm: no merge function given");
  if (!TypeInfo(type).contiguous()) {
    throw Error("gatherm: the datatype must have no gaps (size == extent, lower bound 0)");
  }
  if (comm.rank() == root) {
    detail::check_count("gatherm", recvcount);
    detail::check_buffer("gatherm", recvbuf, recvcount, type);
    check_apart("gatherm", "sendbuf", region(sendbuf, sendcount, type), "recvbuf", region(recvbuf, recvcount, type));
  }
  return start<Gatherm>(launch, comm, sendbuf, sendcount, recvbuf, recvcount, type, root, std::move(merge), comm);
}
}  // namespace

Request igatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type, int root,
                 Merger merge, const RangeComm& comm) {
  return gatherm_call(Launch::request, sendbuf, sendcount, recvbuf, recvcount, type, root, std::move(merge), comm);
}

void gatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type, int root,
             const Merger& merge, const RangeComm& comm) {
  gatherm_call(Launch::blocking, sendbuf, sendcount, recvbuf, recvcount, type, root, merge, comm).wait();
}

namespace {
Request allgatherm_call(Launch launch, const void* sendbuf, int sendcount, void* recvbuf, int recvcount,
                        MPI_Datatype type, Merger merge, const RangeComm& comm, AllgathermSchedule schedule) {
  detail::check_count("allgatherm", sendcount);
  detail::check_count("allgatherm", recvcount);
  detail::check_type("allgatherm", type);
  detail::check_buffer("allgatherm", sendbuf, sendcount, type);
  detail::check_buffer("allgatherm", recvbuf, recvcount, type);
  if (!merge) throw Error("allgatherm: no merge function given");
  if (!TypeInfo(type).contiguous()) {
    throw Error("allgatherm: the datatype must have no gaps (size == extent, lower bound 0)");
  }
  check_apart("allgatherm", "sendbuf", region(sendbuf, sendcount, type), "recvbuf", region(recvbuf, recvcount, type));
  if (sendcount > recvcount) {
    throw Error("allgatherm: this rank contributes " + std::to_string(sendcount) + " elements, more than the total " +
                std::to_string(recvcount));
  }
  if (schedule == AllgathermSchedule::fold) {
    return start<AllgathermFold>(launch, comm, sendbuf, sendcount, recvbuf, recvcount, type, std::move(merge), comm);
  }
  return start<AllgathermHalves>(launch, comm, sendbuf, sendcount, recvbuf, recvcount, type, std::move(merge), comm);
}
}  // namespace

int allgatherm_partial_call(int p, int rank, std::int64_t total_bytes, AllgathermSchedule schedule) {
  if (p < 1 || rank < 0 || rank >= p) {
    throw Error("allgatherm_partial_call: rank " + std::to_string(rank) + " of " + std::to_string(p) + " ranks");
  }
  if (schedule == AllgathermSchedule::halves) return halves_levels(p, rank).count;
  const Butterfly fly(p, rank);
  const bool forward = AllgathermFold::forwards(total_bytes);
  if (fly.folded_in()) return forward ? 1 : 0;
  if (fly.folds() && !forward) return 0;
  return fly.rounds() + (fly.folds() ? 1 : 0);
}

Request iallgatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type, Merger merge,
                    const RangeComm& comm, AllgathermSchedule schedule) {
  return allgatherm_call(Launch::request, sendbuf, sendcount, recvbuf, recvcount, type, std::move(merge), comm,
                         schedule);
}

void allgatherm(const void* sendbuf, int sendcount, void* recvbuf, int recvcount, MPI_Datatype type,
                const Merger& merge, const RangeComm& comm, AllgathermSchedule schedule) {
  allgatherm_call(Launch::blocking, sendbuf, sendcount, recvbuf, recvcount, type, merge, comm, schedule).wait();
}

}  // namespace rbc
