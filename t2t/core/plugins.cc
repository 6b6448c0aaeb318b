#include "t2t/core/plugins.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/registry.h"
#include "t2t/core/string_util.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {
std::map<std::string, UserFileLoader>& file_loaders() {
  static std::map<std::string, UserFileLoader> loaders;
  return loaders;
}

void load_shared_library(const std::string& lib) {
  // RTLD_GLOBAL: a plugin may itself be used by a later plugin.
  void* handle = ::dlopen(fs::absolute(lib).c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw OptionError("t2t_usr_dir", "cannot load plugin '" + lib + "' from {t2t_usr_dir}: " +
                                         ::dlerror() + ". Was it built against this libt2t?");
}
}  // namespace

void register_user_file_loader(const std::string& extension, UserFileLoader loader) {
  file_loaders()[extension] = std::move(loader);
}

std::vector<std::string> load_user_dir(const std::string& dir) {
  auto loadable = [](const fs::path& p) {
    return p.extension() == ".so" || file_loaders().count(p.extension().string()) > 0;
  };
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    if (!loadable(dir))
      throw OptionError("t2t_usr_dir", "{t2t_usr_dir}=" + dir +
                                           " is neither a directory nor a loadable file (.so" +
                                           (file_loaders().count(".yaml") ? " or .yaml" : "") +
                                           ")");
    files.push_back(dir);
  } else if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && loadable(entry.path())) files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty())
      throw OptionError("t2t_usr_dir", "{t2t_usr_dir}=" + dir + " holds no plugin (.so) or "
                                           "problem declaration (.yaml); see problems/examples/ "
                                           "and configs/problems/");
  } else {
    throw OptionError("t2t_usr_dir", "{t2t_usr_dir}=" + dir + " does not exist");
  }
  for (const auto& file : files) {
    const std::string ext = fs::path(file).extension().string();
    if (ext == ".so") load_shared_library(file);
    else file_loaders().at(ext)(file);
    check_registrations();
    spdlog::info("loaded {}", file);
  }
  return files;
}

}  // namespace t2t
