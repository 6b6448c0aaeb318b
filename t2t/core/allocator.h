// Settings of tcmalloc, which t2t's binaries link (cmake/T2TDependencies.cmake
// says why). Under another allocator they do nothing.
#pragma once

#include <cstddef>

namespace t2t {

// Caps tcmalloc's per-thread caches in all (its default is held on top of
// what decoding uses), unless TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES is set.
// False where there is no tcmalloc.
bool limit_thread_caches(size_t bytes);

}  // namespace t2t
