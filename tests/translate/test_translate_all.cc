// End-to-end tests of t2t-translate-all on a briefly trained sample run with
// three checkpoints: one file per checkpoint named as T2T names it, each the
// decoder's translation by that checkpoint; a rerun skips what is there;
// --min_steps; the errors; and t2t-bleu reading the directory.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>

#include <filesystem>
#include <fstream>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/file_util.h"
#include "t2t/translate/translate_all.h"
#include "tests/support/sample_run.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// The sample run trained on to step 30 with a checkpoint every 5 steps
// from step 20: checkpoints 20, 25 and 30.
struct Run {
  t2t::test::SampleRun run{"translate_all"};
  bool ok = false;
  std::string log;
  Run() {
    log = run.log;
    if (!run.ok) return;
    const auto r = run_command(run.trainer("--train_steps=30 --save_checkpoints_steps=5"));
    log += r.output;
    ok = r.exit_code == 0;
  }
};

const Run& trained() {
  static Run r;
  INFO(r.log);
  REQUIRE(r.ok);
  return r;
}

std::string source_file(const TempDir& dir, size_t lines) {
  const std::string path = dir / "src.en";
  std::ofstream out(path);
  const auto dev = read_lines(t2t::test::source_dir() + "/data/sample/dev.en");
  for (size_t i = 0; i < lines && i < dev.size(); ++i) out << dev[i] << "\n";
  return path;
}

// A test's own --decode_hparams replaces the default one: a flag is given once.
std::string translate_all(const t2t::test::SampleRun& run, const std::string& extra) {
  const bool own = extra.find("--decode_hparams=") != std::string::npos;
  return "./t2t-translate-all --problem=translate_enzh_sample --data_dir=" + run.data +
         " --model_dir=" + run.run + " --beam_size=2 " +
         (own ? "" : "--decode_hparams=extra_length=5,log_results=false ") + extra;
}

}  // namespace

TEST_CASE("t2t-translate-all writes one translation per checkpoint and resumes",
          "[translate_all][e2e]") {
  const auto& t = trained();
  TempDir dir("translate_all_out");
  const std::string src = source_file(dir, 10);
  const std::string out = dir / "translations";
  const auto checkpoints = t2t::list_checkpoints(t.run.run);
  REQUIRE(checkpoints.size() == 3);

  auto r = run_command(translate_all(t.run, "--source=" + src + " --translations_dir=" + out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("[3/3] step 30: wrote"));
  CHECK_THAT(r.output, Catch::Contains("translated 3 checkpoint(s), skipped 0"));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  const std::vector<std::string> want = {"translate_enzh_sample-20", "translate_enzh_sample-25",
                                         "translate_enzh_sample-30"};
  CHECK(names == want);
  for (const auto& checkpoint : checkpoints) {
    const int64_t step = t2t::checkpoint_step(checkpoint);
    const std::string path = t2t::translation_path(out, "translate_enzh_sample", step);
    INFO(path);
    CHECK(read_lines(path).size() == 10);
    // Dated like its checkpoint, as T2T's --keep_timestamp.
    CHECK(fs::last_write_time(path) == fs::last_write_time(checkpoint));
    // What t2t-decoder makes of the same checkpoint.
    const std::string single = dir / ("single-" + std::to_string(step));
    const auto d = run_command(t.run.decoder("--checkpoint_path=" + checkpoint +
                                             " --decode_hparams=beam_size=2,extra_length=5 "
                                             "--decode_from_file=" + src +
                                             " --decode_to_file=" + single));
    REQUIRE(d.exit_code == 0);
    CHECK(read_lines(path) == read_lines(single));
  }

  // A rerun leaves the files there alone and makes the missing one.
  const std::string kept = t2t::translation_path(out, "translate_enzh_sample", 20);
  t2t::write_file_atomic(kept, "left as it was\n");
  fs::remove(t2t::translation_path(out, "translate_enzh_sample", 25));
  r = run_command(translate_all(t.run, "--source=" + src + " --translations_dir=" + out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("translated 1 checkpoint(s), skipped 2"));
  CHECK_THAT(r.output, Catch::Contains("step 20: " + kept + " already exists, skipping it"));
  CHECK(read_lines(kept) == std::vector<std::string>{"left as it was"});
  CHECK(read_lines(t2t::translation_path(out, "translate_enzh_sample", 25)).size() == 10);

  // --min_steps leaves the earlier checkpoints out.
  const std::string later = dir / "later";
  r = run_command(translate_all(t.run, "--source=" + src + " --translations_dir=" + later +
                                           " --min_steps=25"));
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(t2t::translation_path(later, "translate_enzh_sample", 20)));
  CHECK(fs::exists(t2t::translation_path(later, "translate_enzh_sample", 25)));
  CHECK(fs::exists(t2t::translation_path(later, "translate_enzh_sample", 30)));
}

TEST_CASE("t2t-translate-all explains what is wrong", "[translate_all][e2e]") {
  const auto& t = trained();
  TempDir dir("translate_all_bad");
  const std::string src = source_file(dir, 2);
  auto r = run_command(translate_all(t.run, "--source=" + src + " --translations_dir=" +
                                                (dir / "x") + " --min_steps=1000"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("holds no checkpoint") &&
                           Catch::Contains("--min_steps=1000"));
  r = run_command(translate_all(t.run, "--source=" + (dir / "missing.en") +
                                           " --translations_dir=" + (dir / "x")));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--source=" + (dir / "missing.en") + " does not exist"));
  r = run_command(translate_all(t.run, "--source=" + src + " --decode_hparams=beam_size=3"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("give beam_size with --beam_size"));
  r = run_command("./t2t-translate-all --problem=translate_enzh_sample --data_dir=" + t.run.data +
                  " --source=" + src);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--model_dir is required"));
  CHECK_FALSE(fs::exists(dir / "x/translate_enzh_sample-30"));
}

TEST_CASE("t2t-bleu --translations_dir scores t2t-translate-all's files",
          "[translate_all][e2e]") {
  const auto help = run_command("./t2t-bleu --help");
  if (help.output.find("translations_dir") == std::string::npos)
    T2T_SKIP("this t2t-bleu has no --translations_dir");
  const auto& t = trained();
  TempDir dir("translate_all_bleu");
  const std::string src = source_file(dir, 10);
  const std::string ref = dir / "ref.zh";
  {
    std::ofstream out(ref);
    const auto dev = read_lines(t2t::test::source_dir() + "/data/sample/dev.zh");
    for (size_t i = 0; i < 10; ++i) out << dev[i] << "\n";
  }
  const std::string out = dir / "translations";
  auto r = run_command(translate_all(t.run, "--source=" + src + " --translations_dir=" + out));
  REQUIRE(r.exit_code == 0);
  r = run_command("./t2t-bleu --translations_dir=" + out + " --reference=" + ref);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  for (const char* step : {"20", "25", "30"}) {
    INFO("step " << step);
    CHECK_THAT(r.output, Catch::Contains(std::string("translate_enzh_sample-") + step));
  }
}
