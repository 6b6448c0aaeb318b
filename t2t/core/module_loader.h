// t2t's optional parts, built as modules beside libt2t.so and loaded when a
// run first needs them: libt2t_cuda.so (t2t's CUDA code) and
// libt2t_archive.so (unpacking downloads with libarchive).
//
// Each pulls in libraries most runs never use: the CUDA half of LibTorch
// (~250 MiB resident), or libarchive with libxml2 and ICU (~35 MB on disk,
// which alone would put the relocatable install over its size budget).
// Loading them on demand keeps every process small and quick to start, and
// lets an installed tree run where a module's libraries are missing until
// the module is asked for, at which point the error says what to install.
#pragma once

#include <string>

namespace t2t {

// The directory of the shared object that holds `address` (a function or
// variable of it); "" when the dynamic linker cannot say.
std::string directory_of(const void* address);

// The directory that holds libt2t.so (where the modules are built and
// installed), resolved from this library's own address.
std::string libt2t_directory();

// Loads `<libt2t_directory>/<file>` once (RTLD_NOW | RTLD_LOCAL) and returns
// its handle. Throws t2t::Error naming the module, what it is for (`purpose`)
// and the dynamic linker's reason when it cannot be loaded.
void* load_module(const std::string& file, const std::string& purpose);

// `name` from a module loaded by load_module; throws t2t::Error naming both
// when it is absent (a module from another build).
void* module_symbol(void* module, const std::string& file, const char* name);

}  // namespace t2t
