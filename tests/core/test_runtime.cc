// Process-wide run-time settings (t2t/core/runtime.h).
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <cstdlib>
#include <string>

#include "t2t/core/runtime.h"

namespace {

std::string library_error_text() {
  try {
    TORCH_CHECK(false, "the library's own message");
  } catch (const c10::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("LibTorch's errors lose their C++ backtrace unless TORCH_SHOW_CPP_STACKTRACES=1",
          "[runtime]") {
  // Asked for, the frames stay: the setting is the user's to override.
  ::setenv("TORCH_SHOW_CPP_STACKTRACES", "1", 1);
  t2t::quiet_library_backtraces();
  CHECK_THAT(library_error_text(), Catch::Contains("frame #0"));

  ::unsetenv("TORCH_SHOW_CPP_STACKTRACES");
  t2t::quiet_library_backtraces();
  const std::string text = library_error_text();
  CHECK_THAT(text, Catch::Contains("the library's own message"));
  CHECK_THAT(text, !Catch::Contains("frame #"));
}
