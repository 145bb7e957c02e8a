#pragma once

// Group-collective communicator creation after MPI Forum ticket #286 (Dinan et al., "Noncollective
// communicator creation in MPI", EuroMPI 2011): a communicator over `group` built by the members
// of `group` alone, from MPI-2 calls. It is the user-space baseline of MPI-3's
// MPI_Comm_create_group in the communicator-creation benchmark.
//
// Algorithm: every member starts with a one-process communicator (a duplicate of MPI_COMM_SELF).
// In round k = 0, 1, ... the members are in blocks of 2^k consecutive group ranks; block 2j
// (left) and block 2j+1 (right) join: their rank-0 processes act as leaders and meet over the
// parent communicator with `tag` (MPI_Intercomm_create), and the intercommunicator is merged
// with the left block first (MPI_Intercomm_merge). After ceil(log2 |group|) rounds one
// communicator remains whose rank order is the group's order. Intermediate communicators are
// freed as soon as they are merged.
//
// Backends: the algorithm needs intercommunicators, which SimGrid SMPI 3.32 does not implement.
// Under SMPI (JANUS_SMPI builds) available() is false and every creation throws Unsupported;
// the library still builds and links there so that two-backend programs can ask and skip.

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace groupcomm {

// The backend cannot run the algorithm (SimGrid SMPI: no intercommunicators).
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument: null or inter- parent communicator, null group, a group that is not a subgroup
// of the parent, a tag outside [0, MPI_TAG_UB], a null output pointer.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The caller is not a member of `group`. Unlike MPI_Comm_create_group, which returns
// MPI_COMM_NULL to non-members, this is an error: only members may call, because the others'
// participation is not expected and would hint at mismatched groups.
class NotAMember : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// An MPI call inside the algorithm returned an error (only possible when the parent's error
// handler returns errors); the message names the call and MPI's error string.
class MpiError : public std::runtime_error {
 public:
  MpiError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// The message of Unsupported (documented and checked by the tests).
inline constexpr const char* kUnsupportedMessage =
    "groupcomm: intercommunicators are not available under SimGrid SMPI";

// Whether this build can create communicators (false under SMPI).
bool available() noexcept;

// Creates in *newcomm the communicator over `group`, ranked in the group's order. Called by
// every member of `group` (a subgroup of parent's group, in any order, identical on all members)
// and by no other process; only members communicate, point-to-point over `parent` with `tag`.
// Concurrent creations that share processes must use different tags, like
// MPI_Comm_create_group. Arguments are checked locally before any communication.
//
// Returns MPI_SUCCESS. Errors are exceptions (Unsupported, InvalidArgument, NotAMember,
// MpiError); then *newcomm (if newcomm is not null) is MPI_COMM_NULL and nothing is leaked.
// The caller frees *newcomm with MPI_Comm_free.
int create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm* newcomm);

// Owns one MPI communicator and frees it on destruction (move-only). Must be destroyed before
// MPI_Finalize.
class Comm {
 public:
  Comm() = default;
  explicit Comm(MPI_Comm comm) noexcept : comm_(comm) {}
  Comm(Comm&& other) noexcept : comm_(other.release()) {}
  Comm& operator=(Comm&& other) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  MPI_Comm get() const noexcept { return comm_; }
  explicit operator bool() const noexcept { return comm_ != MPI_COMM_NULL; }
  // Gives up ownership; the caller frees the returned communicator.
  MPI_Comm release() noexcept;
  // Frees the owned communicator (if any).
  void reset() noexcept;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// create_group returning an owning handle.
Comm create(MPI_Comm parent, MPI_Group group, int tag);

}  // namespace groupcomm
