#include "t2t/core/plugins.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/registry.h"
#include "t2t/core/string_util.h"

namespace t2t {

namespace fs = std::filesystem;

std::vector<std::string> load_user_dir(const std::string& dir) {
  std::vector<std::string> libs;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    libs.push_back(dir);
  } else if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && ends_with(entry.path().string(), ".so"))
        libs.push_back(entry.path().string());
    std::sort(libs.begin(), libs.end());
    if (libs.empty())
      throw Error("--t2t_usr_dir=" + dir + " holds no .so file; build your plugin there " +
                  "(see problems/examples/) or point the flag at the library itself");
  } else {
    throw Error("--t2t_usr_dir=" + dir + " does not exist");
  }
  for (const auto& lib : libs) {
    // RTLD_GLOBAL: a plugin may itself be used by a later plugin.
    void* handle = ::dlopen(fs::absolute(lib).c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      throw Error("cannot load plugin '" + lib + "' from --t2t_usr_dir: " + ::dlerror() +
                  ". Was it built against this libt2t?");
    check_registrations();
    spdlog::info("loaded user plugin {}", lib);
  }
  return libs;
}

}  // namespace t2t
