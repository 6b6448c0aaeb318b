// Registries of problems, models and hparams sets, filled by the
// T2T_REGISTER_* macros. Each is a function-local static defined in libt2t,
// so the binaries and every plugin share one instance.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/string_util.h"

namespace t2t {

// Where an entry came from, for error messages about duplicates.
struct RegistryOrigin {
  std::string symbol;  // the C++ class or function that was registered
  std::string file;    // the source file (or plugin) it was defined in
};

template <typename Factory>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws t2t::Error naming both definitions when `name` is taken.
  void add(const std::string& name, Factory factory, RegistryOrigin origin) {
    auto it = entries_.find(name);
    if (it != entries_.end()) {
      throw Error(kind_ + " '" + name + "' is registered twice: by " + it->second.origin.symbol +
                  " (" + it->second.origin.file + ") and by " + origin.symbol + " (" +
                  origin.file + "). Rename one of them.");
    }
    entries_.emplace(name, Entry{std::move(factory), std::move(origin)});
  }

  bool contains(const std::string& name) const { return entries_.count(name) > 0; }

  // Throws t2t::Error listing close matches when `name` is unknown.
  const Factory& get(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) throw unknown(name);
    return it->second.factory;
  }

  const RegistryOrigin& origin(const std::string& name) const {
    get(name);
    return entries_.at(name).origin;
  }

  // Sorted, as std::map keeps them.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }

  const std::string& kind() const { return kind_; }

  // Removes an entry; for plugins that are unloaded and for tests.
  void remove(const std::string& name) { entries_.erase(name); }

  // The error for a name not registered, with the names it is close to,
  // naming the option that takes such a name: the kind with underscores for
  // spaces (problem, model, hparams_set).
  OptionError unknown(const std::string& name) const {
    std::string option = kind_;
    std::replace(option.begin(), option.end(), ' ', '_');
    std::string msg = "unknown " + kind_ + " '" + name + "'.";
    auto near = close_matches(name, names());
    if (!near.empty()) msg += " Did you mean " + join(near, ", ") + "?";
    msg += " Run with {registry_help} to list every registered " + kind_ +
           "; your own can be added with {t2t_usr_dir}.";
    return OptionError(option, msg);
  }

 private:
  struct Entry {
    Factory factory;
    RegistryOrigin origin;
  };
  std::string kind_;
  std::map<std::string, Entry> entries_;
};

// Registration runs during static initialisation, where an exception would
// abort before main(): failures are recorded here, and
// check_registrations() reports them.
std::vector<std::string>& registration_errors();
void check_registrations();

template <typename Factory>
struct Registrar {
  Registrar(Registry<Factory>& registry, const std::string& name, Factory factory,
            RegistryOrigin origin) {
    try {
      registry.add(name, std::move(factory), std::move(origin));
    } catch (const Error& e) {
      registration_errors().push_back(e.what());
    }
  }
};

}  // namespace t2t

#define T2T_CONCAT_INNER(a, b) a##b
#define T2T_CONCAT(a, b) T2T_CONCAT_INNER(a, b)
