#pragma once

#include <stdexcept>
#include <string>

namespace rbc {

// Thrown for every misuse RBC detects (bad range, rank, root, count, tag, datatype, non-member
// use) before any message is sent, so a failed call leaves no half-started communication
// behind; and for MPI errors (with the communicator's error handler set to MPI_ERRORS_RETURN)
// and message truncation, carrying the MPI error class.
class Error : public std::invalid_argument {
 public:
  // error_class is an MPI error class (MPI_ERR_TRUNCATE, ...) or 0 for RBC's own argument checks.
  explicit Error(const std::string& what, int error_class = 0)
      : std::invalid_argument("rbc: " + what), error_class_(error_class) {}

  int error_class() const { return error_class_; }

 private:
  int error_class_;
};

}  // namespace rbc
