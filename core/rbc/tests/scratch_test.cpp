// rbc::Scratch: memory borrowed from a communicator's engine comes back to the next borrower on
// any communicator of that engine, may outlive the handle it came from, and is refused to a
// non-member.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0;
}

// Fills the block with a pattern and counts the bytes that do not read it back.
int fill_and_count_wrong(rbc::Scratch& s, unsigned char salt) {
  auto* bytes = static_cast<unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + salt);
  int wrong = 0;
  for (std::size_t i = 0; i < s.size(); ++i) wrong += bytes[i] != static_cast<unsigned char>(i * 7 + salt);
  return wrong;
}

void reuse(Checker& check, MPI_Comm comm) {
  Context c(check, "a block given back is taken again");
  const rbc::RangeComm all = rbc::RangeComm::from_mpi(comm);
  const int p = all.size();
  rbc::Scratch first(all, 65536);
  check.equal(first.size(), std::size_t{65536}, "size");
  check.check(first.data() != nullptr && aligned(first.data()), "data() null or misaligned");
  check.equal(fill_and_count_wrong(first, 1), 0, "bytes read back wrong");
  const void* block = first.data();
  first = rbc::Scratch();
  check.check(first.data() == nullptr && first.size() == 0, "an empty Scratch has bytes");
  // Less, on another communicator of the same engine: the same block.
  const rbc::RangeComm part = all.split(0, p - 1);
  rbc::Scratch again(part, 40000);
  check.check(again.data() == block, "a smaller borrow after give-back got a new block");
  check.equal(fill_and_count_wrong(again, 2), 0, "bytes of the reused block read back wrong");
  // While it is out, another borrower gets other memory.
  rbc::Scratch other(all, 40000);
  check.check(other.data() != again.data(), "two live Scratch objects share a block");
  // More than the block holds: at least as much, elsewhere or grown.
  again = rbc::Scratch();
  rbc::Scratch larger(all, 200000);
  check.equal(larger.size(), std::size_t{200000}, "size of a larger borrow");
  check.equal(fill_and_count_wrong(larger, 3), 0, "bytes of a larger block read back wrong");
}

void outlives_handle(Checker& check, MPI_Comm comm) {
  Context c(check, "a Scratch outliving its communicator handles");
  rbc::Scratch kept;
  {
    const rbc::RangeComm all = rbc::RangeComm::from_mpi(comm);
    rbc::Scratch inner(all, 5000);
    kept = std::move(inner);
    check.check(inner.data() == nullptr && inner.size() == 0, "a moved-from Scratch has bytes");
  }
  check.equal(kept.size(), std::size_t{5000}, "size after the handle went");
  check.equal(fill_and_count_wrong(kept, 4), 0, "bytes after the handle went read back wrong");
  rbc::Scratch moved(std::move(kept));
  check.equal(moved.size(), std::size_t{5000}, "size after a move construction");
}

void refused(Checker& check, MPI_Comm comm) {
  Context c(check, "non-members");
  check.throws<rbc::Error>([] { rbc::Scratch s(rbc::RangeComm(), 100); }, "default-constructed",
                           "a default-constructed RangeComm");
  const rbc::RangeComm all = rbc::RangeComm::from_mpi(comm);
  if (all.size() >= 2) {
    const rbc::RangeComm tail = all.split(1, all.size() - 1);
    if (!tail.is_member()) {
      check.throws<rbc::Error>([&] { rbc::Scratch s(tail, 100); }, "not a member",
                               "a split the caller is not in");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "scratch_test", [](Checker& check) {
    // A communicator of its own, so that no earlier collective left blocks in its engine's pool.
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    reuse(check, comm);
    outlives_handle(check, comm);
    refused(check, comm);
    MPI_Comm_free(&comm);
  });
}
