// Scenario program of the misuse properties (issue 18, classes 4 to 7; misuse_properties_test.cpp).
// One misuse per run, drawn by the driver; tokens `key=value`:
//
//   np=N seed=S family=trunc range=F.L.S src=A dst=B send=N recv=M mode=b|n|c handler=ret|fatal
//       A sends N ints to B on the split [F, L, S] of the world, B receives at most M < N
//       (b: recv, n: irecv + wait, c: a bcast from A in which B passes count M). handler=ret
//       (MPI_ERRORS_RETURN): B must get rbc::Error of class MPI_ERR_TRUNCATE, nothing written
//       past its buffer, the communicator usable afterwards. handler=fatal: the run must stop
//       with MPI's MPI_ERR_TRUNCATE report (the driver judges the output).
//   np=N seed=S family=freed range=F.L.S op=bcast|allreduce|barrier|isend|recv|split|iallreduce
//       A communicator over a split of a from_mpi handle of a duplicate of the world; after
//       MPI_Comm_free of the duplicate, every member's next operation must throw rbc::Error of
//       class MPI_ERR_COMM.
//   np=N seed=S family=comparator cmp=le|true|random n=N layer=rbc|mpi_split|mpi_create_group verify=0|1
//       [gather=G] (JQuick's Config::gather_elements)
//       jquick::sort with a comparator that is not a strict weak order: every PE throws
//       jquick::Error or none does, the output is a permutation of the input (count and a
//       multiset fingerprint), and with `le` and no error it is sorted.
//   np=N seed=S family=mismatch range=F.L.S coll=K what=root|count|kind other=K2 odd=R before=B
//       B matching collectives, then member R of the split calls collective K with another root,
//       another count, or collective K2 instead. Expected to stop with "rbc: mismatched
//       collectives" in the checked build; a run that completes prints "SCENARIO UNDETECTED".
//   np=N seed=S family=layers layer=L other=L2 odd=R n=N
//       jquick::sort where PE R passes layer L2 and the others L: with jquick_checked every PE
//       must throw "jquick: the PEs passed different Configs".
//
// Rank 0 prints "SCENARIO OK digest=0" when every rank saw what it must.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "rbc/rbc.hpp"
#ifndef MISUSE_NO_JQUICK
#include "jquick/jquick.hpp"
#endif

namespace {

struct Args {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k, const std::string& d = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? d : it->second;
  }
  long long num(const std::string& k, long long d = 0) const {
    auto it = kv.find(k);
    return it == kv.end() ? d : std::stoll(it->second);
  }
};

[[noreturn]] void bad_scenario(const std::string& why) {
  std::fprintf(stderr, "bad scenario: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

rbc::RangeComm split_of(const rbc::RangeComm& base, const Args& a) {
  int f = 0, l = base.size() - 1, s = 1;
  const std::string r = a.get("range");
  if (!r.empty() && std::sscanf(r.c_str(), "%d.%d.%d", &f, &l, &s) != 3) bad_scenario("range " + r);
  return base.split(f, l, s);
}

// Every rank reports ok/not ok; rank 0 prints the verdict. Returns the process's exit code.
int verdict(bool ok, const std::string& why) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!ok) {
    std::printf("rank %d FAIL: %s\n", rank, why.c_str());
    std::fflush(stdout);
  }
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && all == 1) std::printf("SCENARIO OK digest=0\n");
  std::fflush(stdout);
  return all == 1 ? 0 : 1;
}

