// A failed nonblocking operation is frozen (its error kept, its steps never run again), but its
// receives that are still posted stay posted in MPI: a message of another communicator that MPI
// matches to one of them must still reach its owner. Built against rbc_collide_noagree, where
// every communicator has the same tag context (so two splits' first gathers share every MPI tag)
// and collectives start without the checked build's handshake (so rank 0's gather posts its
// receives before rank 2 has joined it).
//
// Ranks 0-2 of two splits x and y over the same three ranks: rank 1 gathers 2 ints into x's
// slots of 1, so rank 0's igather on x fails while its receive from rank 2 is still posted. Only
// then does rank 2 gather on y: MPI matches its y message to x's receive, posted first. Rank 0's
// wait on y must drain the failed gather and find the message there; if it did not, it would wait
// for ever (the stall watch ends it with a report). Rank 2 joins x only after that wait, since
// its x message, matched to y's receive, would otherwise let y's gather find the swap.
#include <mpi.h>

#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

void failed_gather_passes_messages_on(Checker& check, const rbc::RangeComm& world, int count) {
  Context c(check, "a failed gather and the other split's gather of ", count, " ints");
  const int me = world.rank();
  if (me >= 3) return;
  const rbc::RangeComm x = world.split(0, 2);
  const rbc::RangeComm y = world.split(0, 2);
  const int go_tag = 91;
  int mine[2] = {10 + me, 10 + me};
  // Rank r's part of the gather on y.
  const auto part_of = [count](int r) {
    std::vector<int> part(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) part[static_cast<std::size_t>(i)] = 100 * r + i % 100;
    return part;
  };
  std::vector<int> on_y = part_of(me);
  if (me == 0) {
    std::vector<int> at_root_x(3, -1), at_root_y(static_cast<std::size_t>(3 * count), -1);
    rbc::Request gx = rbc::igather(mine, 1, MPI_INT, at_root_x.data(), 1, MPI_INT, 0, x);
    check.throws<rbc::Error>([&] { gx.wait(); }, "truncated", "rank 1's two ints into a slot of one");
    const int go = 1;
    MPI_Send(&go, 1, MPI_INT, 2, go_tag, MPI_COMM_WORLD);
    rbc::Request gy = rbc::igather(on_y.data(), count, MPI_INT, at_root_y.data(), count, MPI_INT, 0, y);
    gy.wait();
    std::vector<int> expected;
    for (int r = 0; r < 3; ++r) {
      const std::vector<int> part = part_of(r);
      expected.insert(expected.end(), part.begin(), part.end());
    }
    check.equal_ranges(at_root_y, expected, "the gather on y, beside x's failed one");
    check.throws<rbc::Error>([&] { gx.wait(); }, "truncated", "x's gather waited again");
    MPI_Send(&go, 1, MPI_INT, 2, go_tag, MPI_COMM_WORLD);  // gx's end takes rank 2's x message
  } else if (me == 1) {
    rbc::gather(mine, 2, MPI_INT, nullptr, 0, MPI_INT, 0, x);
    rbc::gather(on_y.data(), count, MPI_INT, nullptr, 0, MPI_INT, 0, y);
  } else {
    int go = 0;
    MPI_Recv(&go, 1, MPI_INT, 0, go_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    rbc::gather(on_y.data(), count, MPI_INT, nullptr, 0, MPI_INT, 0, y);
    MPI_Recv(&go, 1, MPI_INT, 0, go_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    rbc::gather(mine, 1, MPI_INT, nullptr, 0, MPI_INT, 0, x);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "failed_operation_test", [](Checker& check) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    {
      const rbc::RangeComm world = rbc::RangeComm::from_mpi(comm);
      check.check(world.size() >= 3, "needs at least 3 ranks");
      // One small message, and one whose payload travels apart from its envelope (8000 bytes).
      if (world.size() >= 3) {
        for (int count : {1, 2000}) failed_gather_passes_messages_on(check, world, count);
      }
    }
    MPI_Barrier(comm);
    MPI_Comm_free(&comm);
  });
}
