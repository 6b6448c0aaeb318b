#include "t2t/core/logging.h"

#include "t2t/core/error.h"

namespace t2t {

void setup_logging(const std::string& level) {
  std::string l = level == "warning" ? "warn" : level;
  auto parsed = spdlog::level::from_str(l);
  // from_str maps anything unknown to "off"; only accept "off" when asked.
  if (parsed == spdlog::level::off && l != "off")
    throw OptionError("log_level", "{log_level}=" + level +
                                       " is not a level; use trace, debug, info, warning, error "
                                       "or off");
  spdlog::set_level(parsed);
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
}

}  // namespace t2t
