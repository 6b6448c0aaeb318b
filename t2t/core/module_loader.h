// t2t's optional parts, modules beside libt2t.so loaded when a run first
// needs them (libt2t_cuda.so, libt2t_archive.so): each pulls in large
// libraries most runs never use, and a missing one fails only when asked
// for, saying what to install.
#pragma once

#include <string>

namespace t2t {

// The directory of the shared object that holds `address` (a function or
// variable of it); "" when the dynamic linker cannot say.
std::string directory_of(const void* address);

// The directory that holds libt2t.so, and the modules.
std::string libt2t_directory();

// Loads `<libt2t_directory>/<file>` once (RTLD_NOW | RTLD_LOCAL) and returns
// its handle. Throws t2t::Error naming the module, what it is for (`purpose`)
// and the dynamic linker's reason when it cannot be loaded.
void* load_module(const std::string& file, const std::string& purpose);

// `name` from a module loaded by load_module; throws t2t::Error naming both
// when it is absent (a module from another build).
void* module_symbol(void* module, const std::string& file, const char* name);

}  // namespace t2t
