// Collectives, RBC vs MPI (paper figs. 4 and 9, thesis 8.2.1), on all PEs, doubles, MPI_SUM:
//   bcast           rbc::bcast            vs MPI_Bcast (root 0)
//   reduce          rbc::reduce           vs MPI_Reduce (root 0)
//   scan            rbc::scan             vs MPI_Scan
//   scan_and_bcast  rbc::scan_and_bcast   vs MPI_Iscan, then MPI_Ibcast of the total from the
//                                            last PE (the total exists only after the scan)
//   gather          rbc::gather           vs MPI_Gather (root 0)
//   allreduce       rbc::allreduce        vs MPI_Allreduce
//   exscan          rbc::exscan           vs MPI_Exscan
//   allgather       rbc::allgather        vs MPI_Allgather
//   barrier         rbc::barrier          vs MPI_Barrier (run once, n = 0)
// The message size n is the number of doubles per PE for bcast, reduce, allreduce, scan, exscan
// and scan_and_bcast; for gather and allgather it is the number each receiving PE gets in total
// (each PE sends max(1, n / p)), so large n stays within memory at large p.
// MPI records name the algorithm the driver configured (--mpi-algorithms=bcast:...,...).
//
// Options: --ops=bcast,reduce,allreduce,scan,exscan,scan_and_bcast,gather,allgather,barrier
//          --sizes=1..262144
//          --impls=rbc,mpi
//          --communicator=first|split  RBC on the from_mpi handle of the world (first, the default:
//                                      its messages travel bare), or on a split of it over all
//                                      ranks (every message carries its communicator's key); every
//                                      record of the run names it (MPI's own run on the world)
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"

