// Tensor2Tensor output directories used by t2t's tools as T2T's own command
// lines name them: the TensorFlow checkpoint read natively, the run's
// hparams.json over --hparams_set. The fixtures are real T2T's: 20 steps of
// a small pre-norm transformer with one vocabulary per language
// (tests/fixtures/t2t_run, tests/t2t_reference/make_fixtures.sh), and 4 steps
// of a post-norm transformer_base_v1 with one vocabulary and one embedding
// shared by both languages (tests/fixtures/t2t_run_shared,
// make_shared_fixture.sh), and 20 steps of transformer_relative_tiny
// (tests/fixtures/t2t_run_relative, make_fixtures.sh on the first's data),
// and 20 steps of T2T's Evolved Transformer, evolved_transformer_tiny
// (tests/fixtures/t2t_run_evolved, the same way), each with T2T's own
// decodes of 12 sentences (the last also by beam search).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "t2t/core/hparams.h"
#include "t2t/core/string_util.h"
#include "t2t/io/t2t_hparams_json.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/io/tf_checkpoint_writer.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/tf_adam_state.h"
#include "tests/support/t2t_fixture.h"
#include "tests/support/test_util.h"

using Catch::Contains;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::t2t_fixture_problem;
using t2t::test::TempDir;

namespace {

const std::string kFixture = t2t::test::t2t_fixture_dir();

// t2t-trainer, given T2T's command line (`problem`) and a copy of the
// fixture's output directory, goes on from T2T's step 20 with its weights
// and Adam state: two steps whose first loss is below `loss_below` (a fresh
// model's is about ln(370) = 5.9), and a checkpoint of its own.
void trains_on_from_t2t_step(const std::string& problem, const std::string& fixture,
                             const TempDir& dir, double loss_below) {
  const std::string run = dir / "run";
  std::filesystem::copy(fixture + "/train", run);
  const auto r = run_command("./t2t-trainer " + problem +
                             " --threads=1 --log_step_count_steps=1 --schedule=train"
                             " --train_steps=22 --output_dir=" + run);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("resuming T2T's run from " + run + "/model.ckpt-20 at step 20"));
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex("step 21: loss ([0-9.]+)")));
  CHECK(std::stod(m[1]) < loss_below);
  CHECK(std::filesystem::exists(run + "/model.ckpt-22.pt"));
}

}  // namespace

