#include "groupcomm/groupcomm.hpp"

#include <numeric>
#include <string>
#include <vector>

namespace groupcomm {
namespace {

const char* const kWhere = "groupcomm::create_group: ";

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw MpiError(std::string(kWhere) + call + " failed: " +
                     (length > 0 ? std::string(text, length) : "error code " + std::to_string(code)),
                 code);
}

// Frees a group on every path out of the scope, error paths included.
class OwnedGroup {
 public:
  OwnedGroup() = default;
  OwnedGroup(const OwnedGroup&) = delete;
  OwnedGroup& operator=(const OwnedGroup&) = delete;
  ~OwnedGroup() {
    if (group_ != MPI_GROUP_NULL) MPI_Group_free(&group_);
  }
  MPI_Group* out() { return &group_; }
  MPI_Group get() const { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

// What a member needs to run the algorithm, all derived locally from the arguments.
struct Membership {
  int group_rank = 0;
  int group_size = 0;
  std::vector<int> parent_ranks;  // parent_ranks[i] = rank in the parent of group rank i
};

int tag_upper_bound(MPI_Comm parent) {
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(parent, MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  // 32767 is the least upper bound the MPI standard guarantees.
  return found ? *static_cast<int*>(value) : 32767;
}

Membership check_arguments(MPI_Comm parent, MPI_Group group, int tag) {
  if (parent == MPI_COMM_NULL) {
    throw InvalidArgument(std::string(kWhere) + "the parent communicator is MPI_COMM_NULL");
  }
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(parent, &inter), "MPI_Comm_test_inter");
  if (inter) {
    throw InvalidArgument(std::string(kWhere) +
                          "the parent is an intercommunicator; an intracommunicator is required");
  }
  if (group == MPI_GROUP_NULL) {
    throw InvalidArgument(std::string(kWhere) + "the group is MPI_GROUP_NULL");
  }
  const int tag_ub = tag_upper_bound(parent);
  if (tag < 0 || tag > tag_ub) {
    throw InvalidArgument(std::string(kWhere) + "tag " + std::to_string(tag) +
                          " is outside [0, " + std::to_string(tag_ub) + "] (MPI_TAG_UB)");
  }

  Membership m;
  check_mpi(MPI_Group_size(group, &m.group_size), "MPI_Group_size");
  check_mpi(MPI_Group_rank(group, &m.group_rank), "MPI_Group_rank");
  if (m.group_rank == MPI_UNDEFINED) {
    int parent_rank = -1;
    check_mpi(MPI_Comm_rank(parent, &parent_rank), "MPI_Comm_rank");
    throw NotAMember(std::string(kWhere) + "rank " + std::to_string(parent_rank) +
                     " of the parent is not a member of the group (of size " +
                     std::to_string(m.group_size) + "); only the group's members may call it");
  }

  OwnedGroup parent_group;
  check_mpi(MPI_Comm_group(parent, parent_group.out()), "MPI_Comm_group");
  std::vector<int> group_ranks(m.group_size);
  std::iota(group_ranks.begin(), group_ranks.end(), 0);
  m.parent_ranks.assign(m.group_size, MPI_UNDEFINED);
  check_mpi(MPI_Group_translate_ranks(group, m.group_size, group_ranks.data(), parent_group.get(),
                                      m.parent_ranks.data()),
            "MPI_Group_translate_ranks");
  for (int i = 0; i < m.group_size; ++i) {
    if (m.parent_ranks[i] == MPI_UNDEFINED) {
      throw InvalidArgument(std::string(kWhere) + "group rank " + std::to_string(i) +
                            " is not a process of the parent communicator; the group must be a "
                            "subgroup of the parent's group");
    }
  }
  return m;
}

// The ticket's recursive create/merge. Invariant at the start of a round of width w: `current`
// holds the members whose group ranks share this member's block [b*w, (b+1)*w) ∩ [0, n), ranked
// in group order, with the block's first member as rank 0.
Comm merge_blocks(MPI_Comm parent, int tag, const Membership& m) {
  MPI_Comm self = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_SELF, &self), "MPI_Comm_dup(MPI_COMM_SELF)");
  Comm current(self);
  const long long n = m.group_size;
  for (long long width = 1; width < n; width *= 2) {
    const long long block = m.group_rank / width;
    const bool left = block % 2 == 0;
    const long long partner_first = left ? (block + 1) * width : (block - 1) * width;
    // A left block at the end of the group has no right partner in this round: it waits.
    if (partner_first >= n) continue;
    MPI_Comm inter_handle = MPI_COMM_NULL;
    check_mpi(MPI_Intercomm_create(current.get(), 0, parent, m.parent_ranks[partner_first], tag,
                                   &inter_handle),
              "MPI_Intercomm_create");
    Comm inter(inter_handle);
    // high = 0 for the left block puts its processes first: rank order stays group order.
    MPI_Comm merged = MPI_COMM_NULL;
    check_mpi(MPI_Intercomm_merge(inter.get(), left ? 0 : 1, &merged), "MPI_Intercomm_merge");
    current = Comm(merged);
  }
  return current;
}

}  // namespace

bool available() noexcept {
#if defined(JANUS_SMPI) && JANUS_SMPI
  return false;
#else
  return true;
#endif
}

Comm& Comm::operator=(Comm&& other) noexcept {
  if (this != &other) {
    reset();
    comm_ = other.release();
  }
  return *this;
}

MPI_Comm Comm::release() noexcept {
  const MPI_Comm comm = comm_;
  comm_ = MPI_COMM_NULL;
  return comm;
}

void Comm::reset() noexcept {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

int create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm* newcomm) {
  if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
  if (!available()) throw Unsupported(kUnsupportedMessage);
  if (newcomm == nullptr) {
    throw InvalidArgument(std::string(kWhere) + "newcomm is a null pointer");
  }
  const Membership membership = check_arguments(parent, group, tag);
  *newcomm = merge_blocks(parent, tag, membership).release();
  return MPI_SUCCESS;
}

Comm create(MPI_Comm parent, MPI_Group group, int tag) {
  MPI_Comm comm = MPI_COMM_NULL;
  create_group(parent, group, tag, &comm);
  return Comm(comm);
}

}  // namespace groupcomm
