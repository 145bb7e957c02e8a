// A deliberately broken run for expect_failure.sh: argv[1] = "deadlock" leaves rank 0 waiting
// for a message nobody sends; "exception" lets an exception escape on the last rank.
#include <stdexcept>
#include <string>

#include "testing/check.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  return janus::testing::run_test(argc, argv, "broken_run", [&](janus::testing::Checker& check) {
    check.check(true, "something checked");
    if (mode == "deadlock" && check.rank() == 0) {
      int never = 0;
      MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (mode == "exception" && check.rank() == check.size() - 1)
      throw std::runtime_error("escaped on purpose");
  });
}
