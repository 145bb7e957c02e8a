#pragma once

// Parsing helpers for the `key=value` tokens of the scenarios' command-line forms.

#include <string>
#include <vector>

namespace props {

struct Token {
  std::string key;
  std::string value;
};

// Splits `key=value` at the first '='; throws std::invalid_argument if there is none.
Token split_token(const std::string& token);

// `text` as an int; throws std::invalid_argument naming `token` unless all of it is an integer.
int to_int(const std::string& text, const std::string& token);

// The fields of `text` between separators (a trailing separator ends with an empty field).
std::vector<std::string> split_on(const std::string& text, char separator);

}  // namespace props
