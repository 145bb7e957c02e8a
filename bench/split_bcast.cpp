// Split, then k broadcasts (paper fig. 7, thesis fig. 8.7): the PEs split into two halves and
// each half broadcasts n doubles k times from its first PE. Timed: creating the half plus the
// k broadcasts, with
//   rbc               RangeComm::split + rbc::bcast
//   mpi_create_group  MPI_Group_range_incl + MPI_Comm_create_group + MPI_Bcast
//   mpi_split         MPI_Comm_split + MPI_Bcast
// The paper's figure is the ratio MPI / RBC. Under SMPI, RBC records carry host_op_s, the host
// CPU cost of the (local) split, which the report adds to the simulated time.
//
// Options: --ks=1,10,50  --sizes=1,32,1024  --impls=rbc,mpi_create_group,mpi_split
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"

namespace {

class SplitBcast {
 public:
  SplitBcast(MPI_Comm world, std::string impl) : world_(world), impl_(std::move(impl)) {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
    rbc_world_ = rbc::RangeComm::from_mpi(world);
    if (impl_ != "rbc" && impl_ != "mpi_create_group" && impl_ != "mpi_split") {
      throw std::invalid_argument("--impls: unknown implementation '" + impl_ +
                                  "' (rbc, mpi_create_group, mpi_split)");
    }
  }

  void run(std::vector<double>& data, int k) {
    const int h = size_ / 2;
    const bool lower = size_ < 2 || rank_ < h;
    const int first = lower ? 0 : h;
    const int last = lower ? (size_ < 2 ? 0 : h - 1) : size_ - 1;
    const int count = static_cast<int>(data.size());
    if (impl_ == "rbc") {
      rbc::RangeComm half = rbc_world_.split(first, last);
      for (int i = 0; i < k; ++i) rbc::bcast(data.data(), count, MPI_DOUBLE, 0, half);
      return;
    }
    MPI_Comm half = MPI_COMM_NULL;
    if (impl_ == "mpi_split") {
      MPI_Comm_split(world_, lower ? 0 : 1, rank_, &half);
    } else {
      MPI_Group world_group;
      MPI_Group group;
      MPI_Comm_group(world_, &world_group);
      int range[1][3] = {{first, last, 1}};
      MPI_Group_range_incl(world_group, 1, range, &group);
      MPI_Comm_create_group(world_, group, 0, &half);
      MPI_Group_free(&group);
      MPI_Group_free(&world_group);
    }
    for (int i = 0; i < k; ++i) MPI_Bcast(data.data(), count, MPI_DOUBLE, 0, half);
    keep_.push_back(half);
  }

  // RBC only: the split alone (local work), for the host-cost measurement.
  void split_only() {
    const int h = size_ / 2;
    const bool lower = size_ < 2 || rank_ < h;
    keep_rbc_ = rbc_world_.split(lower ? 0 : h, lower ? (size_ < 2 ? 0 : h - 1) : size_ - 1);
  }

  void clear() {
    keep_rbc_ = rbc::RangeComm();
    for (MPI_Comm& c : keep_) MPI_Comm_free(&c);
    keep_.clear();
  }

 private:
  MPI_Comm world_;
  std::string impl_;
  int rank_ = 0;
  int size_ = 1;
  rbc::RangeComm rbc_world_;
  std::vector<MPI_Comm> keep_;
  rbc::RangeComm keep_rbc_;
};

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto ks = args.get_int_list("ks", {1, 10, 50});
  const auto sizes = args.get_int_list("sizes", {1, 32, 1024});
  const auto impls = args.get_list("impls", {"rbc", "mpi_create_group", "mpi_split"});
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  int world_size = 1;
  MPI_Comm_size(ctx.world(), &world_size);
  const int half = world_size < 2 ? 1 : world_size / 2;  // the lower half's size (the upper's on odd p: one more)
  for (std::int64_t k : ks) {
    if (k < 1) throw std::invalid_argument("--ks must be positive");
    for (std::int64_t n : sizes) {
      if (n < 1 || n > (1 << 28)) throw std::invalid_argument("--sizes must be in 1..2^28");
      std::vector<double> data(static_cast<std::size_t>(n), 1.0);
      for (const auto& impl : impls) {
        SplitBcast bench_case(ctx.world(), impl);
        bench::Summary s = measure.run([&] { bench_case.run(data, static_cast<int>(k)); }, {},
                                       [&] { bench_case.clear(); });
        double host = -1;
#ifdef JANUS_SMPI
        // The split is local work the simulator does not see (see comm_create.cpp).
        if (impl == "rbc") {
          host = measure.host_cost([&] { bench_case.split_only(); }, [&] { bench_case.clear(); }, 20);
        }
#endif
        auto record = ctx.record("split_bcast");
        record.add("variant", "k=" + std::to_string(k))
            .add("implementation", impl)
            .add("algorithm", impl == "rbc" ? "rbc " + rbc::algorithm("bcast", static_cast<int>(n), MPI_DOUBLE, half)
                                            : ctx.mpi_algorithm("bcast"))
            .add("k", k)
            .add("n", n)
            .add("n_unit", "doubles per PE")
            .add_summary(s);
        if (host >= 0) record.add("host_op_s", host);
        ctx.emit(record);
      }
      ctx.note("split_bcast k=" + std::to_string(k) + " n=" + std::to_string(n) + " done");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::main_with_mpi(argc, argv, {"ks", "sizes", "impls"}, run);
}
