#pragma once

#include <stdexcept>
#include <string>

namespace rbc {

// Thrown for every misuse RBC detects (bad range, rank, root, count, tag, datatype, non-member
// use) before any message is sent, so a failed call leaves no half-started communication behind.
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& what) : std::invalid_argument("rbc: " + what) {}
};

}  // namespace rbc
