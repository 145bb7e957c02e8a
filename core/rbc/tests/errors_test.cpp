// Bad inputs throw rbc::Error naming the problem, before any message is sent; afterwards the
// same communicators still work (a correct collective and point-to-point exchange follow).
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "rbc/rbc.hpp"
#include "testing/check.hpp"

namespace {

using janus::testing::Checker;
using janus::testing::Context;

// Each call must throw rbc::Error whose message contains `word`.
template <class F>
void expect_error(Checker& check, const char* what, const std::string& word, F&& f) {
  check.throws<rbc::Error>(std::forward<F>(f), word, what);
}

void bad_ranges(Checker& check, const rbc::RangeComm& world, int p) {
  Context context(check, "split / janus_split");
  expect_error(check, "split(1, 0): last < first", "last", [&] { world.split(1, 0); });
  expect_error(check, "split(-1, 0): negative first", "first", [&] { world.split(-1, 0); });
  expect_error(check, "split(0, p): last beyond the communicator", "size",
               [&] { world.split(0, p); });
  expect_error(check, "split(0, p-1, 0): stride 0", "stride", [&] { world.split(0, p - 1, 0); });
  expect_error(check, "split(0, p-1, -2): negative stride", "stride",
               [&] { world.split(0, p - 1, -2); });
  expect_error(check, "janus_split(p, 0): left_last beyond the communicator", "janus_split",
               [&] { world.janus_split(p, 0); });
  expect_error(check, "janus_split(0, -1): negative right_first", "janus_split",
               [&] { world.janus_split(0, -1); });
  if (p >= 3)
    expect_error(check, "janus_split(0, 2): a rank in neither half", "cover",
                 [&] { world.janus_split(0, 2); });
  expect_error(check, "from_mpi(MPI_COMM_NULL)", "MPI_COMM_NULL",
               [] { rbc::RangeComm::from_mpi(MPI_COMM_NULL); });
}

void bad_point_to_point(Checker& check, const rbc::RangeComm& c) {
  Context context(check, "point-to-point");
  const int s = c.size(), r = c.rank();
  int buf[4] = {0, 0, 0, 0};
  expect_error(check, "send to rank size", "outside the communicator",
               [&] { rbc::send(buf, 1, MPI_INT, s, 0, c); });
  expect_error(check, "isend to rank -5", "outside the communicator",
               [&] { rbc::isend(buf, 1, MPI_INT, -5, 0, c); });
  expect_error(check, "recv from rank size", "outside the communicator",
               [&] { rbc::recv(buf, 1, MPI_INT, s, 0, c); });
  expect_error(check, "irecv from rank size", "outside the communicator",
               [&] { rbc::irecv(buf, 1, MPI_INT, s, 0, c); });
  expect_error(check, "probe rank size", "outside the communicator",
               [&] { rbc::probe(s, 0, c); });
  expect_error(check, "iprobe rank size", "outside the communicator",
               [&] { rbc::iprobe(s, 0, c); });
  expect_error(check, "sendrecv to rank size", "outside the communicator", [&] {
    rbc::sendrecv(buf, 1, MPI_INT, s, 0, buf + 1, 1, MPI_INT, r, 0, c);
  });
  expect_error(check, "sendrecv into its own send buffer", "overlap", [&] {
    rbc::sendrecv(buf, 2, MPI_INT, r, 0, buf + 1, 2, MPI_INT, r, 0, c);
  });
  {
    int pair[2] = {r + 1, -1};
    const rbc::Status st = rbc::sendrecv(pair, 1, MPI_INT, r, 0, pair + 1, 1, MPI_INT, r, 0, c);
    check.equal(pair[1], r + 1, "sendrecv to itself into the element after its send buffer");
    check.equal(st.source, r, "sendrecv to itself: the status names this rank");
  }
  // A null buffer for elements of a predefined type (an empty vector's data(), say) is refused,
  // not dereferenced; with count 0, or to MPI_PROC_NULL, it is fine.
  expect_error(check, "send from a null buffer", "null buffer", [&] { rbc::send(nullptr, 1, MPI_INT, r, 0, c); });
  expect_error(check, "irecv into a null buffer", "null buffer",
               [&] { rbc::irecv(nullptr, 2, MPI_DOUBLE, r, 0, c); });
  expect_error(check, "sendrecv into a null buffer", "null buffer",
               [&] { rbc::sendrecv(buf, 1, MPI_INT, r, 0, nullptr, 1, MPI_INT, r, 0, c); });
  expect_error(check, "recv into MPI_IN_PLACE", "MPI_IN_PLACE",
               [&] { rbc::recv(MPI_IN_PLACE, 1, MPI_INT, r, 0, c); });
  rbc::send(nullptr, 0, MPI_INT, MPI_PROC_NULL, 0, c);
  rbc::send(nullptr, 1, MPI_INT, MPI_PROC_NULL, 0, c);
  {
    const rbc::Status st = rbc::sendrecv(nullptr, 0, MPI_INT, r, 0, nullptr, 0, MPI_INT, r, 0, c);
    check.equal(st.count(MPI_INT), 0, "sendrecv of nothing from and into null buffers");
  }
  expect_error(check, "send count -1", "count", [&] { rbc::send(buf, -1, MPI_INT, r, 0, c); });
  expect_error(check, "irecv count -1", "count",
               [&] { rbc::irecv(buf, -1, MPI_INT, r, 0, c); });
  for (int tag : {-1, rbc::max_user_tag + 1, MPI_ANY_TAG, 1 << 20}) {
    const std::string t = " with tag " + std::to_string(tag);
    expect_error(check, ("send" + t).c_str(), "tag", [&] { rbc::send(buf, 1, MPI_INT, r, tag, c); });
    expect_error(check, ("isend" + t).c_str(), "tag",
                 [&] { rbc::isend(buf, 1, MPI_INT, r, tag, c); });
    expect_error(check, ("recv" + t).c_str(), "tag", [&] { rbc::recv(buf, 1, MPI_INT, r, tag, c); });
    expect_error(check, ("irecv" + t).c_str(), "tag",
                 [&] { rbc::irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, tag, c); });
    expect_error(check, ("probe" + t).c_str(), "tag", [&] { rbc::probe(r, tag, c); });
    expect_error(check, ("iprobe" + t).c_str(), "tag",
                 [&] { rbc::iprobe(MPI_ANY_SOURCE, tag, c); });
    expect_error(check, ("sendrecv" + t).c_str(), "tag", [&] {
      rbc::sendrecv(buf, 1, MPI_INT, r, tag, buf + 1, 1, MPI_INT, r, 0, c);
    });
  }
  expect_error(check, "send with MPI_DATATYPE_NULL", "type",
               [&] { rbc::send(buf, 1, MPI_DATATYPE_NULL, r, 0, c); });
}

