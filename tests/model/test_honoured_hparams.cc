// T2T hparams that t2t carries but does not read as T2T does
// (t2t/model/honoured_hparams.h): every set's values pass, values that would
// be ignored are refused, the ones that change nothing are said; and
// activation_dtype's mixed precision, in the library and through the tools.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <filesystem>

#include "t2t/model/honoured_hparams.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/train_step.h"
#include "tests/support/test_util.h"

using t2t::HParams;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

HParams tiny() { return t2t::hparams_registry().get("transformer_tiny")(); }

}  // namespace

TEST_CASE("HParams tells values asked for from the set's", "[honoured]") {
  HParams hp = tiny();
  CHECK_FALSE(hp.overridden("dropout"));
  hp.set("dropout", 0.5);  // what a set does: not an override
  CHECK_FALSE(hp.overridden("dropout"));
  hp.parse("dropout=0.3,batch_size=512");
  CHECK(hp.overridden("dropout"));
  CHECK(hp.override_source("dropout") == "hparams");  // parse()'s default source
  hp.apply_yaml_string("dropout: 0.5\n", "--hparams_file x.yaml");
  CHECK_FALSE(hp.overridden("dropout"));  // back at the set's value
  CHECK(hp.override_source("dropout").empty());
  hp.apply_yaml_string("dropout: 0.1\n", "--hparams_file x.yaml");
  CHECK(hp.override_source("dropout") == "--hparams_file x.yaml");
  const HParams copy = hp;
  CHECK(copy.overridden("dropout"));
  CHECK_FALSE(HParams::from_yaml_string(hp.to_yaml(), "saved").overridden("dropout"));
}

TEST_CASE("every registered set's values are honoured, silently", "[honoured]") {
  for (const auto& name : t2t::hparams_registry().names()) {
    INFO(name);
    const HParams hp = t2t::hparams_registry().get(name)();
    CHECK(t2t::check_honoured_hparams(hp, "transformer").empty());
  }
  // The table covers what every set inherits from T2T.
  const HParams hp = tiny();
  for (const auto& key : t2t::honoured_hparams_names()) CHECK(hp.has(key));
}

