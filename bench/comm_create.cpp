// Communicator creation (paper fig. 5, thesis 8.2.2): the time to create the communicators of
// one split into halves, and of a recursive split down to single PEs (log2 p levels), with
//   rbc               rbc::RangeComm::split (local, O(1), no messages)
//   rbc_icreate_range rbc::icomm_create_group over the half as a range + wait (paper VI: the
//                     context is derived locally, the request completes at once)
//   rbc_icreate_list  rbc::icomm_create_group over the half as a rank list in DESCENDING order
//                     + wait (not a range, so the first member picks the identity and a
//                     nonblocking binomial broadcast spreads it: O(alpha log l))
//   mpi_create_group  MPI_Comm_group + MPI_Group_range_incl + MPI_Comm_create_group
//                     (collective over the new group only)
//   mpi_split         MPI_Comm_split (collective over the parent communicator)
//   groupcomm_286     MPI_Group_range_incl + groupcomm::create_group (MPI ticket #286: recursive
//                     MPI_Intercomm_create + MPI_Intercomm_merge over the members only,
//                     ceil(log2 |group|) rounds; core/groupcomm)
// Freeing is not timed. Under SMPI, records of the purely local RBC creations (rbc,
// rbc_icreate_range) also carry host_op_s, their host CPU cost measured with a steady clock (see
// bench::Measurement::host_cost): the simulator charges messages, not local work. SMPI has no
// intercommunicators: there groupcomm_286 is not run and its record says
// "skipped": "SMPI has no intercommunicators" and carries no times.
//
// Options: --modes=halves,recursive
//          --impls=rbc,rbc_icreate_range,rbc_icreate_list,mpi_create_group,mpi_split,groupcomm_286
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "groupcomm/groupcomm.hpp"
#include "rbc/comm.hpp"
#include "rbc/create_group.hpp"
#include "rbc/request.hpp"

namespace {

#ifdef JANUS_SMPI
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

const std::vector<std::string> kImpls = {"rbc",       "rbc_icreate_range", "rbc_icreate_list",
                                         "mpi_create_group", "mpi_split", "groupcomm_286"};
const char* const kNoIntercomms = "SMPI has no intercommunicators";

// Halves of [0, size): the lower one gets size / 2 ranks.
int half_of(int size) { return size / 2; }

// One way of making the communicators; halves() and recursive() keep what they create until
// clear(), so that freeing stays outside the timed region.
class Creation {
 public:
  virtual ~Creation() = default;
  virtual void halves() = 0;
  virtual void recursive() = 0;
  virtual void clear() = 0;
};

enum class RbcWay { kSplit, kIcreateRange, kIcreateList };

class RbcCreation : public Creation {
 public:
  RbcCreation(const rbc::RangeComm& world, RbcWay way) : world_(world), way_(way) {}

  void halves() override {
    if (world_.size() < 2) return;
    keep_.push_back(half(world_));
  }

  void recursive() override {
    rbc::RangeComm current = world_;
    while (current.size() > 1) {
      current = half(current);
      keep_.push_back(current);
    }
  }

  void clear() override { keep_.clear(); }

 private:
  rbc::RangeComm half(const rbc::RangeComm& parent) const {
    const int size = parent.size();
    const int h = half_of(size);
    const bool lower = parent.rank() < h;
    const int first = lower ? 0 : h;
    const int last = lower ? h - 1 : size - 1;
    if (way_ == RbcWay::kSplit) return parent.split(first, last);
    rbc::RangeComm result;
    if (way_ == RbcWay::kIcreateRange) {
      rbc::icomm_create_group(parent, rbc::Group::range(first, last), 0, &result).wait();
      return result;
    }
    // Descending order: the same members, but no longer a range, so creation communicates.
    std::vector<int> ranks;
    for (int r = last; r >= first; --r) ranks.push_back(r);
    rbc::icomm_create_group(parent, rbc::Group::list(std::move(ranks)), 0, &result).wait();
    return result;
  }

  rbc::RangeComm world_;
  RbcWay way_;
  std::vector<rbc::RangeComm> keep_;
};

enum class MpiWay { kCreateGroup, kSplit, kTicket286 };

class MpiCreation : public Creation {
 public:
  MpiCreation(MPI_Comm world, MpiWay way) : world_(world), way_(way) {}
  MpiCreation(const MpiCreation&) = delete;
  MpiCreation& operator=(const MpiCreation&) = delete;
  ~MpiCreation() override { clear(); }

