#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"
#include "t2t/translate/decode_options.h"
#include "tests/support/test_util.h"

using t2t::HParams;

namespace {

HParams sample() {
  HParams hp;
  hp.add("batch_size", 4096);
  hp.add("learning_rate", 0.1);
  hp.add("shared", true);
  hp.add("schedule", "legacy");
  hp.add("sizes", std::vector<int64_t>{1, 2, 3});
  return hp;
}

std::string temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("t2t_test_hparams_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("typed values are read back with their types", "[hparams]") {
  HParams hp = sample();
  CHECK(hp.get_int("batch_size") == 4096);
  CHECK(hp.get_float("learning_rate") == Approx(0.1));
  CHECK(hp.get_bool("shared"));
  CHECK(hp.get_string("schedule") == "legacy");
  CHECK(hp.get_ints("sizes") == std::vector<int64_t>{1, 2, 3});
  CHECK(hp.keys() == std::vector<std::string>{"batch_size", "learning_rate", "shared", "schedule",
                                              "sizes"});
  REQUIRE_THROWS_WITH(hp.get_string("batch_size"), Catch::Contains("is int, read as string"));
  REQUIRE_THROWS_AS(hp.add("batch_size", 1), t2t::Error);
}

TEST_CASE("hparams overrides use T2T's syntax", "[hparams]") {
  HParams hp = sample();
  hp.parse("batch_size=2048, learning_rate=2,shared=false,schedule=noam,sizes=[4,5]");
  CHECK(hp.get_int("batch_size") == 2048);
  CHECK(hp.get_float("learning_rate") == 2.0);  // an int is fine for a float
  CHECK_FALSE(hp.get_bool("shared"));
  CHECK(hp.get_string("schedule") == "noam");
  CHECK(hp.get_ints("sizes") == std::vector<int64_t>{4, 5});
  hp.parse("sizes[1]=9,learning_rate=1e-3");
  CHECK(hp.get_ints("sizes") == std::vector<int64_t>{4, 9});
  CHECK(hp.get_float("learning_rate") == Approx(1e-3));
  hp.parse("");  // nothing to do
  CHECK(hp.get_int("batch_size") == 2048);
}

TEST_CASE("bad overrides name the key, the expected type and the valid keys", "[hparams]") {
  HParams hp = sample();
  REQUIRE_THROWS_WITH(hp.parse("batch_sise=10"),
                      Catch::Contains("unknown hyperparameter 'batch_sise' (from hparams)") &&
                          Catch::Contains("Did you mean batch_size") &&
                          Catch::Contains("Valid keys: batch_size, learning_rate"));
  REQUIRE_THROWS_WITH(hp.parse("batch_size=0.5"),
                      Catch::Contains("'batch_size' (from hparams) expects int, got '0.5'"));
  REQUIRE_THROWS_WITH(hp.parse("shared=maybe"), Catch::Contains("expects bool"));
  REQUIRE_THROWS_WITH(hp.parse("sizes=[1,x]"), Catch::Contains("expects list of ints"));
  REQUIRE_THROWS_WITH(hp.parse("sizes[7]=1"), Catch::Contains("out of range"));
  REQUIRE_THROWS_WITH(hp.parse("batch_size[0]=1"), Catch::Contains("cannot be indexed"));
  REQUIRE_THROWS_WITH(hp.parse("batch_size"), Catch::Contains("expected name=value"));
  // A failed override leaves earlier keys of the same string applied but
  // never changes the type of a value.
  CHECK(hp.get_int("batch_size") == 4096);
}

TEST_CASE("YAML files override with type checks", "[hparams]") {
  HParams hp = sample();
  hp.apply_yaml_string("batch_size: 1024\nlearning_rate: 0.5\nsizes: [7, 8]\nschedule: x\n",
                       "test.yaml");
  CHECK(hp.get_int("batch_size") == 1024);
  CHECK(hp.get_float("learning_rate") == 0.5);
  CHECK(hp.get_ints("sizes") == std::vector<int64_t>{7, 8});
  CHECK(hp.get_string("schedule") == "x");
  REQUIRE_THROWS_WITH(hp.apply_yaml_string("nope: 1\n", "test.yaml"),
                      Catch::Contains("unknown hyperparameter 'nope' (from test.yaml)"));
  REQUIRE_THROWS_WITH(hp.apply_yaml_string("batch_size: big\n", "test.yaml"),
                      Catch::Contains("expects int, got 'big'"));
  REQUIRE_THROWS_WITH(hp.apply_yaml_string("batch_size: [1]\n", "test.yaml"),
                      Catch::Contains("expects int, got a list"));
  REQUIRE_THROWS_WITH(hp.apply_yaml_string("- a\n- b\n", "test.yaml"),
                      Catch::Contains("must be a YAML mapping"));
  REQUIRE_THROWS_WITH(hp.apply_yaml_string("a: [\n", "test.yaml"),
                      Catch::Contains("cannot parse YAML in test.yaml"));
}

TEST_CASE("to_yaml and from_yaml round trip every type", "[hparams]") {
  HParams hp = sample();
  hp.add("whole_float", 2.0);
  hp.add("tiny_float", 1e-9);
  hp.add("numeric_string", "123");
  hp.add("bool_string", "true");
  hp.add("empty_list", std::vector<int64_t>{});
  HParams back = HParams::from_yaml_string(hp.to_yaml(), "round trip");
  CHECK(back.keys() == hp.keys());
  CHECK(back.diff(hp).empty());
  CHECK(std::holds_alternative<double>(back.value("whole_float")));
  CHECK(std::holds_alternative<std::string>(back.value("numeric_string")));
  CHECK(std::holds_alternative<std::string>(back.value("bool_string")));
  CHECK(back.get_float("tiny_float") == 1e-9);
}

TEST_CASE("diff names each changed, added and removed key", "[hparams]") {
  HParams a = sample();
  HParams b = sample();
  b.set("batch_size", 1);
  b.add("extra", 3);
  auto d = a.diff(b);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == "batch_size: 4096 -> 1");
  CHECK(d[1] == "extra: (absent) -> 3");
}