TEST_CASE("hparams the transformer would ignore are refused, naming what to set", "[honoured]") {
  auto refusal = [](const std::string& overrides, const std::string& model = "transformer") {
    HParams hp = tiny();
    hp.parse(overrides);
    try {
      t2t::check_honoured_hparams(hp, model);
    } catch (const t2t::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string dropout = refusal("dropout=0.3");
  CHECK_THAT(dropout, Catch::Contains("hparam dropout=0.3 (from hparams)") &&
                          Catch::Contains("layer_prepostprocess_dropout=0.1") &&
                          Catch::Contains("attention_dropout=0.1") &&
                          Catch::Contains("relu_dropout=0.1"));
  CHECK(refusal("dropout=0.2").empty());  // the set's own value
  CHECK(refusal("dropout=0.3", "my_plugin_model").empty());  // not the transformer's row
  CHECK_THAT(refusal("weight_dtype=bfloat16"),
             Catch::Contains("weight_dtype=bfloat16") && Catch::Contains("activation_dtype"));
  CHECK_THAT(refusal("weight_dtype=bfloat16", "my_plugin_model"), Catch::Contains("float32"));
  CHECK_THAT(refusal("activation_dtype=int8"),
             Catch::Contains("activation_dtype=int8") && Catch::Contains("bfloat16"));
  CHECK_THAT(refusal("symbol_modality_num_shards=0"), Catch::Contains("at least 1"));
  // All refusals at once.
  const std::string both = refusal("dropout=0.4,weight_dtype=float16");
  CHECK_THAT(both, Catch::Contains("dropout=0.4") && Catch::Contains("weight_dtype=float16"));
}

TEST_CASE("values that change nothing here are accepted and said", "[honoured]") {
  HParams hp = tiny();
  hp.parse("use_pad_remover=false,symbol_modality_num_shards=1,activation_dtype=bfloat16");
  const auto notes = t2t::check_honoured_hparams(hp, "transformer");
  REQUIRE(notes.size() == 2);
  CHECK_THAT(notes[0], Catch::Contains("symbol_modality_num_shards=1 (from hparams)") &&
                           Catch::Contains("same model"));
  CHECK_THAT(notes[1], Catch::Contains("use_pad_remover=false") &&
                           Catch::Contains("same results"));
}

TEST_CASE("building the transformer checks its hparams", "[honoured]") {
  HParams hp = tiny();
  hp.parse("dropout=0.1");
  CHECK_THROWS_WITH(t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{40, 40, true}),
                    Catch::Contains("dropout=0.1"));
  CHECK(t2t::model_registry().get("transformer")(tiny(), t2t::FeatureInfo{40, 40, true}));
}

TEST_CASE("activation_dtype asks for mixed precision as --mixed_precision does", "[honoured]") {
  auto mode = [](const std::string& dtype, const std::string& flag) {
    HParams hp = tiny();
    hp.parse("activation_dtype=" + dtype);
    return t2t::effective_mixed_precision(hp, flag);
  };
  CHECK(mode("float32", "none") == "none");
  CHECK(mode("float32", "bf16") == "bf16");
  CHECK(mode("float32", "fp16") == "fp16");
  CHECK(mode("bfloat16", "none") == "bf16");
  CHECK(mode("bfloat16", "bf16") == "bf16");
  CHECK(mode("float16", "none") == "fp16");
  CHECK(mode("float16", "fp16") == "fp16");
  // The library names the option; t2t-trainer spells it --mixed_precision.
  CHECK_THROWS_WITH(mode("bfloat16", "fp16"), Catch::Contains("activation_dtype=bfloat16") &&
                                                  Catch::Contains("mixed_precision=fp16"));
  CHECK_THROWS_WITH(mode("float16", "bf16"), Catch::Contains("activation_dtype=float16") &&
                                                 Catch::Contains("mixed_precision=bf16"));
  CHECK_THROWS_WITH(mode("float64", "none"), Catch::Contains("activation_dtype=float64"));
  CHECK_THROWS_WITH(mode("float32", "int8"), "mixed_precision=int8 is not one of none, bf16, fp16");
  CHECK_THROWS_AS(mode("float32", "int8"), t2t::OptionError);
}

TEST_CASE("t2t-trainer and t2t-decoder honour or refuse T2T's hparams", "[honoured][e2e]") {
  TempDir dir("honoured_e2e");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data)
              .exit_code == 0);
  auto trainer = [&](const std::string& run, const std::string& extra) {
    return run_command(
        "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --data_dir=" + data + " --output_dir=" + (dir / run) +
        " --train_steps=2 --schedule=train --device=cpu --hparams='batch_size=256,hidden_size=32,"
        "filter_size=64,num_heads=2" + extra + "'");
  };
  auto r = trainer("dropout", ",dropout=0.3");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("hparam dropout=0.3 (from --hparams)") &&
                           Catch::Contains("layer_prepostprocess_dropout"));

  r = trainer("bf16", ",activation_dtype=bfloat16,use_pad_remover=false");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("activation_dtype=bfloat16: bf16 autocast"));
  CHECK_THAT(r.output, Catch::Contains("use_pad_remover=false (from --hparams) changes nothing"));

  r = run_command("./t2t-trainer --problem=translate_enzh_sample --model=transformer "
                  "--hparams_set=transformer_tiny --data_dir=" + data + " --output_dir=" +
                  (dir / "clash") + " --train_steps=2 --device=cpu --mixed_precision=bf16 "
                  "--hparams=activation_dtype=float16");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("activation_dtype=float16") &&
                           Catch::Contains("--mixed_precision=bf16"));

  // Decoding refuses before it loads anything.
  const std::string decoder = "./t2t-decoder --problem=translate_enzh_sample --model=transformer "
                              "--hparams_set=transformer_tiny --data_dir=" + data +
                              " --output_dir=" + (dir / "none") + " ";
  r = run_command(decoder + "--hparams=activation_dtype=bfloat16");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("activation_dtype=bfloat16 (from --hparams) applies to "
                                       "training"));
  r = run_command(decoder + "--hparams=weight_dtype=bfloat16");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("weight_dtype=bfloat16"));
}
