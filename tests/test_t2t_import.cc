// A Tensor2Tensor output directory decoded by t2t-decoder as T2T's own
// command line names it: the TensorFlow checkpoint read natively, the run's
// hparams.json over --hparams_set. The fixture is real T2T's
// (tests/t2t_reference/make_fixtures.sh): 20 steps of a small transformer,
// with T2T's own greedy decodes of 12 sentences.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "t2t/core/hparams.h"
#include "t2t/io/t2t_hparams_json.h"
#include "tests/t2t_fixture.h"
#include "tests/test_util.h"

using Catch::Contains;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::t2t_fixture_problem;
using t2t::test::TempDir;

namespace {

const std::string kFixture = t2t::test::t2t_fixture_dir();

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
