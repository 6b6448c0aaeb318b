// What the benchmark binaries share: their main()'s flag handling, process
// CPU time and peak memory as getrusage reports them, the small helpers
// their JSON lines use, and the profiler switch.
#pragma once

#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <cxxopts.hpp>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <utility>

#include "t2t/core/runtime.h"

namespace t2t::bench {

// A benchmark's main(): the runtime environment the project's binaries run
// in, --help, then `body` with the parsed flags; an error is printed after
// the program's name and gives exit status 1.
inline int bench_main(int argc, char** argv, cxxopts::Options& options,
                      const std::function<int(const cxxopts::ParseResult&)>& body) {
  t2t::ensure_runtime_environment(argc, argv);
  t2t::prepare_cuda();
  try {
    const auto flags = options.parse(argc, argv);
    if (flags.count("help")) {
      std::cout << options.help() << std::endl;
      return 0;
    }
    return body(flags);
  } catch (const std::exception& e) {
    std::cerr << options.program() << ": " << e.what() << std::endl;
    return 1;
  }
}

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

// Records what runs between construction and finish() with LibTorch's
// (Kineto) profiler into a Chrome trace at `path` (nothing when empty), as
// the Python references do with torch.profiler, so that the two sides'
// operator times can be set side by side. `cuda` adds the GPU kernels: on a
// GPU the CPU-side operator times are mostly launch costs.
class Profile {
 public:
  explicit Profile(std::string path, bool cuda = false) : path_(std::move(path)) {
    if (path_.empty()) return;
    namespace prof = torch::profiler::impl;
    const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
    std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
    if (cuda) activities.insert(prof::ActivityType::CUDA);
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  }
  void finish() {
    if (path_.empty()) return;
    torch::autograd::profiler::disableProfiler()->save(path_);
    path_.clear();
  }

 private:
  std::string path_;
};

}  // namespace t2t::bench
