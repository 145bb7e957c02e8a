// Charges MPI communicator creation, datatype commits and the library's own reductions at their
// calibrated cost in SMPI.
//
// SMPI charges only the messages of its own creation algorithms; a real library also does
// local work (context ids, group tables) that costs microseconds. This library is preloaded
// into the simulator process (sim/runner: smpirun -wrapper "env LD_PRELOAD=<this .so>"), so its
// MPI_Comm_* definitions come before libsimgrid's in the global symbol order and the program's
// calls land here (a definition inside the program's own shared object would not interpose:
// smpirun dlopens it RTLD_LOCAL). Each wrapper calls SMPI's PMPI_* function and then advances
// the calling rank's simulated time by A + B * log2(p) + C * p, p the size of the parent
// communicator, with "A,B" or "A,B,C" in seconds from JANUS_CHARGE_COMM_CREATE_GROUP, _SPLIT,
// _DUP and _FREE (C: libraries whose groups are explicit rank tables, linear in p).
//
// MPI_Comm_split is routed through MPI_Allgather + MPI_Comm_create_group (with the same
// result: members of a color ordered by (key, rank)): SMPI's own split gathers everything to
// rank 0 and sends each member its group, a linear algorithm no tuned library uses, which
// overshoots the real cost once per-message overheads are charged.
//
// MPI_Type_commit is charged JANUS_CHARGE_TYPE_COMMIT ("A,0": a datatype made, committed and
// freed), which SMPI does not charge either.
//
// MPI_Reduce, MPI_Allreduce, MPI_Scan and MPI_Exscan are charged the operator applications the
// calling rank makes in SMPI's algorithm for the call (reduction_model.hpp), each at the cost
// core/cost charges RBC's own (JANUS_COST_REDUCE), for the selector JANUS_CHARGE_COLL_SELECTOR
// names: SMPI applies the operator of its own collectives without advancing time, so a profile
// that charges RBC's operator would otherwise charge one side of every comparison only.
//
// JANUS_CHARGE_TRACE=1 prints one line per charged call (to check that it interposes).
#include <mpi.h>
#include <simgrid/actor.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cost/charge.hpp"
#include "sim/calibration/reduction_model.hpp"

namespace {

// "A,B[,C]" -> A + B * log2(p) + C * p; 0 when unset. A malformed value aborts with a message: a silently
// ignored charge would make a calibrated run quietly wrong.
double modelled(const char* variable, int p) {
  const char* spec = std::getenv(variable);
  if (spec == nullptr || *spec == '\0') return 0.0;
  char* end = nullptr;
  errno = 0;
  const double a = std::strtod(spec, &end);
  double b = 0;
  double c = 0;
  bool ok = end != spec && *end == ',' && errno == 0;
  if (ok) {
    const char* rest = end + 1;
    b = std::strtod(rest, &end);
    ok = end != rest && errno == 0;
    if (ok && *end == ',') {
      rest = end + 1;
      c = std::strtod(rest, &end);
      ok = end != rest && errno == 0;
    }
    ok = ok && *end == '\0' && std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && a >= 0 &&
         b >= 0 && c >= 0;
  }
  if (!ok) {
    std::fprintf(stderr, "charge_preload: %s='%s' is not \"A,B[,C]\" (seconds, non-negative)\n",
                 variable, spec);
    std::abort();
  }
  return a + b * std::log2(static_cast<double>(std::max(p, 1))) + c * p;
}

// Keeps the calling rank busy for `seconds` of simulated time: a sleep, as SMPI applies its own
// per-message overheads and as core/cost charges local work.
void advance(double seconds) {
  if (seconds > 0) sg_actor_sleep_for(seconds);
}

void charge(const char* variable, const char* call, MPI_Comm comm) {
  int p = 1;
  if (comm != MPI_COMM_NULL) PMPI_Comm_size(comm, &p);
  const double seconds = modelled(variable, p);
  const char* trace = std::getenv("JANUS_CHARGE_TRACE");
  if (trace != nullptr && *trace == '1') {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "charge_preload: rank %d %s p=%d charged %.3g s\n", rank, call, p, seconds);
  }
  advance(seconds);
}

constexpr int kSplitTag = 0x5a17;

