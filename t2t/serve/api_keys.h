// --api_key_file: the keys a client may send as "Authorization: Bearer KEY".
#pragma once

#include <string>
#include <vector>

namespace t2t {

class ApiKeys {
 public:
  ApiKeys() = default;  // no keys: every request is let in
  // One key a line; blank lines and surrounding whitespace are ignored, so
  // that keys can be rotated by listing old and new. Throws t2t::Error
  // naming the flag and the file when it cannot be read or holds no key.
  static ApiKeys from_file(const std::string& path);

  bool enabled() const { return !keys_.empty(); }
  // Whether an Authorization header's value carries one of the keys. Each
  // comparison takes the same time whatever the bytes, so that timing does
  // not reveal how much of a key was right.
  bool allows(const std::string& authorization) const;

 private:
  std::vector<std::string> keys_;
};

}  // namespace t2t