  void halves() override {
    if (size_of(world_) > 1) keep_.push_back(half(world_, 0));
  }

  void recursive() override {
    MPI_Comm current = world_;
    for (int level = 0; size_of(current) > 1; ++level) {
      current = half(current, level);
      keep_.push_back(current);
    }
  }

  void clear() override {
    for (MPI_Comm& c : keep_) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
    keep_.clear();
  }

 private:
  static int size_of(MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    return size;
  }

  // The half of `parent` this PE belongs to. Each level's parent is a new communicator, so the
  // level number is a sufficient tag for the group-based ways.
  MPI_Comm half(MPI_Comm parent, int level) const {
    int rank = 0;
    MPI_Comm_rank(parent, &rank);
    const int size = size_of(parent);
    const int h = half_of(size);
    const bool lower = rank < h;
    MPI_Comm result = MPI_COMM_NULL;
    if (way_ == MpiWay::kSplit) {
      MPI_Comm_split(parent, lower ? 0 : 1, rank, &result);
      return result;
    }
    MPI_Group parent_group;
    MPI_Group group;
    MPI_Comm_group(parent, &parent_group);
    int range[1][3] = {{lower ? 0 : h, lower ? h - 1 : size - 1, 1}};
    MPI_Group_range_incl(parent_group, 1, range, &group);
    if (way_ == MpiWay::kTicket286) {
      groupcomm::create_group(parent, group, level, &result);
    } else {
      MPI_Comm_create_group(parent, group, level, &result);
    }
    MPI_Group_free(&group);
    MPI_Group_free(&parent_group);
    return result;
  }

  MPI_Comm world_;
  MpiWay way_;
  std::vector<MPI_Comm> keep_;
};

std::unique_ptr<Creation> make_creation(const std::string& impl, const rbc::RangeComm& rbc_world,
                                        MPI_Comm world) {
  if (impl == "rbc") return std::make_unique<RbcCreation>(rbc_world, RbcWay::kSplit);
  if (impl == "rbc_icreate_range") return std::make_unique<RbcCreation>(rbc_world, RbcWay::kIcreateRange);
  if (impl == "rbc_icreate_list") return std::make_unique<RbcCreation>(rbc_world, RbcWay::kIcreateList);
  if (impl == "mpi_create_group") return std::make_unique<MpiCreation>(world, MpiWay::kCreateGroup);
  if (impl == "mpi_split") return std::make_unique<MpiCreation>(world, MpiWay::kSplit);
  return std::make_unique<MpiCreation>(world, MpiWay::kTicket286);
}

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto modes = args.get_list("modes", {"halves", "recursive"});
  const auto impls = args.get_list("impls", kImpls);
  for (const auto& mode : modes) {
    if (mode != "halves" && mode != "recursive") {
      throw std::invalid_argument("--modes: unknown mode '" + mode + "' (halves, recursive)");
    }
  }
  for (const auto& impl : impls) {
    if (std::find(kImpls.begin(), kImpls.end(), impl) == kImpls.end()) {
      throw std::invalid_argument("--impls: unknown implementation '" + impl +
                                  "' (rbc, rbc_icreate_range, rbc_icreate_list, mpi_create_group, "
                                  "mpi_split, groupcomm_286)");
    }
  }
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(ctx.world());

  for (const auto& mode : modes) {
    for (const auto& impl : impls) {
      auto record = ctx.record("comm_create");
      record.add("variant", mode).add("implementation", impl);
      if (impl == "groupcomm_286" && !groupcomm::available()) {
        record.add("skipped", kNoIntercomms);
        ctx.emit(record);
        ctx.note("comm_create " + mode + " " + impl + " skipped: " + kNoIntercomms);
        continue;
      }
      const auto creation = make_creation(impl, world, ctx.world());
      auto op = [&] { mode == "halves" ? creation->halves() : creation->recursive(); };
      auto clear = [&] { creation->clear(); };
      record.add_summary(measure.run(op, {}, clear));
      if (kSimulated && (impl == "rbc" || impl == "rbc_icreate_range")) {
        record.add("host_op_s", measure.host_cost(op, clear, 20));
      }
      ctx.emit(record);
      ctx.note("comm_create " + mode + " " + impl + " done");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::main_with_mpi(argc, argv, {"modes", "impls"}, run);
}