int split_via_create_group(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  int rank = 0;
  int size = 0;
  int code = PMPI_Comm_rank(comm, &rank);
  if (code == MPI_SUCCESS) code = PMPI_Comm_size(comm, &size);
  if (code != MPI_SUCCESS) return code;
  const int mine[2] = {color, key};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  code = PMPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  if (code != MPI_SUCCESS) return code;
  if (color == MPI_UNDEFINED) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<int> members;
  for (int r = 0; r < size; ++r) {
    if (all[2 * r] == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [&all](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  MPI_Group parent = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  code = PMPI_Comm_group(comm, &parent);
  if (code == MPI_SUCCESS) {
    code = PMPI_Group_incl(parent, static_cast<int>(members.size()), members.data(), &group);
  }
  if (code == MPI_SUCCESS) code = PMPI_Comm_create_group(comm, group, kSplitTag, out);
  if (group != MPI_GROUP_NULL) PMPI_Group_free(&group);
  if (parent != MPI_GROUP_NULL) PMPI_Group_free(&parent);
  return code;
}

const char* call_name(reduction_model::Call call) {
  switch (call) {
    case reduction_model::Call::reduce: return "MPI_Reduce";
    case reduction_model::Call::allreduce: return "MPI_Allreduce";
    case reduction_model::Call::scan: return "MPI_Scan";
    case reduction_model::Call::exscan: return "MPI_Exscan";
  }
  return "?";
}

// Advances the calling rank by its operator applications in `call`, once the call returns: a
// child's applications then do not delay its parent, whose own charge covers the path it heads.
void charge_reduction(reduction_model::Call call, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  const char* selector = std::getenv("JANUS_CHARGE_COLL_SELECTOR");
  const char* spec = std::getenv("JANUS_COST_REDUCE");
  if (selector == nullptr || spec == nullptr || *spec == '\0' || count <= 0) return;
  int p = 1, rank = 0, type_size = 0, commutative = 1;
  if (PMPI_Comm_size(comm, &p) != MPI_SUCCESS || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
      PMPI_Type_size(type, &type_size) != MPI_SUCCESS || PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS) {
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(type_size);
  double seconds = 0;
  for (const reduction_model::Term& term :
       reduction_model::applications(selector, call, count, bytes, p, rank, root, commutative != 0)) {
    seconds += term.count * cost::modelled_seconds(cost::Kernel::reduce, term.bytes, spec);
  }
  const char* trace = std::getenv("JANUS_CHARGE_TRACE");
  if (trace != nullptr && *trace == '1') {
    std::fprintf(stderr, "charge_preload: rank %d %s of %zu bytes p=%d charged %.3g s\n", rank, call_name(call),
                 bytes, p, seconds);
  }
  advance(seconds);
}

}  // namespace

extern "C" {

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  const int code = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  if (code == MPI_SUCCESS) charge_reduction(reduction_model::Call::reduce, count, type, op, root, comm);
  return code;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const int code = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  if (code == MPI_SUCCESS) charge_reduction(reduction_model::Call::allreduce, count, type, op, 0, comm);
  return code;
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const int code = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  if (code == MPI_SUCCESS) charge_reduction(reduction_model::Call::scan, count, type, op, 0, comm);
  return code;
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const int code = PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  if (code == MPI_SUCCESS) charge_reduction(reduction_model::Call::exscan, count, type, op, 0, comm);
  return code;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  const int code = PMPI_Comm_create_group(comm, group, tag, newcomm);
  if (code == MPI_SUCCESS) charge("JANUS_CHARGE_COMM_CREATE_GROUP", "MPI_Comm_create_group", comm);
  return code;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int code = split_via_create_group(comm, color, key, newcomm);
  if (code == MPI_SUCCESS) charge("JANUS_CHARGE_COMM_SPLIT", "MPI_Comm_split", comm);
  return code;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int code = PMPI_Comm_dup(comm, newcomm);
  if (code == MPI_SUCCESS) charge("JANUS_CHARGE_COMM_DUP", "MPI_Comm_dup", comm);
  return code;
}

int MPI_Comm_free(MPI_Comm* comm) {
  int p = 1;
  if (comm != nullptr && *comm != MPI_COMM_NULL) PMPI_Comm_size(*comm, &p);
  const int code = PMPI_Comm_free(comm);
  if (code == MPI_SUCCESS) {
    advance(modelled("JANUS_CHARGE_COMM_FREE", p));
  }
  return code;
}

// A datatype's creation, commit and free, charged at once (the commit is the call every
// program makes exactly once per type it uses).
int MPI_Type_commit(MPI_Datatype* type) {
  const int code = PMPI_Type_commit(type);
  if (code == MPI_SUCCESS) charge("JANUS_CHARGE_TYPE_COMMIT", "MPI_Type_commit", MPI_COMM_NULL);
  return code;
}

}  // extern "C"
