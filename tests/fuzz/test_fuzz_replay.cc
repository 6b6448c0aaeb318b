// Every fuzz harness (fuzz/) on its seed corpus and on every input a fuzzer
// once found a fault with (fuzz/regressions/<harness>): in the ordinary
// build, so a fixed reader stays fixed. A harness catches the reader's
// refusals (t2t::Error); anything else escaping fails the test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz/fuzz_target.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_of(const std::string& kind, const std::string& harness) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(t2t::test::source_dir()) / "fuzz" / kind / harness;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("every fuzz harness takes its seed corpus and past findings", "[fuzz]") {
  const auto& harnesses = t2t::fuzz::harnesses();
  REQUIRE(harnesses.size() >= 12);
  for (const auto& [name, harness] : harnesses) {
    const auto seeds = inputs_of("corpus", name);
    INFO("harness " << name);
    CHECK(!seeds.empty());  // each harness starts from valid inputs
    auto all = seeds;
    for (const auto& p : inputs_of("regressions", name)) all.push_back(p);
    for (const auto& path : all) {
      INFO(path.string());
      const std::string data = read_bytes(path);
      CHECK_NOTHROW(harness(data));
    }
  }
}

TEST_CASE("fuzz harnesses survive empty and truncated seeds", "[fuzz]") {
  for (const auto& [name, harness] : t2t::fuzz::harnesses()) {
    INFO("harness " << name);
    CHECK_NOTHROW(harness(""));
    for (const auto& path : inputs_of("corpus", name)) {
      const std::string data = read_bytes(path);
      for (size_t cut : {data.size() / 2, data.size() - data.size() / 8}) {
        INFO(path.string() << " cut at " << cut);
        CHECK_NOTHROW(harness(std::string_view(data).substr(0, cut)));
      }
    }
  }
}
