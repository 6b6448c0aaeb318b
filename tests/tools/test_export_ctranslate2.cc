// End-to-end test of tools/export_ctranslate2.py: a briefly trained pre-norm
// transformer on the bundled sample, exported to CTranslate2, must translate
// 50 dev sentences greedily into exactly the ids t2t's own greedy search
// gives (with relative position attention too); an int8 export must translate them too; an existing destination and
// a post-norm run must be refused, naming what is wrong.
//
// Both sides are compared as ids, so no tokenizer stands between them:
// t2t-bench-decode encodes the sentences as t2t-decoder does and writes their
// source ids (--export_dir) and its greedy translations' ids (--write_ids),
// both through t2t::beam_search; tests/python/ctranslate2_translate.py feeds
// the same source ids to CTranslate2 and writes its ids the same way.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "t2t/core/file_util.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

const std::string kExporter = t2t::test::source_dir() + "/tools/export_ctranslate2.py";
const std::string kTranslate = t2t::test::source_dir() + "/tests/python/ctranslate2_translate.py";
constexpr int kSentences = 50;
constexpr int kExtraLength = 50;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The only checkpoint of a run directory.
std::string checkpoint_in(const std::string& run) {
  for (const auto& e : fs::directory_iterator(run)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("model.ckpt-", 0) == 0 && e.path().extension() == ".pt")
      return e.path().string();
  }
  return "";
}

}  // namespace

