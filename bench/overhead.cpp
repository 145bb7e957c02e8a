// Instructions RBC executes outside the MPI library per operation, counted by callgrind (see
// bench/instructions): exact and repeatable where this VM's timers swing 2x. Each case runs its
// loop in a function of its own, one for RBC and one for the library's equivalent, which
// bench/instructions has callgrind count (--toggle-collect) and subtract the MPI calls from. Only
// the <true> instantiations are counted; the <false> ones warm up (first connections, pools).
//   send_recv    blocking rbc::send + rbc::recv of --bytes to self (np = 1)
//   isend_irecv  rbc::irecv + rbc::isend to self, both waited (np = 1)
//   bcast        blocking broadcast of --bytes from rank 0 (np >= 2)
//   scan         blocking inclusive sum scan of --bytes / 8 doubles (np >= 2)
//   exscan       blocking exclusive sum scan of --bytes / 8 doubles (np >= 2)
//   allreduce    blocking sum allreduce of --bytes / 8 doubles (np >= 2)
//   reduce       blocking sum reduce of --bytes / 8 doubles to rank 0 (np >= 2)
//   gather       blocking gather of --bytes / 8 doubles per rank to rank 0 (np >= 2)
//   allgather    blocking allgather of --bytes / 8 doubles per rank (np >= 2)
//   jquick       jquick::sort of --bytes / 8 uniform doubles per rank on RBC, the copy of the input
//                included (np >= 2; no MPI twin)
//   hypercube    hypercube::sort_rbc of the same input (np >= 2): the baseline's local work, for
//                the sum over ranks that oversubscribed runs pay
//
// Usage: overhead_mpi CASE BYTES ITERATIONS [first|split]
// first (the default): RBC runs on the from_mpi handle of MPI_COMM_WORLD, whose user messages and
// blocking collectives' messages travel bare; split: on a split of it over all ranks, whose
// messages carry their communicator's key in an envelope, as every communicator a program splits.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hypercube/hypercube.hpp"
#include "inputs/inputs.hpp"
#include "jquick/jquick.hpp"
#include "rbc/collectives.hpp"
#include "rbc/comm.hpp"
#include "rbc/point_to_point.hpp"

namespace {

// No inlining, and no folding of the identical <true> and <false> bodies (GCC's -fipa-icf).
#if defined(__GNUC__) && !defined(__clang__)
#define COUNTED __attribute__((noinline, noipa))
#else
#define COUNTED __attribute__((noinline))
#endif

constexpr int kTag = 1;

template <bool Counted>
COUNTED void rbc_send_recv(int iterations, std::vector<char>& out, std::vector<char>& in,
                                             const rbc::RangeComm& comm) {
  const int n = static_cast<int>(out.size());
  for (int i = 0; i < iterations; ++i) {
    rbc::send(out.data(), n, MPI_BYTE, comm.rank(), kTag, comm);
    rbc::recv(in.data(), n, MPI_BYTE, comm.rank(), kTag, comm);
  }
}

template <bool Counted>
COUNTED void mpi_send_recv(int iterations, std::vector<char>& out, std::vector<char>& in,
                                             MPI_Comm comm, int me) {
  const int n = static_cast<int>(out.size());
  for (int i = 0; i < iterations; ++i) {
    MPI_Send(out.data(), n, MPI_BYTE, me, kTag, comm);
    MPI_Recv(in.data(), n, MPI_BYTE, me, kTag, comm, MPI_STATUS_IGNORE);
  }
}

template <bool Counted>
COUNTED void rbc_isend_irecv(int iterations, std::vector<char>& out, std::vector<char>& in,
                                               const rbc::RangeComm& comm) {
  const int n = static_cast<int>(out.size());
  for (int i = 0; i < iterations; ++i) {
    rbc::Request receive = rbc::irecv(in.data(), n, MPI_BYTE, comm.rank(), kTag, comm);
    rbc::Request send = rbc::isend(out.data(), n, MPI_BYTE, comm.rank(), kTag, comm);
    send.wait();
    receive.wait();
  }
}

template <bool Counted>
COUNTED void mpi_isend_irecv(int iterations, std::vector<char>& out, std::vector<char>& in,
                                               MPI_Comm comm, int me) {
  const int n = static_cast<int>(out.size());
  for (int i = 0; i < iterations; ++i) {
    MPI_Request receive, send;
    MPI_Irecv(in.data(), n, MPI_BYTE, me, kTag, comm, &receive);
    MPI_Isend(out.data(), n, MPI_BYTE, me, kTag, comm, &send);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Wait(&receive, MPI_STATUS_IGNORE);
  }
}

template <bool Counted>
COUNTED void rbc_bcast(int iterations, std::vector<char>& buf, const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) rbc::bcast(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 0, comm);
}