TEST_CASE("precedence is set < --hparams_file < --hparams", "[hparams]") {
  const std::string dir = temp_dir();
  const std::string yaml = dir + "/over.yaml";
  t2t::write_file_atomic(yaml, "batch_size: 1000\nnum_heads: 2\nlearning_rate_warmup_steps: 5\n");
  HParams hp = t2t::resolve_hparams("transformer_tiny", yaml, "batch_size=2000");
  CHECK(hp.get_int("batch_size") == 2000);                // flag beats file
  CHECK(hp.get_int("num_heads") == 2);                    // file beats set
  CHECK(hp.get_int("learning_rate_warmup_steps") == 5);
  CHECK(hp.get_int("hidden_size") == 128);                // set value kept
  REQUIRE_THROWS_WITH(t2t::resolve_hparams("transformer_tiny", dir + "/missing.yaml", ""),
                      Catch::Contains("missing.yaml"));
  REQUIRE_THROWS_WITH(t2t::resolve_hparams("transformer_tiniest", "", ""),
                      Catch::Contains("Did you mean ") && Catch::Contains("transformer_tiny"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("save_yaml writes atomically and leaves no temp file", "[hparams]") {
  const std::string dir = temp_dir() + "/out/nested";
  HParams hp = sample();
  hp.save_yaml(dir + "/hparams.yaml");
  CHECK(HParams::from_yaml_file(dir + "/hparams.yaml").diff(hp).empty());
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++files;
  CHECK(files == 1);
  std::filesystem::remove_all(temp_dir());
}

namespace {
HParams named(const std::string& n) { return t2t::hparams_registry().get(n)(); }
}  // namespace

TEST_CASE("transformer_base_v1 carries the published values", "[hparams][published]") {
  HParams hp = named("transformer_base_v1");
  CHECK(hp.get_int("hidden_size") == 512);
  CHECK(hp.get_int("filter_size") == 2048);
  CHECK(hp.get_int("num_heads") == 8);
  CHECK(hp.get_int("num_hidden_layers") == 6);
  CHECK(hp.get_int("batch_size") == 4096);
  CHECK(hp.get_int("max_length") == 256);
  CHECK(hp.get_string("layer_preprocess_sequence") == "none");
  CHECK(hp.get_string("layer_postprocess_sequence") == "dan");
  CHECK(hp.get_float("layer_prepostprocess_dropout") == 0.1);
  CHECK(hp.get_float("attention_dropout") == 0.0);
  CHECK(hp.get_float("relu_dropout") == 0.0);
  CHECK(hp.get_float("label_smoothing") == 0.1);
  CHECK(hp.get_float("optimizer_adam_beta1") == 0.9);
  CHECK(hp.get_float("optimizer_adam_beta2") == 0.98);
  CHECK(hp.get_float("optimizer_adam_epsilon") == 1e-9);
  CHECK(hp.get_string("learning_rate_schedule") == "legacy");
  CHECK(hp.get_string("learning_rate_decay_scheme") == "noam");
  CHECK(hp.get_float("learning_rate") == 0.1);
  CHECK(hp.get_int("learning_rate_warmup_steps") == 4000);
  CHECK(hp.get_float("norm_epsilon") == 1e-6);
  CHECK(hp.get_bool("shared_embedding_and_softmax_weights"));
}

TEST_CASE("transformer_base is v3: pre-norm, beta2 0.997, factored schedule",
          "[hparams][published]") {
  HParams hp = named("transformer_base");
  CHECK(hp.diff(named("transformer_base_v3")).empty());
  CHECK(hp.get_string("layer_preprocess_sequence") == "n");
  CHECK(hp.get_string("layer_postprocess_sequence") == "da");
  CHECK(hp.get_float("attention_dropout") == 0.1);
  CHECK(hp.get_float("relu_dropout") == 0.1);
  CHECK(hp.get_float("optimizer_adam_beta2") == 0.997);
  CHECK(hp.get_string("learning_rate_schedule") ==
        "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size");
  CHECK(hp.get_float("learning_rate_constant") == 2.0);
  CHECK(hp.get_int("learning_rate_warmup_steps") == 8000);
  // The peak of the schedule, 2.0 * 8000^-0.5 * 512^-0.5, is about 9.9e-4.
  double peak = hp.get_float("learning_rate_constant") /
                std::sqrt(double(hp.get_int("learning_rate_warmup_steps"))) /
                std::sqrt(double(hp.get_int("hidden_size")));
  CHECK(peak == Approx(9.88e-4).epsilon(0.01));
}

TEST_CASE("big, single-GPU, small and tiny sets", "[hparams][published]") {
  HParams big = named("transformer_big");
  CHECK(big.get_int("hidden_size") == 1024);
  CHECK(big.get_int("filter_size") == 4096);
  CHECK(big.get_int("num_heads") == 16);
  CHECK(big.get_int("batch_size") == 2048);
  CHECK(big.get_float("layer_prepostprocess_dropout") == 0.3);
  HParams big1 = named("transformer_big_single_gpu");
  CHECK(big1.get_float("layer_prepostprocess_dropout") == 0.1);
  CHECK(big1.get_int("learning_rate_warmup_steps") == 16000);
  HParams base1 = named("transformer_base_single_gpu");
  CHECK(base1.get_int("batch_size") == 1024);
  CHECK(base1.get_string("learning_rate_schedule") == "constant*linear_warmup*rsqrt_decay");
  CHECK(base1.get_float("learning_rate_constant") == 0.1);
  CHECK(base1.get_int("learning_rate_warmup_steps") == 16000);
  HParams small = named("transformer_small");
  CHECK(small.get_int("num_hidden_layers") == 2);
  CHECK(small.get_int("hidden_size") == 256);
  CHECK(small.get_int("filter_size") == 1024);
  CHECK(small.get_int("num_heads") == 4);
  HParams tiny = named("transformer_tiny");
  CHECK(tiny.get_int("num_hidden_layers") == 2);
  CHECK(tiny.get_int("hidden_size") == 128);
  CHECK(tiny.get_int("filter_size") == 512);
  CHECK(tiny.get_int("num_heads") == 4);
  // Everything else comes from transformer_base.
  auto d = tiny.diff(named("transformer_base"));
  CHECK(d.size() == 4);
  HParams test = named("transformer_test");
  CHECK(test.get_int("num_hidden_layers") == 2);
  CHECK(test.get_int("hidden_size") == 16);
  CHECK(test.get_int("filter_size") == 8);
  CHECK(test.get_int("num_heads") == 2);
  CHECK(test.diff(named("transformer_base")).size() == 4);
}

TEST_CASE("decode hparams have T2T's defaults", "[hparams]") {
  HParams dp = t2t::default_decode_hparams();
  CHECK(dp.get_int("beam_size") == 4);
  CHECK(dp.get_float("alpha") == 0.6);
  CHECK(dp.get_int("extra_length") == 100);
  CHECK_FALSE(dp.get_bool("return_beams"));
  dp.parse("beam_size=1,alpha=1.0");
  CHECK(dp.get_int("beam_size") == 1);
}

TEST_CASE("every shipped configs/hparams/*.yaml applies to transformer_base", "[hparams]") {
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(t2t::test::source_dir() + "/configs/hparams")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    HParams hp = named("transformer_base");
    CHECK_NOTHROW(hp.apply_yaml_file(entry.path().string()));
    ++checked;
  }
  CHECK(checked >= 1);
}
