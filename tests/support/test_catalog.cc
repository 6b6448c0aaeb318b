// The test catalogue itself: CTest registers each Catch test by its name
// and runs the test binary with that name as its argument. CMake splits a
// name at ';' into two that match no test, which then "pass" without
// running; a name starting with '-' is taken for an option, and the test
// fails without running.
#include <catch2/catch.hpp>

TEST_CASE("no test's name holds a semicolon or starts with a dash, which CTest would mangle",
          "[catalog]") {
  for (const auto& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO(test.name);
    CHECK(test.name.find(';') == std::string::npos);
    CHECK(test.name.rfind('-', 0) == std::string::npos);
  }
}
