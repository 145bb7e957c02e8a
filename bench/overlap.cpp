// Overlapping communicators (paper fig. 6): groups of 4 consecutive PEs, neighbouring groups
// sharing one PE (group g = PEs 3g..3g+3), so every PE 3g with 0 < g < groups belongs to two
// groups. Time to create all groups with
//   rbc                           rbc::RangeComm::split (local)
//   mpi_create_group_cascaded     MPI_Comm_create_group; a shared PE creates its left group
//                                 first, so group g waits for group g-1: a chain through all
//                                 groups
//   mpi_create_group_alternating  a shared PE creates its even group first: all even groups,
//                                 then all odd groups, in parallel (constant depth)
//   mpi_split                     two MPI_Comm_split calls over all PEs (even groups, odd groups)
//
// Options: --impls=rbc,mpi_create_group_cascaded,mpi_create_group_alternating,mpi_split
#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"

namespace {

constexpr int kGroupSize = 4;
constexpr int kStep = kGroupSize - 1;

// Groups over p PEs: 0 for p == 1, else ceil((p - 1) / 3) (the last one may be shorter).
int group_count(int p) { return p < 2 ? 0 : (p - 1 + kStep - 1) / kStep; }
int group_first(int g) { return g * kStep; }
int group_last(int g, int p) { return std::min(g * kStep + kStep, p - 1); }

// The groups containing `rank`, in increasing order (one or two).
std::vector<int> groups_of(int rank, int p) {
  std::vector<int> out;
  for (int g = std::max(0, (rank - kStep + kStep - 1) / kStep); g < group_count(p); ++g) {
    if (group_first(g) > rank) break;
    if (rank <= group_last(g, p)) out.push_back(g);
  }
  return out;
}

class Overlap {
 public:
  Overlap(MPI_Comm world, std::string impl) : world_(world), impl_(std::move(impl)) {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
    MPI_Comm_group(world, &world_group_);
    rbc_world_ = rbc::RangeComm::from_mpi(world);
  }
  ~Overlap() {
    clear();
    MPI_Group_free(&world_group_);
  }
  Overlap(const Overlap&) = delete;
  Overlap& operator=(const Overlap&) = delete;

  void create() {
    std::vector<int> mine = groups_of(rank_, size_);
    if (impl_ == "rbc") {
      for (int g : mine) rbc_keep_.push_back(rbc_world_.split(group_first(g), group_last(g, size_)));
    } else if (impl_ == "mpi_create_group_cascaded") {
      for (int g : mine) create_group(g);
    } else if (impl_ == "mpi_create_group_alternating") {
      if (mine.size() == 2 && mine[0] % 2 == 1) std::swap(mine[0], mine[1]);
      for (int g : mine) create_group(g);
    } else if (impl_ == "mpi_split") {
      for (int parity = 0; parity < 2; ++parity) {
        int color = MPI_UNDEFINED;
        for (int g : mine) {
          if (g % 2 == parity) color = g;
        }
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Comm_split(world_, color, rank_, &c);
        if (c != MPI_COMM_NULL) mpi_keep_.push_back(c);
      }
    } else {
      throw std::invalid_argument(
          "--impls: unknown implementation '" + impl_ +
          "' (rbc, mpi_create_group_cascaded, mpi_create_group_alternating, mpi_split)");
    }
  }

  void clear() {
    rbc_keep_.clear();
    for (MPI_Comm& c : mpi_keep_) MPI_Comm_free(&c);
    mpi_keep_.clear();
  }

 private:
  void create_group(int g) {
    int range[1][3] = {{group_first(g), group_last(g, size_), 1}};
    MPI_Group group;
    MPI_Group_range_incl(world_group_, 1, range, &group);
    MPI_Comm c = MPI_COMM_NULL;
    // Distinct tags keep the two creations of a shared PE apart.
    MPI_Comm_create_group(world_, group, g % 2, &c);
    MPI_Group_free(&group);
    mpi_keep_.push_back(c);
  }

  MPI_Comm world_;
  std::string impl_;
  int rank_ = 0;
  int size_ = 1;
  MPI_Group world_group_;
  rbc::RangeComm rbc_world_;
  std::vector<rbc::RangeComm> rbc_keep_;
  std::vector<MPI_Comm> mpi_keep_;
};

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto impls = args.get_list("impls", {"rbc", "mpi_create_group_cascaded",
                                             "mpi_create_group_alternating", "mpi_split"});
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  for (const auto& impl : impls) {
    Overlap overlap(ctx.world(), impl);
    bench::Summary s = measure.run([&] { overlap.create(); }, {}, [&] { overlap.clear(); });
    double host = -1;
#ifdef JANUS_SMPI
    // RBC's creation is local work, which the simulator does not see (see comm_create.cpp).
    if (impl == "rbc") host = measure.host_cost([&] { overlap.create(); }, [&] { overlap.clear(); }, 20);
#endif
    auto record = ctx.record("overlap");
    record.add("variant", "groups_of_4_overlap_1")
        .add("implementation", impl)
        .add("groups", group_count(ctx.size()))
        .add_summary(s);
    if (host >= 0) record.add("host_op_s", host);
    ctx.emit(record);
    ctx.note("overlap " + impl + " done");
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::main_with_mpi(argc, argv, {"impls"}, run); }
