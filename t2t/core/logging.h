// Logging goes through spdlog (timestamps, levels); this sets it up once per
// process from --log_level.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace t2t {

// level: trace, debug, info, warning (or warn), error, off. Throws on others.
void setup_logging(const std::string& level);

}  // namespace t2t
