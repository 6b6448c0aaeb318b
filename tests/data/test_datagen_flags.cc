// t2t-datagen's problem selection flags as T2T has them: --problem as a
// name, a comma list or a prefix ending in '*'; --exclude_problems;
// --num_shards refused; --max_cases; --only_list. On YAML problems of a few
// lines, so that nothing is downloaded.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "t2t/io/tfrecord.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

using t2t::test::write_lines;

namespace {


// Three YAML problems flagtest_alpha, flagtest_beta, flagtest_gamma over
// one corpus of 30 train and 12 dev pairs, byte vocabularies, 3 train shards.
std::string declare_problems(const TempDir& dir) {
  std::vector<std::string> en, zh;
  for (int i = 0; i < 30; ++i) {
    en.push_back("sentence " + std::to_string(i));
    zh.push_back("句子" + std::to_string(i));
  }
  write_lines(dir / "corpus/train.en", en);
  write_lines(dir / "corpus/train.zh", zh);
  en.resize(12);
  zh.resize(12);
  write_lines(dir / "corpus/dev.en", en);
  write_lines(dir / "corpus/dev.zh", zh);
  for (const std::string name : {"alpha", "beta", "gamma"})
    write_lines(dir / ("usr/" + name + ".yaml"),
                {"name: flagtest_" + name,
                 "train: {source: ../corpus/train.en, target: ../corpus/train.zh}",
                 "dev: {source: ../corpus/dev.en, target: ../corpus/dev.zh}",
                 "vocab: {type: byte}", "shards: {train: 3, dev: 1}"});
  return "./t2t-datagen --t2t_usr_dir=" + (dir / "usr") + " ";
}

int64_t examples(const std::string& data, const std::string& problem, const std::string& split,
                 int shards) {
  int64_t n = 0;
  for (int i = 0; i < shards; ++i) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d", i, shards);
    const std::string path = data + "/" + problem + "-" + split + suffix;
    if (!fs::exists(path)) return -1;
    n += t2t::count_tfrecords(path);
  }
  return n;
}

}  // namespace

TEST_CASE("t2t-datagen --problem takes a prefix pattern, a list and exclusions",
          "[datagen][e2e][datagen_flags]") {
  TempDir dir("datagen_flags");
  const std::string datagen = declare_problems(dir);
  const std::string data = dir / "data";

  // A prefix: every match in name order, less the excluded; --max_cases
  // caps each split of each.
  auto r = run_command(datagen + "--problem='flagtest_*' --exclude_problems=beta --max_cases=7 "
                       "--data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const size_t alpha = r.output.find("generating flagtest_alpha into");
  const size_t gamma = r.output.find("generating flagtest_gamma into");
  REQUIRE(alpha != std::string::npos);
  REQUIRE(gamma != std::string::npos);
  CHECK(alpha < gamma);
  CHECK_THAT(r.output, !Catch::Contains("flagtest_beta"));
  for (const std::string p : {"flagtest_alpha", "flagtest_gamma"}) {
    CHECK(examples(data, p, "train", 3) == 7);
    CHECK(examples(data, p, "dev", 1) == 7);
  }
  CHECK(examples(data, "flagtest_beta", "train", 3) == -1);

  // A comma list, in name order whatever the order given; without
  // --max_cases, everything.
  const std::string all = dir / "all";
  r = run_command(datagen + "--problem=flagtest_gamma,flagtest_beta --data_dir=" + all);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("generating flagtest_beta into") <
        r.output.find("generating flagtest_gamma into"));
  CHECK(examples(all, "flagtest_beta", "train", 3) == 30);
  CHECK(examples(all, "flagtest_gamma", "dev", 1) == 12);
  CHECK(examples(all, "flagtest_alpha", "train", 3) == -1);

  // --only_list shows the selection and generates nothing.
  r = run_command(datagen + "--problem='flagtest_*' --exclude_problems=alpha --only_list "
                     "--log_level=warning");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output == "flagtest_beta\nflagtest_gamma\n");
  r = run_command("./t2t-datagen --problem='translate_enzh*' --exclude_problems=wmt --only_list");
  CHECK(r.output == "translate_enzh_sample\ntranslate_enzh_tatoeba\n");
}

TEST_CASE("t2t-datagen refuses selections that select nothing, and --num_shards",
          "[datagen][e2e][datagen_flags]") {
  TempDir dir("datagen_flags_bad");
  const std::string datagen = declare_problems(dir);
  const std::string data = " --data_dir=" + (dir / "data");

  auto r = run_command(datagen + "--problem='flagtset_*'" + data);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--problem=flagtset_* matches no registered problem; "
                                       "near names: flagtest_alpha"));

  r = run_command(datagen + "--problem=flagtest_alpha,flagtest_delta" + data);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("unknown problem 'flagtest_delta'"));

  r = run_command(datagen + "--problem='flagtest_*' --exclude_problems=flagtest" + data);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("leaves none of --problem=flagtest_*"));

  r = run_command(datagen + "--problem=flagtest_alpha --exclude_problems=zeta" + data);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("'zeta' is in no registered problem's name"));

  // The shard counts are the problem's own, named in the refusal.
  r = run_command(datagen + "--problem=flagtest_alpha,translate_enzh_sample --num_shards=5" +
                  data);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--num_shards=5 is refused"));
  CHECK_THAT(r.output, Catch::Contains("flagtest_alpha (train 3, dev 1)"));
  CHECK_THAT(r.output, Catch::Contains("translate_enzh_sample (train 2, dev 1)"));
  CHECK_FALSE(fs::exists(dir / "data"));

  r = run_command(datagen + "--problem=flagtest_alpha --max_cases=-1" + data);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--max_cases=-1"));
}
