// --t2t_usr_dir: user code that registers its own problems, models and
// hparams sets, built as shared libraries against libt2t and loaded at run
// time. Their T2T_REGISTER_* objects run when the library is loaded.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// Loads every "*.so" in `dir` (sorted by name, so the order is stable), or
// the file itself if `dir` names a .so file. Throws t2t::Error naming the
// file and the loader's message when one cannot be loaded, and reports
// duplicate registrations. Returns the paths loaded.
std::vector<std::string> load_user_dir(const std::string& dir);

}  // namespace t2t
