#include "scenario/tokens.hpp"

#include <sstream>
#include <stdexcept>

namespace props {

Token split_token(const std::string& token) {
  const auto eq = token.find('=');
  if (eq == std::string::npos) throw std::invalid_argument("token '" + token + "' has no '='");
  return Token{token.substr(0, eq), token.substr(eq + 1)};
}

int to_int(const std::string& text, const std::string& token) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) {
    throw std::invalid_argument("'" + text + "' in token '" + token + "' is not an integer");
  }
  return value;
}

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

}  // namespace props
