// T2T's t2t-decoder --score_file: the teacher-forced op against the model's
// own forward() sentence by sentence, and the binary on a trained sample
// model against the same sums computed here through the model API, with
// the errors for malformed lines.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/transformer.h"
#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"
#include "t2t/data/problem.h"
#include "t2t/translate/translator.h"
#include "t2t/search/score.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/sample_run.h"
#include "tests/support/random_batch.h"
#include "tests/support/test_util.h"

using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

using t2t::test::padded_ids;

namespace {

// log p(target | input) of one pair through forward() alone, in float64.
double reference_score(t2t::T2TModel& model, const std::vector<int64_t>& input,
                       const std::vector<int64_t>& target) {
  torch::NoGradGuard no_grad;
  const auto in = torch::tensor(input, torch::kLong).unsqueeze(0);
  const auto tg = torch::tensor(target, torch::kLong).unsqueeze(0);
  const auto lp = torch::log_softmax(model.forward(in, tg)[0].to(torch::kDouble), -1);
  double sum = 0;
  for (size_t t = 0; t < target.size(); ++t) sum += lp[t][target[t]].item<double>();
  return sum;
}

// One trained sample run shared by the end-to-end cases.
const t2t::test::SampleRun& trained() {
  static t2t::test::SampleRun run("score_file_e2e");
  INFO(run.log);
  REQUIRE(run.ok);
  return run;
}

}  // namespace

TEST_CASE("target_log_probs sums each padded target's log-probabilities", "[score_file]") {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", 32);
  hp.set("filter_size", 64);
  hp.set("num_heads", 2);
  torch::manual_seed(11);
  t2t::Transformer model(hp, t2t::FeatureInfo{30, 30, false});
  model.eval();
  const std::vector<std::vector<int64_t>> inputs = {
      {4, 5, 6, t2t::kEosId}, {7, t2t::kEosId}, {8, 9, 10, 11, 12, t2t::kEosId}};
  const std::vector<std::vector<int64_t>> targets = {
      {13, 14, t2t::kEosId}, {15, 16, 17, 18, t2t::kEosId}, {t2t::kEosId}};
  const auto got = t2t::target_log_probs(model, padded_ids(inputs), padded_ids(targets));
  REQUIRE(got.size(0) == 3);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double want = reference_score(model, inputs[i], targets[i]);
    INFO("pair " << i);
    CHECK(want < 0);
    CHECK(got[static_cast<int64_t>(i)].item<double>() == Approx(want).margin(1e-4));
  }
}

TEST_CASE("t2t-decoder --score_file writes log p(target | input) per line, in order",
          "[score_file][e2e]") {
  const auto& run = trained();
  TempDir dir("score_file_out");
  const auto en = read_lines(t2t::test::source_dir() + "/data/sample/dev.en");
  const auto zh = read_lines(t2t::test::source_dir() + "/data/sample/dev.zh");
  REQUIRE(en.size() >= 40);
  std::string pairs;
  // Forty pairs, so that batch_size=16 makes three batches; the third line
  // ends in CRLF and its target in spaces, both stripped.
  for (size_t i = 0; i < 40; ++i)
    pairs += en[i] + "\t" + zh[i] + (i == 2 ? "  \r\n" : "\n");
  const std::string path = dir / "pairs.tsv";
  t2t::write_file_atomic(path, pairs);

  auto r = run_command(run.decoder("--decode_hparams=batch_size=16 --score_file=" + path +
                                   " --decode_to_file=" + (dir / "scores.txt")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("scored 40 pairs"));
  const auto lines = read_lines(dir / "scores.txt");
  REQUIRE(lines.size() == 40);

  // The same sums through the model API, one pair at a time.
  const auto hp = t2t::HParams::from_yaml_file(run.run + "/hparams.yaml");
  t2t::TranslatorOptions options;
  options.problem = "translate_enzh_sample";
  options.hparams = hp;
  options.data_dir = run.data;
  options.output_dir = run.run;
  const t2t::Translator translator(options);
  const t2t::LoadedModel& loaded = *translator.current();
  for (size_t i = 0; i < lines.size(); ++i) {
    auto input = loaded.encoders.inputs->encode(en[i]);
    input.push_back(t2t::kEosId);
    auto target = loaded.encoders.targets->encode(zh[i]);
    target.push_back(t2t::kEosId);
    const double got = std::stod(lines[i]);
    INFO("line " << i + 1 << ": " << lines[i]);
    CHECK(std::isfinite(got));
    CHECK(got < 0);
    CHECK(got == Approx(reference_score(*loaded.model, input, target)).margin(2e-4));
  }

  // Without --decode_to_file the scores alone go to standard output.
  r = run_command("{ " + run.decoder("--decode_hparams=batch_size=16 --score_file=" + path) +
                  " 2>/dev/null; }");
  REQUIRE(r.exit_code == 0);
  std::string expected;
  for (const auto& l : lines) expected += l + "\n";
  CHECK(r.output == expected);
}

TEST_CASE("t2t-decoder --score_file names the file and line of a malformed pair",
          "[score_file][e2e]") {
  const auto& run = trained();
  TempDir dir("score_file_bad_out");
  const std::string path = dir / "bad.tsv";
  auto expect_error = [&](const std::string& content, const std::string& message) {
    t2t::write_file_atomic(path, content);
    const auto r = run_command(run.decoder("--score_file=" + path + " --decode_to_file=" +
                                           (dir / "out.txt")));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("--score_file=" + path + " " + message));
  };
  expect_error("I am here.\t我在这里。\nno tab at all\n", "line 2 has no TAB");
  expect_error("a\tb\n\n", "line 2 has no TAB");
  expect_error("a\tb\tc\n", "line 1 has more than one TAB");
  expect_error("a\tb\n  \t我\n", "line 2 has an empty input");
  expect_error("a\t \n", "line 1 has an empty target");
  CHECK_FALSE(std::filesystem::exists(dir / "out.txt"));

  // A search setting or a second source next to --score_file is refused.
  auto r = run_command(run.decoder("--score_file=" + path + " --decode_hparams=beam_size=2"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("beam_size does not apply to --score_file"));
  r = run_command(run.decoder("--score_file=" + path + " --decode_from_file=" + path));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--score_file scores given translations"));
  r = run_command(run.decoder("--score_file=" + (dir / "missing.tsv")));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("missing.tsv"));
}