// Every rank passes the same bad argument, so a collective that (wrongly) started would hang or
// fail on all ranks alike rather than leave one behind.
void bad_collectives(Checker& check, const rbc::RangeComm& c) {
  Context context(check, "collectives");
  const int s = c.size();
  std::vector<int> a(4 * (s + 1), 0), b(4 * (s + 1), 0);
  std::vector<int> counts(s, 1), displs(s, 0);
  for (int i = 0; i < s; ++i) displs[i] = i;
  const auto merge = rbc::merger_for<int>();
  for (int root : {s, -1}) {
    const std::string t = " with root " + std::to_string(root);
    expect_error(check, ("bcast" + t).c_str(), "root",
                 [&] { rbc::bcast(a.data(), 1, MPI_INT, root, c); });
    expect_error(check, ("ibcast" + t).c_str(), "root",
                 [&] { rbc::ibcast(a.data(), 1, MPI_INT, root, c); });
    expect_error(check, ("reduce" + t).c_str(), "root", [&] {
      rbc::reduce(a.data(), b.data(), 1, MPI_INT, MPI_SUM, root, c);
    });
    expect_error(check, ("ireduce" + t).c_str(), "root", [&] {
      rbc::ireduce(a.data(), b.data(), 1, MPI_INT, MPI_SUM, root, c);
    });
    expect_error(check, ("gather" + t).c_str(), "root", [&] {
      rbc::gather(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, root, c);
    });
    expect_error(check, ("igatherv" + t).c_str(), "root", [&] {
      rbc::igatherv(a.data(), 1, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT, root,
                    c);
    });
    expect_error(check, ("gatherm" + t).c_str(), "root", [&] {
      rbc::gatherm(a.data(), 1, b.data(), s, MPI_INT, root, merge, c);
    });
  }
  expect_error(check, "bcast count -1", "count", [&] { rbc::bcast(a.data(), -1, MPI_INT, 0, c); });
  expect_error(check, "allreduce count -1", "count", [&] {
    rbc::allreduce(a.data(), b.data(), -1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "iscan count -1", "count", [&] {
    rbc::iscan(a.data(), b.data(), -1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "scan_and_bcast count -1", "count", [&] {
    rbc::scan_and_bcast(a.data(), b.data(), b.data() + 1, -1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "allgather sendcount -1", "count", [&] {
    rbc::allgather(a.data(), -1, MPI_INT, b.data(), 1, MPI_INT, c);
  });
  expect_error(check, "gatherm sendcount -1", "count", [&] {
    rbc::gatherm(a.data(), -1, b.data(), s, MPI_INT, 0, merge, c);
  });
  // gatherm documents that the type must have no gaps.
  MPI_Datatype pair, gapped;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 16, &gapped);
  MPI_Type_commit(&gapped);
  expect_error(check, "gatherm with a gapped datatype", "type", [&] {
    rbc::gatherm(a.data(), 1, b.data(), s, gapped, 0, merge, c);
  });
  MPI_Type_free(&gapped);
  MPI_Type_free(&pair);
  expect_error(check, "allgatherm sendcount -1", "count", [&] {
    rbc::allgatherm(a.data(), -1, b.data(), s, MPI_INT, merge, c);
  });
  expect_error(check, "allgatherm sendcount above the total", "more than the total", [&] {
    rbc::allgatherm(a.data(), 2, b.data(), 1, MPI_INT, merge, c);
  });
  // Send and receive buffers that overlap: MPI forbids it (MPI_IN_PLACE works in place), and an
  // allgather from and into one buffer returned wrong data before it was refused.
  expect_error(check, "allreduce from and into one buffer", "overlap", [&] {
    rbc::allreduce(a.data(), a.data(), 2, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "iscan into its input shifted by one", "overlap", [&] {
    rbc::iscan(a.data() + 1, a.data(), 2, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "exscan from and into one buffer", "overlap", [&] {
    rbc::exscan(a.data(), a.data(), 1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "scan_and_bcast with the total in the prefix", "totalbuf", [&] {
    rbc::scan_and_bcast(a.data(), b.data(), b.data() + 1, 2, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "allgather from its own slot", "overlap", [&] {
    rbc::allgather(a.data() + c.rank(), 1, MPI_INT, a.data(), 1, MPI_INT, c);
  });
  expect_error(check, "iallgatherv into its input", "overlap", [&] {
    rbc::iallgatherv(b.data() + s - 1, 1, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT, c);
  });
  expect_error(check, "allgatherm from and into one buffer", "overlap", [&] {
    rbc::allgatherm(a.data(), 1, a.data(), s, MPI_INT, merge, c);
  });
  // Rooted ones refuse at the root only: each rank is the root of a communicator of its own.
  const rbc::RangeComm self = c.split(c.rank(), c.rank());
  expect_error(check, "reduce from and into one buffer at the root", "overlap", [&] {
    rbc::reduce(a.data(), a.data(), 1, MPI_INT, MPI_SUM, 0, self);
  });
  expect_error(check, "gather into its input at the root", "overlap", [&] {
    rbc::gather(a.data(), 1, MPI_INT, a.data(), 1, MPI_INT, 0, self);
  });
  const int one = 1, second = 1;  // the root's one element goes to a[1]
  expect_error(check, "igatherv into its input at the root", "overlap", [&] {
    rbc::igatherv(a.data() + 1, 1, MPI_INT, a.data(), &one, &second, MPI_INT, 0, self);
  });
  expect_error(check, "gatherm from and into one buffer at the root", "overlap", [&] {
    rbc::gatherm(a.data(), 1, a.data(), 1, MPI_INT, 0, merge, self);
  });
  // Null buffers with a positive count of a predefined type (every rank alike).
  expect_error(check, "bcast of a null buffer", "null buffer", [&] { rbc::bcast(nullptr, 1, MPI_INT, 0, c); });
  expect_error(check, "allreduce into a null buffer", "null buffer", [&] {
    rbc::allreduce(a.data(), nullptr, 1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "iexscan from a null buffer", "null buffer", [&] {
    rbc::iexscan(nullptr, b.data(), 1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "scan_and_bcast with a null total", "null buffer", [&] {
    rbc::scan_and_bcast(a.data(), b.data(), nullptr, 1, MPI_INT, MPI_SUM, c);
  });
  expect_error(check, "reduce from a null buffer", "null buffer", [&] {
    rbc::reduce(nullptr, b.data(), 1, MPI_INT, MPI_SUM, 0, c);
  });
  expect_error(check, "allgather into a null buffer", "null buffer", [&] {
    rbc::allgather(a.data(), 1, MPI_INT, nullptr, 1, MPI_INT, c);
  });
  expect_error(check, "iallgatherv into a null buffer", "null buffer", [&] {
    rbc::iallgatherv(a.data(), 1, MPI_INT, nullptr, counts.data(), displs.data(), MPI_INT, c);
  });
  expect_error(check, "allgatherm from a null buffer", "null buffer", [&] {
    rbc::allgatherm(nullptr, 1, b.data(), s, MPI_INT, merge, c);
  });
  expect_error(check, "gather into a null buffer at the root", "null buffer", [&] {
    rbc::gather(a.data(), 1, MPI_INT, nullptr, 1, MPI_INT, 0, self);
  });
  expect_error(check, "gatherv into a null buffer at the root", "null buffer", [&] {
    rbc::gatherv(a.data(), 1, MPI_INT, nullptr, &one, &second, MPI_INT, 0, self);
  });
  expect_error(check, "gatherm into a null buffer at the root", "null buffer", [&] {
    rbc::gatherm(a.data(), 1, nullptr, 1, MPI_INT, 0, merge, self);
  });
  expect_error(check, "bcast of MPI_IN_PLACE", "MPI_IN_PLACE", [&] { rbc::bcast(MPI_IN_PLACE, 1, MPI_INT, 0, c); });
  expect_error(check, "allgatherm from MPI_IN_PLACE", "MPI_IN_PLACE", [&] {
    rbc::allgatherm(MPI_IN_PLACE, 1, b.data(), s, MPI_INT, merge, c);
  });
  // Adjacent buffers are apart; in place is the way to share one.
  {
    std::vector<int> v(2, 1);
    rbc::allreduce(v.data(), v.data() + 1, 1, MPI_INT, MPI_SUM, c);
    check.equal(v[1], s, "allreduce into the element after its input");
    rbc::allreduce(MPI_IN_PLACE, v.data(), 1, MPI_INT, MPI_SUM, c);
    check.equal(v[0], s, "allreduce in place");
  }
  // A total the contributions do not add up to: every rank throws, none waits.
  std::vector<int> all(static_cast<std::size_t>(s) + 1);
  expect_error(check, "allgatherm with a wrong total", "contribute", [&] {
    rbc::allgatherm(a.data(), 1, all.data(), s + 1, MPI_INT, merge, c);
  });
}

// Every operation on a communicator the caller is not a member of, or on a default one; the
// message must contain `word`. iprobe comes last: with the first RBC version it reached
// MPI_Iprobe with MPI_COMM_NULL on a default communicator, which aborts the job.
void non_member(Checker& check, const rbc::RangeComm& c, const char* what, const char* word) {
  Context context(check, what);
  check.check(!c.is_member(), "is_member() is true");
  int buf[2] = {0, 0};
  expect_error(check, "rank()", word, [&] { c.rank(); });
  expect_error(check, "size()", word, [&] { c.size(); });
  expect_error(check, "split", word, [&] { c.split(0, 0); });
  expect_error(check, "janus_split", word, [&] { c.janus_split(0, 0); });
  expect_error(check, "send", word, [&] { rbc::send(buf, 1, MPI_INT, 0, 0, c); });
  expect_error(check, "irecv", word, [&] { rbc::irecv(buf, 1, MPI_INT, 0, 0, c); });
  expect_error(check, "probe", word, [&] { rbc::probe(0, 0, c); });
  expect_error(check, "bcast", word, [&] { rbc::bcast(buf, 1, MPI_INT, 0, c); });
  expect_error(check, "iallreduce", word,
               [&] { rbc::iallreduce(buf, buf + 1, 1, MPI_INT, MPI_SUM, c); });
  expect_error(check, "igatherm", word, [&] {
    rbc::igatherm(buf, 1, buf + 1, 1, MPI_INT, 0, rbc::merger_for<int>(), c);
  });
  expect_error(check, "barrier", word, [&] { rbc::barrier(c); });
  expect_error(check, "iprobe", word, [&] { rbc::iprobe(MPI_ANY_SOURCE, 0, c); });
}

// An allreduce whose members pass different counts, one of them long enough that its payload
// travels apart from its envelope (an exchange announcing the payload's tag, post_exchange): both
// members get an error naming it, neither waits for a payload that will not come, and the
// communicator works afterwards.
void exchange_counts_differ(Checker& check, const rbc::RangeComm& world) {
  Context context(check, "allreduce with counts that differ between two members");
  if (world.size() < 2) return;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const rbc::RangeComm pair = rbc::RangeComm::from_mpi(comm).split(0, 1);
  if (pair.is_member()) {
    for (int longer : {1000, 5000}) {
      const int count = pair.rank() == 0 ? longer : 100;
      std::vector<double> in(static_cast<std::size_t>(longer), 1.0), out(static_cast<std::size_t>(longer), 0.0);
      int error_class = MPI_SUCCESS;
      try {
        rbc::allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, pair);
      } catch (const rbc::Error& e) {
        error_class = e.error_class();
      }
      check.check(error_class == MPI_ERR_COUNT || error_class == MPI_ERR_TRUNCATE, "rank ", pair.rank(), " with ",
                  count, " doubles against ", pair.rank() == 0 ? 100 : longer, ": error class ", error_class);
      rbc::allreduce(in.data(), out.data(), longer, MPI_DOUBLE, MPI_SUM, pair);
      check.equal(out[static_cast<std::size_t>(longer) - 1], 2.0, "the next allreduce of ", longer, " doubles");
    }
  }
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}

// The communicators still work after all of the above.
void still_works(Checker& check, const rbc::RangeComm& c, const char* what) {
  Context context(check, "after the errors, on ", what);
  const int s = c.size(), r = c.rank();
  long long mine = r + 1, sum = 0;
  rbc::allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, c);
  check.equal(sum, static_cast<long long>(s) * (s + 1) / 2, "allreduce of rank + 1");
  int token = r, got = -1;
  const rbc::Status st = rbc::sendrecv(&token, 1, MPI_INT, (r + 1) % s, 3, &got, 1, MPI_INT,
                                       MPI_ANY_SOURCE, 3, c);
  check.equal(got, (r + s - 1) % s, "ring token");
  check.equal(st.source, (r + s - 1) % s, "ring status.source");
  check.check(!rbc::iprobe(MPI_ANY_SOURCE, 0, c).has_value(),
              "a message is pending after the failed calls");
  rbc::barrier(c);
}

}  // namespace

int main(int argc, char** argv) {
  return janus::testing::run_test(argc, argv, "errors_test", [](Checker& check) {
    int p = 0, w = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
    // Ranks 1..p-1 stride 2: rank 0 is never a member; it calls split too and must be told.
    const rbc::RangeComm odd = p >= 2 ? world.split(1, p - 1, 2) : world;
    bad_ranges(check, world, p);
    bad_point_to_point(check, world);
    bad_collectives(check, world);
    if (odd.is_member()) {
      bad_point_to_point(check, odd);
      bad_collectives(check, odd);
    } else {
      non_member(check, odd, "non-member (from a split the caller is not in)", "not a member");
    }
    exchange_counts_differ(check, world);
    still_works(check, world, "world");
    if (odd.is_member()) still_works(check, odd, "1..p-1 stride 2");
    non_member(check, rbc::RangeComm(), "default-constructed RangeComm", "default-constructed");
    // Moved from, by construction and by assignment: empty, not a dangling member (it crashed).
    rbc::RangeComm source = world;
    const rbc::RangeComm taken = std::move(source);
    non_member(check, source, "moved-from RangeComm (construction)", "moved from");
    rbc::RangeComm assigned;
    source = world;
    assigned = std::move(source);
    non_member(check, source, "moved-from RangeComm (assignment)", "moved from");
    still_works(check, taken, "the communicator moved to by construction");
    still_works(check, assigned, "the communicator moved to by assignment");
  });
}
