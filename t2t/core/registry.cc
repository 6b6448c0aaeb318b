#include "t2t/core/registry.h"

namespace t2t {

std::vector<std::string>& registration_errors() {
  static std::vector<std::string> errors;
  return errors;
}

void check_registrations() {
  auto& errors = registration_errors();
  if (errors.empty()) return;
  std::string msg = join(errors, "\n");
  errors.clear();
  throw Error(msg);
}

}  // namespace t2t