TEST_CASE("A run exported to CTranslate2 translates greedily as t2t does",
          "[export][e2e][python]") {
  const std::string python = T2T_TEST_PYTHON;
  if (python.empty() ||
      run_command(quoted(python) + " -c 'import ctranslate2, torch, yaml'").exit_code != 0)
    T2T_SKIP("the tests' Python (" << (python.empty() ? "none configured" : python)
                                   << ") lacks ctranslate2; pip install ctranslate2 into it");
  // Not a dependency of t2t_tests; tools/setup.sh builds every target.
  if (!fs::exists(t2t::test::bin_dir() + "/t2t-bench-decode"))
    T2T_SKIP("t2t-bench-decode is not built (cmake --build build --target t2t-bench-decode)");

  // Both layouts of the target side: a softmax of its own (T2T's rule for
  // vocabularies of different sizes), and tied to the target embedding; and
  // relative position attention (clipped at 4, so that most pairs of
  // positions are clipped) in place of the timing signal.
  const int variant = GENERATE(0, 1, 2);
  const bool tied_target = variant == 1, relative = variant == 2;
  INFO("shared_target_embedding_and_softmax_weights=" << tied_target << ", relative " << relative);
  TempDir dir("export_ct2");
  const std::string data = dir / "data", run = dir / "run";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Trained far enough (a short warmup) to translate into a few ids per
  // sentence, so that agreeing means more than agreeing on EOS; an
  // untrained model's nearly uniform logits would also invite argmax ties.
  r = run_command(std::string("./t2t-trainer --problem=translate_enzh_sample --model=transformer ") +
                  "--hparams_set=" + (relative ? "transformer_relative_tiny" : "transformer_tiny") +
                  " --hparams='batch_size=1024,hidden_size=64,"
                  "filter_size=128,num_heads=4,learning_rate_warmup_steps=100" +
                  (tied_target ? ",shared_target_embedding_and_softmax_weights=true" : "") +
                  (relative ? ",max_relative_position=4" : "") +
                  "' --data_dir=" +
                  data + " --output_dir=" + run +
                  " --train_steps=300 --local_eval_frequency=300 --eval_steps=1 --random_seed=1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  // t2t's side: the sources' ids, then their greedy translations.
  const std::string bench = "./t2t-bench-decode --output_dir=" + run + " --data_dir=" + data +
                            " --source=" + t2t::test::source_dir() + "/data/sample/dev.en --max_sentences=" +
                            std::to_string(kSentences) + " --beam_size=1 --batch_size=16 " +
                            "--extra_length=" + std::to_string(kExtraLength);
  r = run_command(bench + " --export_dir=" + (dir / "bench"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  r = run_command(bench + " --warmup_batches=0 --write_ids=" + (dir / "t2t.ids"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto t2t_ids = read_lines(dir / "t2t.ids");
  REQUIRE(t2t_ids.size() == kSentences);

  const std::string exporter = quoted(python) + " " + quoted(kExporter) + " --output_dir=" + run;
  auto translate = [&](const std::string& model, const std::string& out) {
    return run_command(quoted(python) + " " + quoted(kTranslate) + " " + model + " " +
                       (dir / "bench/sources.json") + " " + std::to_string(kExtraLength) + " " +
                       out);
  };

  // float32: the same ids for every sentence.
  const std::string fp32 = dir / "ct2";
  r = run_command(exporter + " --ctranslate2_dir=" + fp32);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* file : {"model.bin", "config.json", "source_vocabulary.json",
                           "target_vocabulary.json"})
    CHECK(fs::exists(fs::path(fp32) / file));
  r = translate(fp32, dir / "ct2.ids");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto ct2_ids = read_lines(dir / "ct2.ids");
  REQUIRE(ct2_ids.size() == kSentences);
  int same = 0;
  size_t t2t_tokens = 0;
  for (size_t i = 0; i < t2t_ids.size(); ++i) {
    INFO("sentence " << i);
    CHECK(ct2_ids[i] == t2t_ids[i]);
    same += ct2_ids[i] == t2t_ids[i];
    t2t_tokens += std::count(t2t_ids[i].begin(), t2t_ids[i].end(), ' ') + !t2t_ids[i].empty();
  }
  CHECK(same == kSentences);
  // Real translations, not 50 empty lines that would agree trivially.
  CHECK(t2t_tokens > 2 * kSentences);

  // int8: CTranslate2's quantization on conversion; a smaller model that
  // translates every sentence (its quality is not this test's business).
  const std::string int8 = dir / "ct2_int8";
  r = run_command(exporter + " --ctranslate2_dir=" + int8 + " --quantization=int8");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(fs::path(int8) / "model.bin") < fs::file_size(fs::path(fp32) / "model.bin"));
  r = translate(int8, dir / "int8.ids");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_lines(dir / "int8.ids").size() == kSentences);

  // An existing destination is refused, named, and left alone; --force replaces it.
  const auto written = fs::last_write_time(fs::path(fp32) / "model.bin");
  r = run_command(exporter + " --ctranslate2_dir=" + fp32);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains(fp32 + " already exists") && Catch::Contains("--force"));
  CHECK(fs::last_write_time(fs::path(fp32) / "model.bin") == written);
  r = run_command(exporter + " --ctranslate2_dir=" + fp32 + " --force");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(fp32 + "/model.bin"));
  // No temporary directory is left beside it.
  int hidden = 0;
  for (const auto& e : fs::directory_iterator(dir.path))
    hidden += e.path().filename().string()[0] == '.';
  CHECK(hidden == 0);

  // A post-norm run (transformer_base_v1's sequences) cannot be mapped: the
  // error names the hparam.
  const std::string post_norm = dir / "post_norm";
  fs::create_directories(post_norm);
  const std::string checkpoint = checkpoint_in(run);
  REQUIRE(!checkpoint.empty());
  fs::copy_file(checkpoint, fs::path(post_norm) / fs::path(checkpoint).filename());
  std::string hparams = t2t::read_file(run + "/hparams.yaml");
  const std::vector<std::pair<std::string, std::string>> post_norm_sequences = {
      {"layer_preprocess_sequence: \"n\"", "layer_preprocess_sequence: \"none\""},
      {"layer_postprocess_sequence: \"da\"", "layer_postprocess_sequence: \"dan\""}};
  for (const auto& [from, to] : post_norm_sequences) {
    const auto at = hparams.find(from);
    REQUIRE(at != std::string::npos);
    hparams.replace(at, from.size(), to);
  }
  t2t::write_file_atomic(post_norm + "/hparams.yaml", hparams);
  r = run_command(quoted(python) + " " + quoted(kExporter) + " --output_dir=" + post_norm +
                  " --ctranslate2_dir=" + (dir / "post_norm_ct2"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("layer_preprocess_sequence='none'"));
  CHECK(!fs::exists(dir / "post_norm_ct2"));
}
