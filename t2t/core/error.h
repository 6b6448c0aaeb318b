// The one exception type t2t throws for user-facing problems: bad flags, bad
// files, unknown names. Its message is meant to be printed as is, so it names
// the flag, file or value at fault and says what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace t2t {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace t2t