TEST_CASE("t2t-decoder decodes T2T's output directory with T2T's command line",
          "[t2t_import][decoder][e2e]") {
  TempDir dir("t2t_import");
  const std::string flags = t2t_fixture_problem(dir) +
                            " --hparams_set=transformer_tiny --decode_from_file=" + kFixture +
                            "/decodes/in.en --decode_hparams=beam_size=1";
  auto r = run_command("./t2t-decoder " + flags + " --output_dir=" + kFixture +
                       "/train --decode_to_file=" + (dir / "out.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // The sizes come from T2T's hparams.json, not from transformer_tiny.
  CHECK_THAT(r.output, Contains("hidden_size: 128 -> 16") && Contains("num_heads: 4 -> 2"));
  CHECK_THAT(r.output, Contains("read T2T's TensorFlow checkpoint") && Contains("(step 20)"));
  const auto ours = read_lines(dir / "out.zh");
  const auto t2t = read_lines(kFixture + "/decodes/greedy.zh");
  REQUIRE(ours.size() == 12);
  REQUIRE(t2t.size() == 12);
  // This barely trained model never emits EOS, so each output runs to its
  // decode length, which T2T takes from the longest input of its batch and
  // t2t from each input: the token-by-token choices must agree up to the
  // shorter of the two.
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("line " << i << ": ours " << ours[i] << "\nT2T's " << t2t[i]);
    REQUIRE_FALSE(ours[i].empty());
    const size_t n = std::min(ours[i].size(), t2t[i].size());
    CHECK(ours[i].compare(0, n, t2t[i], 0, n) == 0);
  }

  // With T2T's decode length (the batch's longest input + extra_length; the
  // 12 sentences are one batch): T2T's outputs exactly.
  r = run_command("./t2t-decoder " + flags + ",batch_decode_length=true --output_dir=" + kFixture +
                  "/train --decode_to_file=" + (dir / "t2t_rule.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_lines(dir / "t2t_rule.zh") == t2t);

  // The checkpoint named by its prefix, as T2T's --checkpoint_path takes it.
  r = run_command("./t2t-decoder " + flags + " --output_dir=" + kFixture +
                  "/train --checkpoint_path=" + kFixture + "/train/model.ckpt-20 --decode_to_file=" +
                  (dir / "again.zh"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(read_lines(dir / "again.zh") == ours);
}

TEST_CASE("t2t-translate-all translates with every checkpoint of a T2T output directory",
          "[t2t_import][translate_all][e2e]") {
  TempDir dir("t2t_import_translate_all");
  const std::string problem = t2t_fixture_problem(dir) + " --hparams_set=transformer_tiny";
  auto r = run_command("./t2t-translate-all " + problem + " --model_dir=" + kFixture +
                       "/train --source=" + kFixture + "/decodes/in.en --translations_dir=" +
                       (dir / "translations") + " --beam_size=1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("translated 1 checkpoint(s)"));
  r = run_command("./t2t-decoder " + problem + " --output_dir=" + kFixture +
                  "/train --decode_hparams=beam_size=1 --decode_from_file=" + kFixture +
                  "/decodes/in.en --decode_to_file=" + (dir / "decoder.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto translated = read_lines(dir / "translations/translate_enzh_fixture-20");
  CHECK(translated.size() == 12);
  CHECK(translated == read_lines(dir / "decoder.zh"));
}

TEST_CASE("a T2T checkpoint that does not fit the model is refused, naming the variables",
          "[t2t_import][decoder][e2e]") {
  TempDir dir("t2t_import_bad");
  const std::string flags = t2t_fixture_problem(dir) + " --hparams_set=transformer_tiny --output_dir=" +
                            kFixture + "/train --decode_from_file=" + kFixture + "/decodes/in.en";
  // --hparams wins over hparams.json: one layer fewer than T2T trained.
  auto r = run_command("./t2t-decoder " + flags + " --hparams=num_hidden_layers=1");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("holds variables this transformer has no use for") &&
                           Contains("layer_1"));
  // Another width: T2T names its embeddings by it, so they are missing.
  r = run_command("./t2t-decoder " + flags + " --hparams=hidden_size=32");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("lacks variables this transformer needs") &&
                           Contains("hidden_size 32") && Contains("model.ckpt-20"));
  // Another feed-forward width: the shapes at fault are named.
  r = run_command("./t2t-decoder " + flags + " --hparams=filter_size=64");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("needs [") && Contains("conv1/kernel"));
}

TEST_CASE("T2T's hparams.json applies what t2t has and reports the rest", "[t2t_import]") {
  TempDir dir("t2t_hparams_json");
  t2t::test::write_lines(dir / "hparams.json",
                         {"{\"hidden_size\": 16, \"num_heads\": \"two\", \"label_smoothing\": null,",
                          " \"layer_preprocess_sequence\": \"n\", \"bottom\": {},",
                          " \"not_a_t2t_hparam\": [1, 2]}"});
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  const t2t::HParams before = hp;
  const auto r = t2t::apply_t2t_hparams_json(hp, dir / "hparams.json");
  CHECK(hp.get_int("hidden_size") == 16);
  CHECK(hp.get_int("num_heads") == before.get_int("num_heads"));  // "two" kept out
  CHECK(hp.get_float("label_smoothing") == before.get_float("label_smoothing"));
  CHECK(r.changed == std::vector<std::string>{"hidden_size: 128 -> 16"});
  CHECK(r.unknown == std::vector<std::string>{"bottom", "not_a_t2t_hparam"});
  REQUIRE(r.unusable.size() == 2);
  CHECK_THAT(r.unusable[0], Contains("num_heads") && Contains("two"));
  CHECK_THAT(r.unusable[1], Contains("label_smoothing: null"));

  t2t::test::write_lines(dir / "broken.json", {"[1, 2"});
  CHECK_THROWS_WITH(t2t::apply_t2t_hparams_json(hp, dir / "broken.json"),
                    Contains("broken.json") && Contains("hparams.json"));
}

TEST_CASE("t2t-trainer goes on from T2T's output directory at T2T's step, with its Adam state",
          "[t2t_import][trainer][e2e]") {
  TempDir dir("t2t_resume");
  const std::string run = dir / "run";
  std::filesystem::copy(kFixture + "/train", run);
  const std::string flags = t2t_fixture_problem(dir) +
                            " --hparams_set=transformer_tiny --threads=1 --log_step_count_steps=1"
                            " --schedule=train --output_dir=" + run;
  auto r = run_command("./t2t-trainer " + flags + " --train_steps=23");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // T2T's sizes from its hparams.json; T2T's step, weights and moments.
  CHECK_THAT(r.output, Contains("hidden_size: 128 -> 16"));
  CHECK_THAT(r.output, Contains("resuming T2T's run from " + run + "/model.ckpt-20 at step 20"));
  CHECK_THAT(r.output, !Contains("step 20: loss") && Contains("step 23: loss"));
  // T2T's weights, not fresh ones: a fresh model's loss is about
  // ln(370) = 5.9 on these 370 target subwords; T2T's weights give about 3.4.
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex("step 21: loss ([0-9.]+)")));
  CHECK(std::stod(m[1]) < 4.5);
  // The schedule goes on from step 20 (T2T's warm-up of 10 steps is over).
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  t2t::apply_t2t_hparams_json(hp, t2t::t2t_hparams_json_path(run));
  char lr[32];
  std::snprintf(lr, sizeof lr, "%.3g", t2t::learning_rate(hp, 21));
  CHECK_THAT(r.output, Contains(std::string("step 21: loss ")) && Contains(std::string(", lr ") + lr));
  CHECK(std::filesystem::exists(run + "/model.ckpt-23.pt"));
  // The next resume takes t2t's own checkpoint, with the same hparams.
  r = run_command("./t2t-trainer " + flags + " --train_steps=25");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("resuming from " + run + "/model.ckpt-23.pt at step 23"));
  CHECK(std::filesystem::exists(run + "/model.ckpt-25.pt"));

  // Sizes that do not fit T2T's variables: refused, naming them.
  const std::string other = dir / "other";
  std::filesystem::copy(kFixture + "/train", other);
  r = run_command("./t2t-trainer " + t2t_fixture_problem(dir) +
                  " --hparams_set=transformer_tiny --threads=1 --hparams=filter_size=64"
                  " --train_steps=25 --output_dir=" + other);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("needs [") && Contains("conv1/kernel"));
}

TEST_CASE("t2t-trainer --warm_start_from takes a T2T checkpoint's weights", "[t2t_import][trainer][e2e]") {
  TempDir dir("t2t_warm_start");
  // The sizes T2T trained with (tests/t2t_reference/make_fixtures.sh).
  const std::string flags = t2t_fixture_problem(dir) +
                            " --hparams_set=transformer_tiny --threads=1 --train_steps=3"
                            " --hparams=hidden_size=16,filter_size=32,num_heads=2,batch_size=256"
                            " --schedule=train";
  for (const std::string from : {kFixture + "/train", kFixture + "/train/model.ckpt-20"}) {
    INFO("--warm_start_from=" << from);
    const std::string run = dir / ("run" + std::to_string(from.size()));
    auto r = run_command("./t2t-trainer " + flags + " --warm_start_from=" + from +
                         " --output_dir=" + run);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Contains("warm start: the weights of " + kFixture +
                                  "/train/model.ckpt-20 (trained 20 steps)"));
    CHECK(std::filesystem::exists(run + "/model.ckpt-3.pt"));
  }
}