int truncation(const Args& a) {
  const bool ret = a.get("handler") == "ret";
  if (ret) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
  const rbc::RangeComm comm = split_of(world, a);
  const int src = static_cast<int>(a.num("src")), dst = static_cast<int>(a.num("dst"));
  const int send = static_cast<int>(a.num("send")), recv = static_cast<int>(a.num("recv"));
  const std::string mode = a.get("mode");
  if (recv >= send) bad_scenario("recv must be below send");
  bool ok = true;
  std::string why;
  if (comm.is_member()) {
    if (src >= comm.size() || dst >= comm.size()) bad_scenario("src/dst outside the communicator");
    const int me = comm.rank();
    constexpr int kGuard = 16;
    constexpr int kPoison = 0x5A5A5A5A;
    std::vector<int> out(static_cast<std::size_t>(send));
    for (int i = 0; i < send; ++i) out[static_cast<std::size_t>(i)] = i + 1;
    std::vector<int> in(static_cast<std::size_t>(recv + kGuard), kPoison);
    bool threw = false;
    int error_class = MPI_SUCCESS;
    std::string text;
    try {
      if (mode == "c") {
        if (src == dst) bad_scenario("collective truncation needs a receiver other than the root");
        if (me == dst) {
          rbc::bcast(in.data(), recv, MPI_INT, src, comm);
        } else {
          rbc::bcast(out.data(), send, MPI_INT, src, comm);
        }
      } else {
        rbc::Request request;
        if (me == src) request = rbc::isend(out.data(), send, MPI_INT, dst, 7, comm);
        if (me == dst) {
          if (mode == "b") {
            rbc::recv(in.data(), recv, MPI_INT, src, 7, comm);
          } else {
            rbc::irecv(in.data(), recv, MPI_INT, src, 7, comm).wait();
          }
        }
        if (me == src) request.wait();
      }
    } catch (const rbc::Error& e) {
      threw = true;
      error_class = e.error_class();
      text = e.what();
    }
    if (me == dst) {
      if (!threw) {
        ok = false;
        why = "the truncated receive did not throw";
      } else if (error_class != MPI_ERR_TRUNCATE) {
        ok = false;
        why = "error class " + std::to_string(error_class) + " instead of MPI_ERR_TRUNCATE: " + text;
      }
      for (int g = 0; g < kGuard; ++g) {
        if (in[static_cast<std::size_t>(recv + g)] != kPoison) {
          ok = false;
          why = "the receive wrote past its buffer";
        }
      }
    } else if (me == src && threw && mode != "c") {
      ok = false;
      why = "the sender threw: " + text;
    }
    // The communicator is still usable (after a collective truncation the receiver's subtree
    // has missed the data, so only the point-to-point cases go on).
    if (mode != "c") {
      int one = 1, sum = 0;
      rbc::allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
      if (sum != comm.size()) {
        ok = false;
        why = "allreduce after the truncation gave " + std::to_string(sum);
      }
    }
  }
  if (mode == "c") {
    std::printf("rank %d: collective truncation not reported\n", world.rank());
    ok = false;
    why = "no abort under MPI_ERRORS_ARE_FATAL";
  }
  if (!ret && mode != "c") {
    ok = false;
    why = "no abort under MPI_ERRORS_ARE_FATAL";
  }
  return verdict(ok, why);
}

int freed(const Args& a) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const rbc::RangeComm base = rbc::RangeComm::from_mpi(dup);
  const rbc::RangeComm comm = split_of(base, a);
  int value = 5;
  if (comm.is_member()) rbc::bcast(&value, 1, MPI_INT, 0, comm);  // works before the free
  MPI_Comm_free(&dup);
  bool ok = true;
  std::string why;
  if (comm.is_member()) {
    const std::string op = a.get("op");
    try {
      int x = 1, y = 0;
      if (op == "bcast") {
        rbc::bcast(&x, 1, MPI_INT, 0, comm);
      } else if (op == "allreduce") {
        rbc::allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
      } else if (op == "barrier") {
        rbc::barrier(comm);
      } else if (op == "isend") {
        rbc::isend(&x, 1, MPI_INT, 0, 3, comm).wait();
      } else if (op == "recv") {
        rbc::recv(&x, 1, MPI_INT, 0, 3, comm);
      } else if (op == "split") {
        const rbc::RangeComm sub = comm.split(0, comm.size() - 1);
        rbc::bcast(&x, 1, MPI_INT, 0, sub);
      } else if (op == "iallreduce") {
        rbc::iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm).wait();
      } else {
        bad_scenario("op " + op);
      }
      ok = false;
      why = op + " on a communicator whose MPI communicator was freed did not throw";
    } catch (const rbc::Error& e) {
      if (e.error_class() != MPI_ERR_COMM) {
        ok = false;
        why = std::string("error class ") + std::to_string(e.error_class()) + " instead of MPI_ERR_COMM: " + e.what();
      }
    }
  }
  return verdict(ok, why);
}

