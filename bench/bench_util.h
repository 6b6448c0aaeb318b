// What the benchmark binaries share: process CPU time and peak memory as
// getrusage reports them, and the small helpers their JSON lines use.
#pragma once

#include <sys/resource.h>

#include <cstdlib>
#include <string>

namespace t2t::bench {

inline std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

inline std::string basename(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

// User + system CPU seconds of this process so far, all threads: less
// disturbed than wall time by other processes sharing the cores.
inline double cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

inline double peak_rss_mib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

}  // namespace t2t::bench
