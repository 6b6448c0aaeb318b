// The allocator settings of t2t/core/allocator.h, in this binary, which
// links tcmalloc as t2t's programs do.
#include <dlfcn.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "t2t/core/allocator.h"
#include "tests/support/test_util.h"

namespace {

using GetProperty = int (*)(const char*, size_t*);

GetProperty tcmalloc_property() {
  return reinterpret_cast<GetProperty>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
}

}  // namespace

TEST_CASE("limit_thread_caches sets tcmalloc's total thread cache, unless the user did", "[runtime]") {
  const GetProperty get = tcmalloc_property();
  if (!get) T2T_SKIP("this test binary does not run on tcmalloc");
  const char* kName = "tcmalloc.max_total_thread_cache_bytes";
  size_t before = 0;
  REQUIRE(get(kName, &before));

  REQUIRE(t2t::limit_thread_caches(size_t{4} << 20));
  size_t now = 0;
  REQUIRE(get(kName, &now));
  CHECK(now == (size_t{4} << 20));

  // TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES given: tcmalloc read it at start,
  // and it stays.
  setenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES", "1048576", 1);
  CHECK_FALSE(t2t::limit_thread_caches(size_t{8} << 20));
  unsetenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES");
  REQUIRE(get(kName, &now));
  CHECK(now == (size_t{4} << 20));

  REQUIRE(t2t::limit_thread_caches(before));  // as the other tests found it
}