TEST_CASE("t2t-import converts T2T's checkpoint into t2t's, weights and Adam state",
          "[t2t_import][e2e]") {
  TempDir dir("t2t_import_tool");
  const std::string flags = t2t_fixture_problem(dir) + " --hparams_set=transformer_tiny";
  const std::string run = dir / "run";
  std::filesystem::copy(kFixture + "/train", run);
  auto r = run_command("./t2t-import " + flags + " --output_dir=" + run + " --import_dir=" +
                       (dir / "imported"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("converted " + run + "/model.ckpt-20 (step 20)") &&
                           Contains("with Adam's moments"));
  CHECK(std::filesystem::exists(dir / "imported/model.ckpt-20.pt"));
  CHECK(std::filesystem::exists(dir / "imported/hparams.yaml"));

  // The converted checkpoint decodes as T2T's own does (T2T's decode length).
  r = run_command("./t2t-decoder " + flags + " --output_dir=" + (dir / "imported") +
                  " --decode_from_file=" + kFixture +
                  "/decodes/in.en --decode_hparams=beam_size=1,batch_decode_length=true"
                  " --decode_to_file=" + (dir / "out.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_lines(dir / "out.zh") == read_lines(kFixture + "/decodes/greedy.zh"));

  // Training goes on from it at T2T's step, as from T2T's directory.
  r = run_command("./t2t-trainer " + flags + " --threads=1 --schedule=train --train_steps=22"
                  " --output_dir=" + (dir / "imported"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("resuming from " + (dir / "imported") + "/model.ckpt-20.pt at step 20"));

  // Not a T2T checkpoint, or a flag that does not apply: clear refusals.
  r = run_command("./t2t-import " + flags + " --output_dir=" + run + " --checkpoint_path=" + run +
                  "/model.ckpt-99");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("model.ckpt-99.index does not exist"));
  r = run_command("./t2t-import " + flags + " --output_dir=" + (dir / "empty"));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("holds no T2T checkpoint"));
}

TEST_CASE("a post-norm T2T model with one shared vocabulary and embedding decodes as T2T's",
          "[t2t_import][decoder][e2e]") {
  TempDir dir("t2t_import_shared");
  const std::string fixture = t2t::test::t2t_shared_fixture_dir();
  const std::string flags = t2t::test::t2t_shared_fixture_problem(dir) +
                            " --hparams_set=transformer_base_v1 --output_dir=" + fixture +
                            "/train --decode_from_file=" + fixture + "/decodes/in.en";
  for (const std::string beam : {"1", "4"}) {
    INFO("beam " << beam);
    const std::string out = dir / ("beam" + beam + ".zh");
    auto r = run_command("./t2t-decoder " + flags + " --decode_hparams=beam_size=" + beam +
                         ",alpha=0.6,batch_decode_length=true --decode_to_file=" + out);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    // The sizes from T2T's hparams.json; the post-norm layout from the set.
    CHECK_THAT(r.output, Contains("hidden_size: 512 -> 16") && Contains("(step 4)"));
    const auto ours = read_lines(out);
    REQUIRE(ours.size() == 12);
    CHECK(ours == read_lines(fixture + "/decodes/beam" + beam + ".zh"));
  }
}

TEST_CASE("T2T's Adam state reads from TensorFlow 1's slot names as from LazyAdam's",
          "[t2t_import][trainer][e2e]") {
  // The fixture's checkpoint rewritten as T2T on TensorFlow 1 names Adam's
  // state: training/<variable>/Adam and /Adam_1, and the step kept only as
  // training/beta1_power = beta1^step (beta2's likewise).
  TempDir dir("t2t_tf1_adam");
  const std::string run = dir / "run";
  std::filesystem::create_directories(run);
  for (const char* f : {"checkpoint", "hparams.json"})
    std::filesystem::copy_file(kFixture + "/train/" + f, run + "/" + f);
  const t2t::TFCheckpointReader lazy(kFixture + "/train/model.ckpt-20");
  const int64_t iter = lazy.read_scalar_int("training/LazyAdam/iter");
  REQUIRE(iter == 20);
  {
    t2t::TFCheckpointWriter w(run + "/model.ckpt-20");
    const std::string slots = "training/LazyAdam/";
    for (const std::string& name : lazy.names()) {
      const auto& e = lazy.entry(name);
      std::string out = name;
      if (name.rfind(slots, 0) == 0) {
        const std::string var = name.substr(slots.size());
        if (t2t::ends_with(var, "/m")) out = "training/" + var.substr(0, var.size() - 2) + "/Adam";
        else if (t2t::ends_with(var, "/v")) out = "training/" + var.substr(0, var.size() - 2) + "/Adam_1";
        else continue;  // iter, beta_1, beta_2, decay: TensorFlow 1 has none of them
      }
      w.add(out, static_cast<t2t::TFDType>(e.dtype), e.shape, lazy.read_bytes(name));
    }
    w.add_floats("training/beta1_power", {}, {static_cast<float>(std::pow(0.9, iter))});
    w.add_floats("training/beta2_power", {}, {static_cast<float>(std::pow(0.997, iter))});
    w.finish();
  }
  auto r = run_command("./t2t-trainer " + t2t_fixture_problem(dir) +
                       " --hparams_set=transformer_tiny --threads=1 --schedule=train"
                       " --log_step_count_steps=1 --train_steps=21 --output_dir=" + run);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("resuming T2T's run from " + run + "/model.ckpt-20 at step 20"));
  CHECK_THAT(r.output, Contains("step 21: loss"));
  // Both layouts give one step count.
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  t2t::apply_t2t_hparams_json(hp, t2t::t2t_hparams_json_path(run));
  CHECK(t2t::tf_adam_steps(t2t::TFCheckpointReader(run + "/model.ckpt-20"), hp) == 20);
  CHECK(t2t::tf_adam_steps(lazy, hp) == 20);
}

TEST_CASE("a T2T model with relative position attention decodes and trains on in t2t",
          "[t2t_import][decoder][trainer][e2e]") {
  TempDir dir("t2t_import_relative");
  const std::string fixture = t2t::test::source_dir() + "/tests/fixtures/t2t_run_relative";
  // transformer_tiny named on purpose: T2T's hparams.json brings the
  // relative attention (self_attention_type, max_relative_position 6) and
  // its "pos": null, no timing signal.
  const std::string problem = t2t_fixture_problem(dir) + " --hparams_set=transformer_tiny";
  auto r = run_command("./t2t-decoder " + problem + " --output_dir=" + fixture +
                       "/train --decode_from_file=" + fixture +
                       "/decodes/in.en --decode_hparams=beam_size=1,batch_decode_length=true"
                       " --decode_to_file=" + (dir / "greedy.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("self_attention_type: dot_product -> dot_product_relative") &&
                           Contains("max_relative_position: 0 -> 6") &&
                           Contains("pos: timing -> none"));
  const auto t2t = read_lines(fixture + "/decodes/greedy.zh");
  REQUIRE(t2t.size() == 12);
  CHECK(read_lines(dir / "greedy.zh") == t2t);

  // Training goes on from T2T's step with its weights and Adam state.
  trains_on_from_t2t_step(problem, fixture, dir, 4.5);
}

TEST_CASE("a T2T Evolved Transformer decodes as T2T's, greedy and beam, and trains on in t2t",
          "[t2t_import][decoder][trainer][e2e]") {
  TempDir dir("t2t_import_evolved");
  const std::string fixture = t2t::test::source_dir() + "/tests/fixtures/t2t_run_evolved";
  const std::string problem = t2t_fixture_problem(dir, "evolved_transformer") +
                              " --hparams_set=evolved_transformer_tiny";
  const auto t2t_greedy = read_lines(fixture + "/decodes/greedy.zh");
  const auto t2t_beam = read_lines(fixture + "/decodes/beam.zh");
  REQUIRE(t2t_greedy.size() == 12);
  REQUIRE(t2t_beam.size() == 12);
  for (const auto& [search, t2t] :
       {std::pair<std::string, std::vector<std::string>>{"beam_size=1", t2t_greedy},
        {"beam_size=4,alpha=0.6", t2t_beam}}) {
    INFO(search);
    const std::string out = dir / "out.zh";
    auto r = run_command("./t2t-decoder " + problem + " --output_dir=" + fixture +
                         "/train --decode_from_file=" + fixture + "/decodes/in.en --decode_hparams=" +
                         search + ",batch_decode_length=true --decode_to_file=" + out);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Contains("hidden_size: 128 -> 16"));
    CHECK(read_lines(out) == t2t);
  }

  // Training goes on from T2T's step with its weights and Adam state; the
  // cosine schedule reads --train_steps, as T2T's does.
  trains_on_from_t2t_step(problem, fixture, dir, 5.5);
}
