#include "t2t/core/runtime.h"

#include <dirent.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "t2t/core/cuda_loader.h"
#include "t2t/core/error.h"
#include "t2t/core/string_util.h"

namespace t2t {

void ensure_runtime_environment(int argc, char** argv) {
  (void)argc;
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  // If exec fails the program simply continues with the default policy.
  ::execv(self_executable().c_str(), argv);
}

void quiet_library_backtraces() {
  const char* show = std::getenv("TORCH_SHOW_CPP_STACKTRACES");
  if (show != nullptr && std::string(show) == "1") return;
  static const c10::Backtrace none =
      std::make_shared<c10::PrecomputedLazyValue<std::string>>(std::string());
  c10::SetStackTraceFetcher([]() -> c10::Backtrace { return none; });
}

std::string self_executable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof(path) - 1)) return "/proc/self/exe";
  path[n] = '\0';
  // A binary replaced on disk while running reads as "... (deleted)".
  if (::access(path, X_OK) != 0) return "/proc/self/exe";
  return path;
}

void prepare_cuda() {
  // A failure is reported when a GPU is asked for (resolve_device).
  if (nvidia_driver_present()) (void)load_cuda();
}

int set_num_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  return threads;
}

std::vector<int> child_processes(int parent) {
  std::vector<int> children;
  DIR* proc = ::opendir("/proc");
  if (!proc) return children;
  while (const dirent* entry = ::readdir(proc)) {
    const char* name = entry->d_name;
    if (name[0] < '0' || name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) children.push_back(std::atoi(name));
  }
  ::closedir(proc);
  return children;
}

std::string resolve_device(const std::string& flag) {
  const std::string f = to_lower(trim(flag));
  // Without an NVIDIA driver there is no GPU to find: the CUDA libraries
  // stay unloaded.
  if (f == "auto") return cuda_device_count() > 0 ? "cuda:0" : "cpu";
  if (f == "cpu") return "cpu";
  if (f == "cuda" || starts_with(f, "cuda:")) {
    if (const std::string why = load_cuda(); !why.empty())
      throw OptionError("device", "{device}=" + flag + " asks for CUDA, but " + why + ". Use {device}=cpu (or auto).");
    if (!torch::cuda::is_available())
      // LibTorch cannot tell a missing driver from a build without CUDA.
      throw OptionError("device", "{device}=" + flag +
                  " asks for CUDA, but no CUDA device is available (no GPU visible, no "
                  "driver, or a LibTorch built without CUDA). Use {device}=cpu (or auto).");
    int index = 0;
    if (f.size() > 5) {
      try {
        index = std::stoi(f.substr(5));
      } catch (const std::exception&) {
        throw OptionError("device", "{device}=" + flag + ": expected cuda:N with N a GPU index");
      }
    }
    if (index < 0 || index >= static_cast<int>(torch::cuda::device_count()))
      throw OptionError("device", "{device}=" + flag + ": only " + std::to_string(torch::cuda::device_count()) +
                  " CUDA device(s) are visible");
    return "cuda:" + std::to_string(index);
  }
  throw OptionError("device", "{device}=" + flag + " is not a device; use auto, cpu, cuda or cuda:N");
}

int cuda_device_count() {
  if (!cuda_loaded() && (!nvidia_driver_present() || !load_cuda().empty())) return 0;
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

void seed_everything(uint64_t seed) {
  torch::manual_seed(seed);
  if (cuda_loaded() && torch::cuda::is_available()) torch::cuda::manual_seed_all(seed);
}

std::string runtime_summary() {
  std::string cuda = !cuda_loaded()
                         ? "CUDA not loaded"
                         : (torch::cuda::is_available()
                                ? std::to_string(torch::cuda::device_count()) + " CUDA device(s)"
                                : "CUDA loaded, no GPU visible");
  return "LibTorch " + std::string(TORCH_VERSION) + ", " + cuda + ", " +
         std::to_string(at::get_num_threads()) + " intra-op thread(s)";
}

}  // namespace t2t