#ifndef MISUSE_NO_JQUICK
std::uint64_t mix(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
  std::uint64_t x = 0x243F6A8885A308D3ull;
  for (std::uint64_t v : {a, b, c}) {
    x ^= v + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
  }
  return x;
}

struct LessEqual {
  bool operator()(long long x, long long y) const { return x <= y; }
};
struct AlwaysTrue {
  bool operator()(long long, long long) const { return true; }
};
struct RandomAnswer {
  std::uint64_t salt;
  bool operator()(long long x, long long y) const {
    return (mix(static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(y), salt) >> 17) & 1;
  }
};

jquick::Layer layer_of(const std::string& name) { return jquick::parse_layer(name); }

int comparator(const Args& a) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = static_cast<std::uint64_t>(a.num("seed"));
  const long long n = a.num("n");
  const long long distinct = std::max<long long>(1, n * size / 3);
  std::vector<long long> data;
  for (long long i = 0; i < n; ++i) data.push_back(static_cast<long long>(mix(seed, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(distinct)));
  auto fingerprint = [](const std::vector<long long>& v, long long out[3]) {
    out[0] = static_cast<long long>(v.size());
    out[1] = 0;
    out[2] = 0;
    for (long long x : v) {
      const std::uint64_t h = mix(static_cast<std::uint64_t>(x));
      out[1] += static_cast<long long>(h & 0xffffffff);
      out[2] ^= static_cast<long long>(h);
    }
  };
  long long before[3], after[3];
  fingerprint(data, before);
  jquick::Config config;
  config.layer = layer_of(a.get("layer", "rbc"));
  config.verify = a.num("verify") != 0;
  config.seed = seed;
  if (a.num("gather", -1) >= 0) config.gather_elements = a.num("gather");
  const std::string cmp = a.get("cmp");
  int threw = 0;
  std::string text;
  try {
    if (cmp == "le") {
      jquick::sort(data, MPI_LONG_LONG, MPI_COMM_WORLD, LessEqual(), config);
    } else if (cmp == "true") {
      jquick::sort(data, MPI_LONG_LONG, MPI_COMM_WORLD, AlwaysTrue(), config);
    } else if (cmp == "random") {
      jquick::sort(data, MPI_LONG_LONG, MPI_COMM_WORLD, RandomAnswer{seed}, config);
    } else {
      bad_scenario("cmp " + cmp);
    }
  } catch (const jquick::Error& e) {
    threw = 1;
    text = e.what();
  }
  fingerprint(data, after);
  long long sums[4] = {before[0] - after[0], before[1] - after[1], 0, 0};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long x[2] = {before[2], after[2]};
  MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_LONG_LONG, MPI_BXOR, MPI_COMM_WORLD);
  int threw_all[2] = {threw, -threw};
  MPI_Allreduce(MPI_IN_PLACE, threw_all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bool ok = true;
  std::string why;
  if (threw_all[0] != -threw_all[1]) {
    ok = false;
    why = std::string("some PEs threw and others did not; this one ") + (threw ? "threw: " + text : "did not");
  }
  if (sums[0] != 0 || sums[1] != 0 || x[0] != x[1]) {
    ok = false;
    why = "elements lost or changed: count difference " + std::to_string(sums[0]);
  }
  if (!threw && cmp == "le") {
    bool sorted = std::is_sorted(data.begin(), data.end());
    long long last = data.empty() ? 0 : data.back(), next_first = 0;
    int has[2] = {data.empty() ? 0 : 1, 0};
    const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    long long first = data.empty() ? 0 : data.front();
    MPI_Sendrecv(&first, 1, MPI_LONG_LONG, left, 9, &next_first, 1, MPI_LONG_LONG, right, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&has[0], 1, MPI_INT, left, 10, &has[1], 1, MPI_INT, right, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (right != MPI_PROC_NULL && has[0] && has[1] && next_first < last) sorted = false;
    if (!sorted) {
      ok = false;
      why = "no error, but the output is not sorted";
    }
  }
  return verdict(ok, why);
}

int layers(const Args& a) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> data;
  for (long long i = 0; i < a.num("n"); ++i) data.push_back(static_cast<double>(mix(static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(i)) % 1000));
  jquick::Config config;
  config.layer = layer_of(rank == a.num("odd") ? a.get("other") : a.get("layer"));
  bool ok = false;
  std::string why = "no error";
  try {
    jquick::sort(data, MPI_DOUBLE, MPI_COMM_WORLD, std::less<double>(), config);
  } catch (const jquick::Error& e) {
    ok = std::string(e.what()).find("the PEs passed different Configs") != std::string::npos;
    why = e.what();
  }
  return verdict(ok, why);
}
#endif

