// --t2t_usr_dir: user code that registers its own problems, models and
// hparams sets, built as shared libraries against libt2t and loaded at run
// time. Their T2T_REGISTER_* objects run when the library is loaded.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace t2t {

// Besides shared libraries, a user dir may hold declarations that a higher
// layer knows how to register (YAML problems, registered by t2t/data). Such
// a layer adds a loader for its file extension (e.g. ".yaml") at start-up.
using UserFileLoader = std::function<void(const std::string& path)>;
void register_user_file_loader(const std::string& extension, UserFileLoader loader);

// Loads every "*.so" in `dir` (sorted by name, so the order is stable), and
// every file with a registered extension, or the one file `dir` names. Throws t2t::Error naming the
// file and the loader's message when one cannot be loaded, and reports
// duplicate registrations. Returns the paths loaded.
std::vector<std::string> load_user_dir(const std::string& dir);

}  // namespace t2t
