// Communicator creation (paper fig. 5, thesis 8.2.2): the time to create the communicators of
// one split into halves, and of a recursive split down to single PEs (log2 p levels), with
//   rbc               rbc::RangeComm::split (local, O(1), no messages)
//   mpi_create_group  MPI_Comm_group + MPI_Group_range_incl + MPI_Comm_create_group
//                     (collective over the new group only)
//   mpi_split         MPI_Comm_split (collective over the parent communicator)
// Freeing the MPI communicators is not timed. Under SMPI, RBC records also carry host_op_s, the
// host CPU cost of RBC's (purely local) creation, measured with a steady clock (see
// bench::Measurement::host_cost): the simulator charges MPI's messages, not local work.
//
// Options: --modes=halves,recursive  --impls=rbc,mpi_create_group,mpi_split
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"

namespace {

#ifdef JANUS_SMPI
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

// Halves of [0, size): the lower one gets size / 2 ranks.
int half_of(int size) { return size / 2; }

class RbcCreation {
 public:
  explicit RbcCreation(const rbc::RangeComm& world) : world_(world) {}

  void halves() {
    const int h = half_of(world_.size());
    if (world_.size() < 2) return;
    keep_.push_back(world_.rank() < h ? world_.split(0, h - 1) : world_.split(h, world_.size() - 1));
  }

  void recursive() {
    rbc::RangeComm current = world_;
    while (current.size() > 1) {
      const int h = half_of(current.size());
      current = current.rank() < h ? current.split(0, h - 1) : current.split(h, current.size() - 1);
      keep_.push_back(current);
    }
  }

  void clear() { keep_.clear(); }

 private:
  rbc::RangeComm world_;
  std::vector<rbc::RangeComm> keep_;
};

class MpiCreation {
 public:
  MpiCreation(MPI_Comm world, bool use_split) : world_(world), use_split_(use_split) {}

  void halves() { keep_.push_back(half(world_)); }

  void recursive() {
    MPI_Comm current = world_;
    int size = 0;
    MPI_Comm_size(current, &size);
    while (size > 1) {
      current = half(current);
      keep_.push_back(current);
      MPI_Comm_size(current, &size);
    }
  }

  void clear() {
    for (MPI_Comm& c : keep_) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
    keep_.clear();
  }

 private:
  // The half of `parent` this PE belongs to.
  MPI_Comm half(MPI_Comm parent) {
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    const int h = half_of(size);
    const bool lower = rank < h;
    MPI_Comm result = MPI_COMM_NULL;
    if (use_split_) {
      MPI_Comm_split(parent, lower ? 0 : 1, rank, &result);
      return result;
    }
    MPI_Group parent_group;
    MPI_Group group;
    MPI_Comm_group(parent, &parent_group);
    int range[1][3] = {{lower ? 0 : h, lower ? h - 1 : size - 1, 1}};
    MPI_Group_range_incl(parent_group, 1, range, &group);
    MPI_Comm_create_group(parent, group, 0, &result);
    MPI_Group_free(&group);
    MPI_Group_free(&parent_group);
    return result;
  }

  MPI_Comm world_;
  bool use_split_;
  std::vector<MPI_Comm> keep_;
};

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto modes = args.get_list("modes", {"halves", "recursive"});
  const auto impls = args.get_list("impls", {"rbc", "mpi_create_group", "mpi_split"});
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(ctx.world());

  for (const auto& mode : modes) {
    if (mode != "halves" && mode != "recursive") {
      throw std::invalid_argument("--modes: unknown mode '" + mode + "' (halves, recursive)");
    }
    for (const auto& impl : impls) {
      bench::Summary s;
      double host = -1;
      if (impl == "rbc") {
        RbcCreation creation(world);
        auto op = [&] { mode == "halves" ? creation.halves() : creation.recursive(); };
        s = measure.run(op, {}, [&] { creation.clear(); });
        if (kSimulated) host = measure.host_cost(op, [&] { creation.clear(); }, 20);
      } else if (impl == "mpi_create_group" || impl == "mpi_split") {
        MpiCreation creation(ctx.world(), impl == "mpi_split");
        s = measure.run([&] { mode == "halves" ? creation.halves() : creation.recursive(); }, {},
                        [&] { creation.clear(); });
      } else {
        throw std::invalid_argument("--impls: unknown implementation '" + impl +
                                    "' (rbc, mpi_create_group, mpi_split)");
      }
      auto record = ctx.record("comm_create");
      record.add("variant", mode).add("implementation", impl).add_summary(s);
      if (host >= 0) record.add("host_op_s", host);
      ctx.emit(record);
      ctx.note("comm_create " + mode + " " + impl + " done");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::main_with_mpi(argc, argv, {"modes", "impls"}, run);
}
