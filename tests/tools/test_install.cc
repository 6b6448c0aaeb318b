// The relocatable install (cmake/T2TInstall.cmake): installed into a
// temporary prefix and run the way it runs on another machine, with
// LibTorch found at run time and nothing taken from the build tree or from
// Debian's libraries but glibc's, libstdc++'s and libgcc's.
#include <ATen/Context.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "t2t/core/module_loader.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// LibTorch's lib/ folder: where the libtorch_cpu.so this binary runs on is.
std::string torch_lib_dir() {
  return t2t::directory_of(reinterpret_cast<const void*>(&at::globalContext));
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// What ldd says each of `file`'s libraries resolves to, as "name path"
// lines ("name not found" for a missing one).
std::vector<std::pair<std::string, std::string>> ldd(const std::string& file,
                                                     const std::string& torch_lib) {
  const auto r = run_command("LD_LIBRARY_PATH=" + quote(torch_lib) + " ldd " + quote(file));
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(r.output);
  const std::regex resolved(R"(^\s*(\S+) => (\S+))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, resolved)) out.emplace_back(m[1], m[2]);
  }
  return out;
}

}  // namespace

TEST_CASE("the installed tree runs where LibTorch is found at run time", "[install][e2e]") {
  // It installs the build directory the binaries under test come from; an
  // installed t2t_tests runs the installed binaries, which have none.
  if (!fs::exists(fs::path(t2t::test::bin_dir()) / "cmake_install.cmake"))
    T2T_SKIP("the binaries under test (" << t2t::test::bin_dir() << ") are not a build directory");
  const std::string torch_lib = torch_lib_dir();
  REQUIRE(fs::exists(fs::path(torch_lib) / "libtorch_cpu.so"));
  TempDir dir("install");
  const std::string prefix = dir / "t2t";
  const std::string install = quote(T2T_CMAKE_COMMAND) + " --install . --strip --prefix " +
                              quote(prefix);
  auto r = run_command(install + " && " + install + " --component tests");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  // Small enough to copy to another machine in one go (64 MiB).
  uintmax_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(prefix))
    if (e.is_regular_file() && !e.is_symlink()) bytes += e.file_size();
  INFO("installed bytes: " << bytes);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  CHECK(bytes < (uintmax_t(64) << 20));  // a sanitizer build's code is several times larger