template <bool Counted>
COUNTED void mpi_bcast(int iterations, std::vector<char>& buf, MPI_Comm comm) {
  for (int i = 0; i < iterations; ++i) MPI_Bcast(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 0, comm);
}

template <bool Counted>
COUNTED void rbc_scan(int iterations, std::vector<double>& in, std::vector<double>& out, const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    rbc::scan(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void mpi_scan(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  for (int i = 0; i < iterations; ++i) {
    MPI_Scan(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void rbc_exscan(int iterations, std::vector<double>& in, std::vector<double>& out,
                        const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    rbc::exscan(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void mpi_exscan(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  for (int i = 0; i < iterations; ++i) {
    MPI_Exscan(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void rbc_allreduce(int iterations, std::vector<double>& in, std::vector<double>& out,
                           const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    rbc::allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void mpi_allreduce(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  for (int i = 0; i < iterations; ++i) {
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, comm);
  }
}

template <bool Counted>
COUNTED void rbc_reduce(int iterations, std::vector<double>& in, std::vector<double>& out, const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    rbc::reduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
  }
}

template <bool Counted>
COUNTED void mpi_reduce(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  for (int i = 0; i < iterations; ++i) {
    MPI_Reduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
  }
}

template <bool Counted>
COUNTED void rbc_gather(int iterations, std::vector<double>& in, std::vector<double>& out, const rbc::RangeComm& comm) {
  const int n = static_cast<int>(in.size());
  for (int i = 0; i < iterations; ++i) rbc::gather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, 0, comm);
}

template <bool Counted>
COUNTED void mpi_gather(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  const int n = static_cast<int>(in.size());
  for (int i = 0; i < iterations; ++i) MPI_Gather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, 0, comm);
}

template <bool Counted>
COUNTED void rbc_allgather(int iterations, std::vector<double>& in, std::vector<double>& out,
                           const rbc::RangeComm& comm) {
  const int n = static_cast<int>(in.size());
  for (int i = 0; i < iterations; ++i) rbc::allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, comm);
}

template <bool Counted>
COUNTED void mpi_allgather(int iterations, std::vector<double>& in, std::vector<double>& out, MPI_Comm comm) {
  const int n = static_cast<int>(in.size());
  for (int i = 0; i < iterations; ++i) MPI_Allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, comm);
}

template <bool Counted>
COUNTED void rbc_jquick(int iterations, const std::vector<double>& input, const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    std::vector<double> data = input;
    jquick::Config config;
    config.layer = jquick::Layer::rbc;
    jquick::sort(data, MPI_DOUBLE, comm, std::less<double>(), config);
  }
}

template <bool Counted>
COUNTED void rbc_hypercube(int iterations, const std::vector<double>& input, const rbc::RangeComm& comm) {
  for (int i = 0; i < iterations; ++i) {
    std::vector<double> data = input;
    hypercube::sort_rbc(data, comm, hypercube::Options{}, std::less<double>());
  }
}

void run(const std::string& name, int bytes, int iterations, bool split) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const rbc::RangeComm first = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
  const rbc::RangeComm world = split ? first.split(0, first.size() - 1) : first;
  std::vector<char> out(static_cast<std::size_t>(bytes), 1), in(static_cast<std::size_t>(bytes));
  // A warm-up outside the counted functions fills RBC's and MPI's pools first.
  if (name == "send_recv") {
    if (bytes > 1024) throw std::runtime_error("send_recv: at most 1024 bytes (a send to self must not wait)");
    rbc_send_recv<false>(10, out, in, world);
    mpi_send_recv<false>(10, out, in, MPI_COMM_WORLD, me);
    rbc_send_recv<true>(iterations, out, in, world);
    mpi_send_recv<true>(iterations, out, in, MPI_COMM_WORLD, me);
  } else if (name == "isend_irecv") {
    rbc_isend_irecv<false>(10, out, in, world);
    mpi_isend_irecv<false>(10, out, in, MPI_COMM_WORLD, me);
    rbc_isend_irecv<true>(iterations, out, in, world);
    mpi_isend_irecv<true>(iterations, out, in, MPI_COMM_WORLD, me);
  } else if (name == "bcast") {
    rbc_bcast<false>(10, out, world);
    mpi_bcast<false>(10, out, MPI_COMM_WORLD);
    rbc_bcast<true>(iterations, out, world);
    mpi_bcast<true>(iterations, out, MPI_COMM_WORLD);
  } else if (name == "scan" || name == "exscan" || name == "allreduce" || name == "reduce") {
    std::vector<double> values(static_cast<std::size_t>(std::max(bytes / 8, 1)), 1.0), results(values.size());
    if (name == "scan") {
      rbc_scan<false>(10, values, results, world);
      mpi_scan<false>(10, values, results, MPI_COMM_WORLD);
      rbc_scan<true>(iterations, values, results, world);
      mpi_scan<true>(iterations, values, results, MPI_COMM_WORLD);
    } else if (name == "exscan") {
      rbc_exscan<false>(10, values, results, world);
      mpi_exscan<false>(10, values, results, MPI_COMM_WORLD);
      rbc_exscan<true>(iterations, values, results, world);
      mpi_exscan<true>(iterations, values, results, MPI_COMM_WORLD);
    } else if (name == "reduce") {
      rbc_reduce<false>(10, values, results, world);
      mpi_reduce<false>(10, values, results, MPI_COMM_WORLD);
      rbc_reduce<true>(iterations, values, results, world);
      mpi_reduce<true>(iterations, values, results, MPI_COMM_WORLD);
    } else {
      rbc_allreduce<false>(10, values, results, world);
      mpi_allreduce<false>(10, values, results, MPI_COMM_WORLD);
      rbc_allreduce<true>(iterations, values, results, world);
      mpi_allreduce<true>(iterations, values, results, MPI_COMM_WORLD);
    }
  } else if (name == "gather" || name == "allgather") {
    std::vector<double> values(static_cast<std::size_t>(std::max(bytes / 8, 1)), 1.0);
    std::vector<double> gathered(values.size() * static_cast<std::size_t>(world.size()));
    if (name == "gather") {
      rbc_gather<false>(10, values, gathered, world);
      mpi_gather<false>(10, values, gathered, MPI_COMM_WORLD);
      rbc_gather<true>(iterations, values, gathered, world);
      mpi_gather<true>(iterations, values, gathered, MPI_COMM_WORLD);
    } else {
      rbc_allgather<false>(10, values, gathered, world);
      mpi_allgather<false>(10, values, gathered, MPI_COMM_WORLD);
      rbc_allgather<true>(iterations, values, gathered, world);
      mpi_allgather<true>(iterations, values, gathered, MPI_COMM_WORLD);
    }
  } else if (name == "jquick" || name == "hypercube") {
    inputs::Params params;
    params.rank = me;
    params.p = world.size();
    params.n_per_pe = static_cast<std::uint64_t>(bytes / 8);
    const std::vector<double> input = inputs::generate<double>(inputs::Distribution::kUniform, params);
    if (name == "jquick") {
      rbc_jquick<false>(5, input, world);
      rbc_jquick<true>(iterations, input, world);
    } else {
      rbc_hypercube<false>(5, input, world);
      rbc_hypercube<true>(iterations, input, world);
    }
  } else {
    throw std::runtime_error("unknown case '" + name + "' (send_recv, isend_irecv, bcast, scan, exscan, allreduce, reduce, gather, allgather, jquick, hypercube)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const std::string communicator = argc == 5 ? argv[4] : "first";
    if ((argc != 4 && argc != 5) || (communicator != "first" && communicator != "split")) {
      throw std::runtime_error("usage: overhead_mpi CASE BYTES ITERATIONS [first|split]");
    }
    run(argv[1], std::atoi(argv[2]), std::atoi(argv[3]), communicator == "split");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
