// Communicator creation with ticket #286's group-collective algorithm (groupcomm::create_group)
// beside the other ways to make the same communicators:
//   groupcomm_286     MPI_Group_range_incl + groupcomm::create_group (members only; recursive
//                     MPI_Intercomm_create + MPI_Intercomm_merge, ceil(log2 |group|) rounds)
//   mpi_create_group  MPI_Group_range_incl + MPI_Comm_create_group (members only, MPI-3)
//   mpi_split         MPI_Comm_split (collective over the parent)
//   rbc               rbc::RangeComm::split (local, no messages)
// Cases: "halves" (one split of the world into halves: the lower gets p/2 ranks) and
// "recursive" (halving down to single ranks, each level splitting the previous level's
// communicator). Time per repetition = maximum over ranks; the record holds the median, min and
// max over the repetitions. Freeing is not timed.
//
// Records: benchmark "comm_create_286" with "case" (and "variant", the same value, which the
// bench driver's records require). Under SMPI groupcomm_286 is not run: its record says
// "skipped": "no intercommunicators in SMPI" and has no times; and rbc records also carry
// host_op_s, the host CPU cost of RBC's purely local split (bench::Measurement::host_cost),
// because the simulator charges messages, not local work.
//
// Options: --cases=halves,recursive  --impls=groupcomm_286,mpi_create_group,mpi_split,rbc
//          --warmup=N --reps=N
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "groupcomm/groupcomm.hpp"
#include "rbc/rbc.hpp"

namespace {

#if defined(JANUS_SMPI) && JANUS_SMPI
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

const char* const kBenchmark = "comm_create_286";
const std::vector<std::string> kImpls = {"groupcomm_286", "mpi_create_group", "mpi_split", "rbc"};

// The lower half of [0, size) has size / 2 ranks.
int lower_size(int size) { return size / 2; }

// One way of making the half of an MPI communicator that this rank belongs to.
enum class MpiWay { kTicket286, kCreateGroup, kSplit };

class MpiHalving {
 public:
  MpiHalving(MPI_Comm world, MpiWay way) : world_(world), way_(way) {}
  MpiHalving(const MpiHalving&) = delete;
  MpiHalving& operator=(const MpiHalving&) = delete;
  ~MpiHalving() { clear(); }

  void halves() {
    if (size_of(world_) > 1) made_.push_back(half(world_, 0));
  }

  void recursive() {
    MPI_Comm current = world_;
    for (int level = 0; size_of(current) > 1; ++level) {
      current = half(current, level);
      made_.push_back(current);
    }
  }

  void clear() {
    for (MPI_Comm& comm : made_) MPI_Comm_free(&comm);
    made_.clear();
  }

 private:
  static int size_of(MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    return size;
  }

  MPI_Comm half(MPI_Comm parent, int level) const {
    int rank = 0;
    MPI_Comm_rank(parent, &rank);
    const int size = size_of(parent);
    const int h = lower_size(size);
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
    // Each level's parent is a new communicator, so one tag per level is more than enough.
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
  std::vector<MPI_Comm> made_;
};

class RbcHalving {
 public:
  explicit RbcHalving(const rbc::RangeComm& world) : world_(world) {}

  void halves() {
    const int size = world_.size();
    if (size < 2) return;
    const int h = lower_size(size);
    made_.push_back(world_.rank() < h ? world_.split(0, h - 1) : world_.split(h, size - 1));
  }

  void recursive() {
    rbc::RangeComm current = world_;
    while (current.size() > 1) {
      const int h = lower_size(current.size());
      current = current.rank() < h ? current.split(0, h - 1) : current.split(h, current.size() - 1);
      made_.push_back(current);
    }
  }

  void clear() { made_.clear(); }

 private:
  rbc::RangeComm world_;
  std::vector<rbc::RangeComm> made_;
};

template <class Halving>
bench::Summary measure_case(bench::Measurement& measure, Halving& halving, const std::string& c) {
  return measure.run([&] { c == "halves" ? halving.halves() : halving.recursive(); }, {},
                     [&] { halving.clear(); });
}

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto cases = args.get_list("cases", {"halves", "recursive"});
  const auto impls = args.get_list("impls", kImpls);
  for (const auto& c : cases) {
    if (c != "halves" && c != "recursive") {
      throw std::invalid_argument("--cases: unknown case '" + c + "' (halves, recursive)");
    }
  }
  for (const auto& impl : impls) {
    bool known = false;
    for (const auto& k : kImpls) known = known || k == impl;
    if (!known) {
      throw std::invalid_argument("--impls: unknown implementation '" + impl +
                                  "' (groupcomm_286, mpi_create_group, mpi_split, rbc)");
    }
  }
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  const rbc::RangeComm rbc_world = rbc::RangeComm::from_mpi(ctx.world());

  for (const auto& c : cases) {
    for (const auto& impl : impls) {
      auto record = ctx.record(kBenchmark);
      record.add("case", c).add("variant", c).add("implementation", impl);
      if (impl == "groupcomm_286" && !groupcomm::available()) {
        record.add("skipped", "no intercommunicators in SMPI");
        ctx.emit(record);
        ctx.note(std::string(kBenchmark) + " " + c + " " + impl + " skipped (SMPI)");
        continue;
      }
      bench::Summary s;
      if (impl == "rbc") {
        RbcHalving halving(rbc_world);
        s = measure_case(measure, halving, c);
        if (kSimulated) {
          const double host = measure.host_cost(
              [&] { c == "halves" ? halving.halves() : halving.recursive(); },
              [&] { halving.clear(); }, 20);
          record.add("host_op_s", host);
        }
      } else {
        const MpiWay way = impl == "groupcomm_286"      ? MpiWay::kTicket286
                           : impl == "mpi_create_group" ? MpiWay::kCreateGroup
                                                        : MpiWay::kSplit;
        MpiHalving halving(ctx.world(), way);
        s = measure_case(measure, halving, c);
      }
      record.add_summary(s);
      ctx.emit(record);
      ctx.note(std::string(kBenchmark) + " " + c + " " + impl + " done");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::main_with_mpi(argc, argv, {"cases", "impls"}, run);
}
