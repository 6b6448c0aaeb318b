#include "t2t/core/module_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "t2t/core/error.h"

namespace t2t {

std::string directory_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

std::string libt2t_directory() {
  const std::string dir = directory_of(reinterpret_cast<const void*>(&libt2t_directory));
  return dir.empty() ? "." : dir;
}

void* load_module(const std::string& file, const std::string& purpose) {
  static std::mutex mutex;
  static std::map<std::string, void*> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(file); it != loaded.end()) return it->second;
  const std::string path = (std::filesystem::path(libt2t_directory()) / file).string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw Error("could not load " + path + " (" + purpose + "): " + (why ? why : "unknown error"));
  }
  loaded.emplace(file, handle);
  return handle;
}

void* module_symbol(void* module, const std::string& file, const char* name) {
  void* symbol = dlsym(module, name);
  if (symbol == nullptr)
    throw Error(file + " has no " + name + "; it and libt2t.so come from different builds: " +
                "rebuild or reinstall t2t");
  return symbol;
}

}  // namespace t2t