void collective(const std::string& kind, int root, int count, const rbc::RangeComm& comm) {
  std::vector<long long> in(static_cast<std::size_t>(std::max(count, 1)) * static_cast<std::size_t>(comm.size()), 1);
  std::vector<long long> out(in.size(), 0);
  if (kind == "bcast") {
    rbc::bcast(in.data(), count, MPI_LONG_LONG, root, comm);
  } else if (kind == "reduce") {
    rbc::reduce(in.data(), out.data(), count, MPI_LONG_LONG, MPI_SUM, root, comm);
  } else if (kind == "allreduce") {
    rbc::allreduce(in.data(), out.data(), count, MPI_LONG_LONG, MPI_SUM, comm);
  } else if (kind == "scan") {
    rbc::scan(in.data(), out.data(), count, MPI_LONG_LONG, MPI_SUM, comm);
  } else if (kind == "exscan") {
    rbc::exscan(in.data(), out.data(), count, MPI_LONG_LONG, MPI_SUM, comm);
  } else if (kind == "gather") {
    rbc::gather(in.data(), count, MPI_LONG_LONG, out.data(), count, MPI_LONG_LONG, root, comm);
  } else if (kind == "allgather") {
    rbc::allgather(in.data(), count, MPI_LONG_LONG, out.data(), count, MPI_LONG_LONG, comm);
  } else if (kind == "barrier") {
    rbc::barrier(comm);
  } else {
    bad_scenario("collective " + kind);
  }
}

int mismatch(const Args& a) {
  const rbc::RangeComm world = rbc::RangeComm::from_mpi(MPI_COMM_WORLD);
  const rbc::RangeComm comm = split_of(world, a);
  if (comm.is_member()) {
    const int odd = static_cast<int>(a.num("odd"));
    const int size = comm.size();
    if (odd >= size) bad_scenario("odd rank outside the communicator");
    const std::string kind = a.get("coll"), what = a.get("what");
    const int root = static_cast<int>(a.num("root")) % size;
    const int count = static_cast<int>(a.num("count", 1));
    for (long long b = 0; b < a.num("before"); ++b) collective(kind, root, count, comm);
    if (comm.rank() != odd) {
      collective(kind, root, count, comm);
    } else if (what == "root") {
      if (size < 2) bad_scenario("a root mismatch needs two members");
      collective(kind, (root + 1 + static_cast<int>(a.num("shift") % (size - 1))) % size, count, comm);
    } else if (what == "count") {
      collective(kind, root, count + 1 + static_cast<int>(a.num("shift")), comm);
    } else if (what == "kind") {
      collective(a.get("other"), root, count, comm);
    } else {
      bad_scenario("what " + what);
    }
  }
  // Keep every rank alive until a mismatch is reported (see core/rbc/tests/mismatch_run.cpp).
  MPI_Barrier(MPI_COMM_WORLD);
  if (world.rank() == 0) std::printf("SCENARIO UNDETECTED: the mismatched collective completed on every rank\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    const auto eq = t.find('=');
    if (eq == std::string::npos) bad_scenario("token " + t);
    args.kv[t.substr(0, eq)] = t.substr(eq + 1);
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (args.num("np", size) != size) bad_scenario("np does not match the job");
  const std::string family = args.get("family");
  int code = 2;
  try {
    if (family == "trunc") {
      code = truncation(args);
    } else if (family == "freed") {
      code = freed(args);
    } else if (family == "mismatch") {
      code = mismatch(args);
#ifndef MISUSE_NO_JQUICK
    } else if (family == "comparator") {
      code = comparator(args);
    } else if (family == "layers") {
      code = layers(args);
#endif
    } else {
      bad_scenario("family " + family);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: escaped exception: %s\n", e.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  MPI_Finalize();
  return code;
}
