// Settings of the memory allocator that t2t's binaries link (tcmalloc:
// cmake/T2TDependencies.cmake says why), made where a program knows what
// it is about to do. Where another allocator runs (a Python process, a
// build without tcmalloc), they do nothing.
#pragma once

#include <cstddef>

namespace t2t {

// The most memory tcmalloc's per-thread caches of freed blocks may hold in
// all, unless TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES already says. Its
// default, 32 MiB, is held on top of what decoding uses: transformer_base
// int8 decoding the Tatoeba dev set on two threads peaked 15-20 MB lower
// with 4 MiB. False where there is no tcmalloc to set.
bool limit_thread_caches(size_t bytes);

}  // namespace t2t
