// The direction of dependencies: a package includes only the packages below
// it (tools -> translate/train/serve -> search/models/data -> kernels/io ->
// core), and a few headers are private to their package. The table is the
// one place that says so; a new folder fails here until it is placed in it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_util.h"

namespace {

namespace fs = std::filesystem;

// Each package and the packages it may include (itself always).
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table = [] {
    const std::set<std::string> core = {"t2t/core"};
    auto with = [](std::set<std::string> base, std::initializer_list<const char*> more) {
      for (const char* m : more) base.insert(m);
      return base;
    };
    std::map<std::string, std::set<std::string>> t;
    t["t2t/core"] = {};
    t["t2t/proto"] = {};
    t["t2t/kernels"] = core;
    t["t2t/io"] = with(core, {"t2t/kernels"});
    t["t2t/text"] = core;
    t["t2t/metrics"] = with(core, {"t2t/text"});
    t["t2t/checkpoint"] = with(core, {"t2t/io"});
    t["t2t/distributed"] = core;
    // The generic model interface, and the hparams every model starts from.
    t["t2t/model"] = with(core, {"t2t/kernels", "t2t/io", "t2t/checkpoint"});
    t["t2t/data"] = with(core, {"t2t/io", "t2t/text"});
    t["t2t/search"] = with(core, {"t2t/kernels", "t2t/model", "t2t/text"});
    // What registers into the registries: concrete models, problems and
    // hparams sets. The library never includes them.
    // A model's sets build on those of the model it extends, as T2T's do.
    t["models"] = with(core, {"t2t/kernels", "t2t/io", "t2t/model", "hparams"});
    t["problems"] = with(core, {"t2t/io", "t2t/text", "t2t/data"});
    t["hparams"] = with(core, {"t2t/model"});
    // libt2t_cuda.so: implements entry points declared below it.
    t["t2t/cuda"] = with(core, {"t2t/distributed"});
    const std::set<std::string> library = {
        "t2t/core",  "t2t/kernels", "t2t/io",   "t2t/text",   "t2t/metrics", "t2t/checkpoint",
        "t2t/model", "t2t/data",    "t2t/search", "t2t/proto"};
    t["t2t/translate"] = library;
    t["t2t/train"] = with(library, {"t2t/distributed"});
    t["t2t/serve"] = with(core, {"t2t/search", "t2t/translate"});
    // Front ends: the library, never each other.
    std::set<std::string> front = with(library, {"t2t/distributed", "t2t/translate", "t2t/train",
                                                 "t2t/serve", "models", "problems", "hparams"});
    t["python/src"] = front;
    t["tools"] = front;
    t["bench"] = with(front, {"tools"});
    // The fuzz harnesses drive the readers of untrusted bytes (checkpoints
    // among them) and the server's framing and JSON layer; the tests replay
    // them. The shortlist reader is the one torch-free reader in t2t/search.
    t["fuzz"] = with(core, {"t2t/io", "t2t/text", "t2t/data", "t2t/checkpoint", "t2t/search",
                            "t2t/serve"});
    t["tests"] = with(front, {"tools", "bench", "t2t/cuda", "fuzz"});
    return t;
  }();
  return table;
}

// Headers that only their own package (and the tests) include.
const std::map<std::string, std::string> kPrivate = {
    // Loading and readying a model: every front end goes through Translator.
    {"t2t/translate/model_loading.h", "t2t/translate"},
};

// The package of a path relative to the root: t2t/<dir>, or the top folder.
std::string package_of(const std::string& path) {
  const auto first = path.find('/');
  if (first == std::string::npos) return "";
  if (path.compare(0, first, "t2t") == 0) {
    const auto second = path.find('/', first + 1);
    return second == std::string::npos ? "t2t" : path.substr(0, second);
  }
  if (path.compare(0, first, "python") == 0) return "python/src";
  return path.substr(0, first);
}

struct Include {
  std::string from;  // relative to the root
  std::string to;
  int line;
};

std::vector<Include> project_includes(const fs::path& root) {
  static const std::regex include_re(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<Include> out;
  for (const char* top : {"t2t", "models", "problems", "hparams", "tools", "python/src", "bench",
                          "fuzz", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".cu")) continue;
      const std::string from = fs::relative(entry.path(), root).string();
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        // Only the project's own headers: a name that is a file under the root.
        if (std::regex_search(line, m, include_re) && fs::exists(root / m[1].str()))
          out.push_back({from, m[1].str(), n});
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("includes point down the layers, as the table in this test says", "[layering]") {
  const fs::path root = t2t::test::source_dir();
  const auto includes = project_includes(root);
  REQUIRE(includes.size() > 500);  // the walk found the tree
  std::set<std::string> unplaced;
  std::vector<std::string> wrong;
  for (const Include& inc : includes) {
    const std::string from = package_of(inc.from), to = package_of(inc.to);
    const auto rules = allowed().find(from);
    if (rules == allowed().end()) {
      unplaced.insert(from);
      continue;
    }
    const std::string where = inc.from + ":" + std::to_string(inc.line) + " includes " + inc.to;
    if (from != to && !rules->second.count(to))
      wrong.push_back(where + " (" + from + " may not depend on " + to + ")");
    const auto only = kPrivate.find(inc.to);
    if (only != kPrivate.end() && from != only->second && from != "tests")
      wrong.push_back(where + " (private to " + only->second + ")");
  }
  std::string report;
  for (const auto& p : unplaced) report += "package " + p + " is not in the table\n";
  for (const auto& w : wrong) report += w + "\n";
  INFO(report);
  CHECK(unplaced.empty());
  CHECK(wrong.empty());
}

TEST_CASE("the layering check sees a wrong include", "[layering]") {
  // The check itself: packages as it names them, and one edge of each kind.
  CHECK(package_of("t2t/core/error.h") == "t2t/core");
  CHECK(package_of("models/transformer.cc") == "models");
  CHECK(package_of("python/src/translator.cc") == "python/src");
  CHECK(allowed().at("t2t/translate").count("t2t/search"));
  CHECK_FALSE(allowed().at("t2t/search").count("t2t/translate"));
  CHECK_FALSE(allowed().at("t2t/core").count("t2t/kernels"));
  CHECK_FALSE(allowed().at("python/src").count("tools"));
  CHECK_FALSE(allowed().at("t2t/translate").count("hparams"));
}
