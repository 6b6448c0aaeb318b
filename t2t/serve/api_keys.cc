#include "t2t/serve/api_keys.h"

#include <algorithm>
#include <fstream>

#include "t2t/core/error.h"
#include "t2t/core/string_util.h"

namespace t2t {

namespace {

// Equal in a time that depends on the lengths only.
bool equal_in_constant_time(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

ApiKeys ApiKeys::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw OptionError("api_key_file", "{api_key_file}=" + path + " cannot be read");
  ApiKeys keys;
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (!line.empty()) keys.keys_.push_back(line);
  }
  if (keys.keys_.empty())
    throw OptionError("api_key_file",
                      "{api_key_file}=" + path + " holds no key: write one key a line");
  return keys;
}

bool ApiKeys::allows(const std::string& authorization) const {
  if (keys_.empty()) return true;
  static const std::string kScheme = "Bearer ";
  if (!starts_with(authorization, kScheme)) return false;
  const std::string given = trim(authorization.substr(kScheme.size()));
  bool ok = false;
  for (const std::string& key : keys_) ok |= equal_in_constant_time(given, key);  // no early exit
  return ok;
}

}  // namespace t2t
