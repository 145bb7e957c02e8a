#include "scenario/sort_scenario.hpp"

#include <algorithm>
#include <stdexcept>

#include "scenario/tokens.hpp"

namespace props {

std::vector<std::string> layers_of(const std::string& algorithm) {
  if (algorithm == "jquick") return {"rbc", "rbc-probe", "mpi-create-group", "mpi-split"};
  if (algorithm == "hypercube") return {"rbc", "split", "create-group"};
  throw std::invalid_argument("unknown algorithm '" + algorithm + "' (jquick or hypercube)");
}

std::vector<std::string> to_tokens(const SortScenario& s) {
  std::vector<std::string> tokens{"np=" + std::to_string(s.np),
          "seed=" + std::to_string(s.seed),
          "algo=" + s.algorithm,
          "layer=" + s.layer,
          "dist=" + s.distribution,
          "n=" + std::to_string(s.n_per_pe),
          "type=" + s.type,
          "range=" + std::to_string(s.first) + "." + std::to_string(s.last) + "." + std::to_string(s.stride)};
  if (s.gather_elements >= 0) tokens.push_back("gather=" + std::to_string(s.gather_elements));
  return tokens;
}

SortScenario sort_from_tokens(const std::vector<std::string>& tokens) {
  SortScenario s;
  bool have_range = false;
  for (const std::string& token : tokens) {
    const auto [key, value] = split_token(token);
    if (key == "np") {
      s.np = to_int(value, token);
    } else if (key == "seed") {
      s.seed = std::stoull(value);
    } else if (key == "algo") {
      s.algorithm = value;
    } else if (key == "layer") {
      s.layer = value;
    } else if (key == "dist") {
      s.distribution = value;
    } else if (key == "n") {
      s.n_per_pe = std::stoull(value);
    } else if (key == "type") {
      if (value != "i32" && value != "i64" && value != "f64") throw std::invalid_argument("type must be i32, i64 or f64");
      s.type = value;
    } else if (key == "range") {
      const auto d1 = value.find('.'), d2 = value.rfind('.');
      if (d1 == std::string::npos || d1 == d2) throw std::invalid_argument("range needs first.last.stride");
      s.first = to_int(value.substr(0, d1), token);
      s.last = to_int(value.substr(d1 + 1, d2 - d1 - 1), token);
      s.stride = to_int(value.substr(d2 + 1), token);
      have_range = true;
    } else if (key == "gather") {
      s.gather_elements = std::stoll(value);
      if (s.gather_elements < 0) throw std::invalid_argument("gather must be >= 0");
    } else {
      throw std::invalid_argument("unknown token '" + token + "'");
    }
  }
  if (!have_range) s.last = s.np - 1;
  const auto layers = layers_of(s.algorithm);
  if (std::find(layers.begin(), layers.end(), s.layer) == layers.end()) {
    throw std::invalid_argument("layer '" + s.layer + "' does not exist for " + s.algorithm);
  }
  if (s.gather_elements >= 0 && s.algorithm != "jquick") throw std::invalid_argument("gather is JQuick's");
  if (s.np < 1 || s.first < 0 || s.last < s.first || s.last >= s.np || s.stride < 1) {
    throw std::invalid_argument("range does not fit np");
  }
  return s;
}

std::vector<int> sort_members(const SortScenario& s) {
  std::vector<int> members;
  for (int r = s.first; r <= s.last; r += s.stride) members.push_back(r);
  return members;
}

}  // namespace props
