// --api_key_file: the keys a client may send as "Authorization: Bearer KEY".
#pragma once

#include <string>
#include <vector>

namespace t2t {

class ApiKeys {
 public:
  ApiKeys() = default;  // no keys: every request is let in
  // One key a line (blank lines and whitespace ignored). Throws t2t::Error
  // naming the file when it cannot be read or holds no key.
  static ApiKeys from_file(const std::string& path);

  bool enabled() const { return !keys_.empty(); }
  // Whether an Authorization header carries one of the keys, compared in
  // constant time so timing reveals nothing.
  bool allows(const std::string& authorization) const;

 private:
  std::vector<std::string> keys_;
};

}  // namespace t2t