namespace {

struct Buffers {
  std::vector<double> send;
  std::vector<double> recv;
  std::vector<double> total;
};

int per_pe_count(const std::string& op, std::int64_t n, int p) {
  std::int64_t count = op == "gather" || op == "allgather" ? std::max<std::int64_t>(1, n / p) : n;
  if (count > (1 << 30)) throw std::invalid_argument("message size too large: " + std::to_string(n));
  return static_cast<int>(count);
}

std::string algorithm_of(const std::string& op, const std::string& impl, int count, int p, bool one_node,
                         const bench::Context& ctx) {
  if (impl == "rbc") return "rbc " + rbc::algorithm(op, count, MPI_DOUBLE, p, one_node);
  if (op == "scan_and_bcast") {
    return "iscan:" + ctx.mpi_algorithm("scan") + " + ibcast:" + ctx.mpi_algorithm("bcast");
  }
  return ctx.mpi_algorithm(op);
}

const char* const kOps = "bcast, reduce, allreduce, scan, exscan, scan_and_bcast, gather, allgather, barrier";

void run_op(const std::string& op, const std::string& impl, int count, Buffers& b,
            const rbc::RangeComm& rworld, MPI_Comm world, int p) {
  const bool use_rbc = impl == "rbc";
  double* send = b.send.data();
  double* recv = b.recv.data();
  if (op == "bcast") {
    if (use_rbc) {
      rbc::bcast(send, count, MPI_DOUBLE, 0, rworld);
    } else {
      MPI_Bcast(send, count, MPI_DOUBLE, 0, world);
    }
  } else if (op == "reduce") {
    if (use_rbc) {
      rbc::reduce(send, recv, count, MPI_DOUBLE, MPI_SUM, 0, rworld);
    } else {
      MPI_Reduce(send, recv, count, MPI_DOUBLE, MPI_SUM, 0, world);
    }
  } else if (op == "scan") {
    if (use_rbc) {
      rbc::scan(send, recv, count, MPI_DOUBLE, MPI_SUM, rworld);
    } else {
      MPI_Scan(send, recv, count, MPI_DOUBLE, MPI_SUM, world);
    }
  } else if (op == "scan_and_bcast") {
    if (use_rbc) {
      rbc::scan_and_bcast(send, recv, b.total.data(), count, MPI_DOUBLE, MPI_SUM, rworld);
    } else {
      MPI_Request request;
      MPI_Iscan(send, recv, count, MPI_DOUBLE, MPI_SUM, world, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      int rank = 0;
      MPI_Comm_rank(world, &rank);
      double* total = b.total.data();
      if (rank == p - 1) std::copy(recv, recv + count, total);
      MPI_Ibcast(total, count, MPI_DOUBLE, p - 1, world, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  } else if (op == "gather") {
    if (use_rbc) {
      rbc::gather(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, 0, rworld);
    } else {
      MPI_Gather(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, 0, world);
    }
  } else if (op == "allreduce") {
    if (use_rbc) {
      rbc::allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, rworld);
    } else {
      MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, world);
    }
  } else if (op == "exscan") {
    if (use_rbc) {
      rbc::exscan(send, recv, count, MPI_DOUBLE, MPI_SUM, rworld);
    } else {
      MPI_Exscan(send, recv, count, MPI_DOUBLE, MPI_SUM, world);
    }
  } else if (op == "allgather") {
    if (use_rbc) {
      rbc::allgather(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, rworld);
    } else {
      MPI_Allgather(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, world);
    }
  } else if (op == "barrier") {
    if (use_rbc) {
      rbc::barrier(rworld);
    } else {
      MPI_Barrier(world);
    }
  } else {
    throw std::invalid_argument("--ops: unknown collective '" + op + "' (" + kOps + ")");
  }
}

void run(const bench::Args& args, const bench::Context& ctx) {
  const auto ops = args.get_list(
      "ops", {"bcast", "reduce", "allreduce", "scan", "exscan", "scan_and_bcast", "gather", "allgather", "barrier"});
  const auto sizes = args.get_int_list("sizes", {1, 64, 4096, 262144});
  const auto impls = args.get_list("impls", {"rbc", "mpi"});
  for (const auto& impl : impls) {
    if (impl != "rbc" && impl != "mpi") {
      throw std::invalid_argument("--impls: unknown implementation '" + impl + "' (rbc, mpi)");
    }
  }
  const std::string communicator = args.get("communicator", "first");
  if (communicator != "first" && communicator != "split") {
    throw std::invalid_argument("--communicator: '" + communicator + "' (first, split)");
  }
  bench::Measurement measure(ctx.world(), args.get_int("warmup", 1), args.get_int("reps", 5));
  const rbc::RangeComm first = rbc::RangeComm::from_mpi(ctx.world());
  const int p = ctx.size();
  const rbc::RangeComm rworld = communicator == "split" ? first.split(0, p - 1) : first;

  for (const auto& op : ops) {
    for (std::int64_t n : op == "barrier" ? std::vector<std::int64_t>{0} : sizes) {
      if (n < 1 && op != "barrier") throw std::invalid_argument("--sizes must be positive");
      const int count = op == "barrier" ? 0 : per_pe_count(op, n, p);
      Buffers b;
      b.send.assign(count, 1.0 + ctx.rank());
      const bool gathers = (op == "gather" && ctx.rank() == 0) || op == "allgather";
      b.recv.assign(gathers ? static_cast<std::size_t>(count) * p : count, 0.0);
      b.total.assign(op == "scan_and_bcast" ? count : 0, 0.0);
      for (const auto& impl : impls) {
        bench::Summary s =
            measure.run([&] { run_op(op, impl, count, b, rworld, ctx.world(), p); });
        auto record = ctx.record("collectives");
        record.add("variant", op)
            .add("implementation", impl)
            .add("algorithm", algorithm_of(op, impl, count, p, rworld.on_one_node(), ctx))
            .add("n", n)
            .add("n_unit", op == "gather" ? "doubles at root" : op == "allgather" ? "doubles per PE received" : "doubles per PE")
            .add("count_per_pe", count)
            .add("communicator", communicator)
            .add("node_members", rworld.node_members())
            .add_summary(s);
        ctx.emit(record);
      }
      ctx.note("collectives " + op + " n=" + std::to_string(n) + " done");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::main_with_mpi(argc, argv, {"ops", "sizes", "impls", "communicator"}, run);
}
