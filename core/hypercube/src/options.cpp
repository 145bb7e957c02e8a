#include <stdexcept>

#include "hypercube/options.hpp"

namespace hypercube {

std::string name(MpiCommCreation creation) {
  switch (creation) {
    case MpiCommCreation::kSplit:
      return "split";
    case MpiCommCreation::kCreateGroup:
      return "create-group";
  }
  throw std::invalid_argument("hypercube: unknown MpiCommCreation value");
}

MpiCommCreation parse_comm_creation(const std::string& text) {
  if (text == "split") return MpiCommCreation::kSplit;
  if (text == "create-group") return MpiCommCreation::kCreateGroup;
  throw std::invalid_argument("hypercube: unknown communicator creation '" + text +
                              "'; valid: split, create-group");
}

}  // namespace hypercube
