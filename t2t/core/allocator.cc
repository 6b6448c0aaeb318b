#include "t2t/core/allocator.h"

#include <dlfcn.h>

#include <cstdlib>

namespace t2t {

bool limit_thread_caches(size_t bytes) {
  if (std::getenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES")) return false;  // the user's choice
  // Looked up rather than linked: libt2t runs under other allocators too.
  using SetProperty = int (*)(const char*, size_t);
  const auto set = reinterpret_cast<SetProperty>(
      dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty"));
  return set && set("tcmalloc.max_total_thread_cache_bytes", bytes) != 0;
}

}  // namespace t2t
