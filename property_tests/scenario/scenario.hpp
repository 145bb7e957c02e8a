#pragma once

// A scenario: everything one run of a scenario program does, as plain data. The RapidCheck
// driver generates it, serializes it to command-line tokens, and the scenario program (built for
// Open MPI and for SMPI) parses the same tokens back. Tokens use only [A-Za-z0-9.,/=_-], so a
// printed command line replays without quoting.
//
//   np=5 seed=42 c=w c=s0.3.1/l1.1 o=allreduce.1.0.3.i.sum.n.0 m=0.1.2.7.3.a.0 e=tag.1

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace props {

// One step of a communicator chain, applied to the previous communicator.
struct Step {
  enum Kind { kSplit, kJanusLeft, kJanusRight };
  Kind kind = kSplit;
  int a = 0;       // split: first; janus: left_last
  int b = 0;       // split: last; janus: right_first
  int stride = 1;  // split only
};

// A communicator: a from_mpi handle of MPI_COMM_WORLD followed by a chain of steps (empty chain
// = the handle itself). Handle 0 is the one every scenario has; handle 1 a second handle on the
// same MPI communicator, which must be as independent of the first as any other communicator.
// Two equal specs are two communicators (each split makes a new one).
struct CommSpec {
  int handle = 0;
  std::vector<Step> steps;
};

enum class Coll {
  kBcast, kReduce, kAllreduce, kScan, kExscan, kScanAndBcast, kGather, kGatherv, kAllgather,
  kAllgatherv, kBarrier, kGatherm
};

// Element types: int, int64, double, a derived type with gaps (two ints in a 16-byte extent),
// and a 2x2 unsigned matrix (reduced by a non-commutative user op).
enum class Type { kInt, kLong, kDouble, kGapped, kMatrix };

// kUser is the type's own user-defined MPI_Op (gapped: element-wise sum; matrix: product).
enum class Op { kSum, kMax, kMin, kBxor, kUser };

struct CollOp {
  Coll kind = Coll::kBarrier;
  int comm = 0;
  int root = 0;   // member rank of the communicator
  int count = 0;  // elements per rank (gatherv/allgatherv: base count, varied per rank)
  Type type = Type::kInt;
  Op op = Op::kSum;
  bool nonblocking = false;
  int round = 0;
};

// A point-to-point message on communicator `comm` from member `src` to member `dst`. The
// receiver receives all messages of one (comm, dst, tag, round) group the same way: with
// MPI_ANY_SOURCE if any message of the group says so, blocking if any says so.
struct Message {
  int comm = 0;
  int src = 0;
  int dst = 0;
  int tag = 0;
  int count = 1;  // ints, >= 1
  bool any_source = false;
  bool blocking = false;
  int round = 0;
};

// A call with one bad argument, made by every member of `comm` (or, for kNonMember, by every
// rank that is not a member). Each must throw rbc::Error with the documented message.
enum class Bad {
  kSplitStride,      // split(0, 0, 0)
  kSplitReversed,    // split(1, 0)
  kSplitTooLarge,    // split(0, size)
  kJanusGap,         // janus_split(0, 2): the halves miss rank 1
  kJanusBound,       // janus_split(size, 0)
  kRootLarge,        // bcast root = size
  kRootNegative,     // reduce root = -1
  kCountNegative,    // allreduce count = -1
  kTagLarge,         // send tag = max_user_tag + 1
  kTagNegative,      // irecv tag = -2
  kAnyTag,           // recv tag = MPI_ANY_TAG
  kDestLarge,        // send dest = size
  kNullType,         // bcast type MPI_DATATYPE_NULL
  kNullOp,           // allreduce op MPI_OP_NULL
  kNonMember,        // a non-member calls barrier
};

struct BadCall {
  Bad kind = Bad::kRootLarge;
  int comm = 0;
};

struct Scenario {
  int np = 1;
  std::uint64_t seed = 0;
  std::vector<CommSpec> comms;  // comms[0] is always the world
  std::vector<CollOp> colls;
  std::vector<Message> messages;
  std::vector<BadCall> bad;
};

// World ranks of the members of `comm` in member order, or nullopt if a step does not fit
// (the same arithmetic RBC uses, via rbc::Range).
std::optional<std::vector<int>> members_of(const CommSpec& comm, int np);

// Throws std::invalid_argument naming the offending part if the scenario does not fit np.
void validate(const Scenario& s);

std::vector<std::string> to_tokens(const Scenario& s);
Scenario from_tokens(const std::vector<std::string>& tokens);
std::string join(const std::vector<std::string>& tokens);

// A short human-readable summary (used in RapidCheck's counterexample output).
std::string describe(const Scenario& s);

const char* name(Coll c);
const char* name(Type t);
const char* name(Op o);
const char* name(Bad b);

// Reductions take an op; the rest ignore it.
bool is_reduction(Coll c);
// The ops allowed for a type in a reduction.
std::vector<Op> ops_for(Type t);

}  // namespace props