#endif

  // No library from the build tree, nor from Debian's beyond what every
  // Linux has; none missing. libt2t_archive.so is the one exception: its
  // libarchive is left to the system (cmake/T2TInstall.cmake says why).
  const std::regex everywhere(
      R"(^(ld-linux.*|lib(c|m|dl|pthread|rt|util|resolv|anl|nsl|mvec)\.so.*|libstdc\+\+\.so.*|libgcc_s\.so.*)$)");
  int checked = 0;
  for (const std::string sub : {"libexec/t2t", "lib"}) {
    for (const auto& e : fs::directory_iterator(fs::path(prefix) / sub)) {
      const std::string file = e.path().string();
      if (e.path().filename() == "libt2t_archive.so") continue;
      ++checked;
      for (const auto& [name, path] : ldd(file, torch_lib)) {
        INFO(file << ": " << name << " => " << path);
        CHECK(path != "not");  // "name => not found"
        const bool from_build = path.rfind(t2t::test::bin_dir() + "/", 0) == 0;
        const bool from_debian = path.rfind("/usr/lib/x86_64-linux-gnu/", 0) == 0 ||
                                 path.rfind("/lib/x86_64-linux-gnu/", 0) == 0;
        CHECK_FALSE(from_build);
        if (from_debian) CHECK(std::regex_match(name, everywhere));
      }
    }
  }
  CHECK(checked > 40);

  const std::string clean = "cd " + quote(dir.path.string()) + " && env -i PATH=/usr/bin:/bin HOME=" +
                            quote(dir.path.string()) + " ";
  const std::string with_lib = clean + "T2T_TORCH_LIB=" + quote(torch_lib) + " ";

  // The binary itself, with LD_LIBRARY_PATH holding only LibTorch's folder.
  r = run_command(clean + "LD_LIBRARY_PATH=" + quote(torch_lib) + " " +
                  quote(prefix + "/libexec/t2t/t2t-trainer") + " --help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("--hparams_set"));
  // Its launcher, told where LibTorch is.
  r = run_command(with_lib + quote(prefix + "/bin/t2t-trainer") + " --help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("--hparams_set"));

  // The sample problem reads the installed tree's copy of the sample: cut
  // short here, so that its counts tell which copy was read.
  const fs::path sample = fs::path(prefix) / "share/t2t/sample";
  for (const std::string name : {"train.en", "train.zh", "dev.en", "dev.zh"}) {
    auto lines = t2t::test::read_lines((sample / name).string());
    REQUIRE(lines.size() >= 200);
    lines.resize(name.rfind("train", 0) == 0 ? 200 : 20);
    t2t::test::write_lines((sample / name).string(), lines);
  }
  // LibTorch found through python3 on PATH (the tests' virtualenv has torch).
  const std::string python_dir = fs::path(T2T_TEST_PYTHON).parent_path().string();
  const std::string data = dir / "data", run = dir / "run";
  r = run_command(clean + "PATH=" + quote(python_dir) + ":/usr/bin:/bin " +
                  quote(prefix + "/bin/t2t-datagen") +
                  " --problem=translate_enzh_sample --tmp_dir=tmp --data_dir=" + quote(data));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("wrote 200 examples") && Contains("wrote 20 examples"));

  // 20 steps of CPU training, then a translation, from the installed tree.
  r = run_command(with_lib + quote(prefix + "/bin/t2t-trainer") +
                  " --problem=translate_enzh_sample --model=transformer"
                  " --hparams_set=transformer_tiny --hparams='batch_size=256,hidden_size=32,"
                  "filter_size=64,num_heads=2' --train_steps=20 --threads=1 --data_dir=" +
                  quote(data) + " --output_dir=" + quote(run));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("step 20"));
  t2t::test::write_lines(dir / "in.en", {"Hello."});
  r = run_command(with_lib + quote(prefix + "/bin/t2t-decoder") +
                  " --problem=translate_enzh_sample --model=transformer --hparams_set=transformer_tiny"
                  " --threads=1 --data_dir=" + quote(data) + " --output_dir=" + quote(run) +
                  " --decode_from_file=in.en --decode_to_file=out.zh");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(t2t::test::read_lines(dir / "out.zh").size() == 1);

  // The installed tests run the installed binaries, not this build
  // directory's, with T2T_TEST_BIN_DIR unset (env -i): on another machine
  // there is no build directory to fall back on.
  // (Catch2's --list-tests exits with the number of tests listed.)
  r = run_command(with_lib + quote(prefix + "/tests/t2t_tests") + " --list-tests '[install]'");
  CHECK_THAT(r.output, Contains("the installed tree runs"));
  r = run_command(with_lib + quote(prefix + "/tests/t2t_tests") + " '[.where]'");
  INFO(r.output);
  CHECK_THAT(r.output, Contains("binaries under test: " + prefix + "/bin\n"));
  r = run_command(with_lib + "T2T_TEST_SOURCE_DIR=" + quote(t2t::test::source_dir()) + " " +
                  quote(prefix + "/tests/t2t_tests") +
                  " 't2t-bleu names both files and counts when the line counts differ'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("All tests passed"));

  // The GPU round's script (bench/gpu/round.sh) runs from such a tree on a
  // GPU machine lent for minutes: tried here on the CPU, every stage ends,
  // the CPU's share runs for real (training killed and resumed, decoding),
  // and its summary reads as the round's does.
  const std::string round_out = dir / "round";
  r = run_command(with_lib + "T2T_PYTHON=" + quote(T2T_TEST_PYTHON) +
                  " ROUND_DEVICE=cpu STEPS=30 TREE=" + quote(prefix) + " OUT=" + quote(round_out) +
                  " bash " + quote(t2t::test::source_dir() + "/bench/gpu/round.sh"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  std::ifstream summary(round_out + "/round.json");
  REQUIRE(summary);
  const auto round = nlohmann::json::parse(summary);
  CHECK(round["not_reached"].empty());
  for (const std::string stage : {"smi", "tests", "bench_train", "bench_train_32k", "bench_decode",
                                  "decode", "profile_decode", "graphs", "train"}) {
    INFO("stage " << stage);
    CHECK(round["stages"][stage]["status"] == "passed");
  }
  CHECK(round["stages"]["train"]["none_resumed_to_30"] == true);
  CHECK(round["stages"]["decode"]["sentences"] == 20);
  CHECK(round["stages"]["decode"]["identical"] == 20);
  CHECK(round["stages"]["bench_train"].contains("skipped"));

  // Without LibTorch, or with another version of it: one line that names
  // both ways of pointing at it, or both versions.
  r = run_command(clean + "T2T_TORCH_PYTHON=/nonexistent/python3 " +
                  quote(prefix + "/bin/t2t-trainer") + " --help");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("cannot find LibTorch") && Contains("T2T_TORCH_LIB") &&
                           Contains("import torch"));
  const fs::path other = dir.path / "other_torch";
  fs::create_directories(other / "lib");
  t2t::test::write_lines((other / "lib/libtorch_cpu.so").string(), {""});
  t2t::test::write_lines((other / "version.py").string(), {"__version__ = '1.0.0+cpu'"});
  r = run_command(clean + "T2T_TORCH_LIB=" + quote((other / "lib").string()) + " " +
                  quote(prefix + "/bin/t2t-decoder") + " --help");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("is 1.0.0+cpu") && Contains("built against"));
}

// Not a test of its own: the test above runs it from the installed tree to
// see which binaries an installed t2t_tests would run.
TEST_CASE("where the binaries under test are", "[.where]") {
  std::cout << "binaries under test: " << t2t::test::bin_dir() << std::endl;
}
