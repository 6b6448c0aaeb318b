// Vocabularies learned by t2t-datagen, through the real binaries: characters
// the SentencePiece vocabulary never saw in training come back as
// themselves, thanks to its byte pieces, wherever ids turn into text (the
// datagen --inspect view and the decoder's .inputs / .targets files).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

using t2t::test::write_lines;

namespace {

// Dev pairs whose rare CJK (an extension-B ideograph, 饕餮) and emoji (one
// with a skin-tone modifier) appear nowhere in the sample's train split, the
// only text the vocabularies are learned from.
const std::vector<std::string> kRareEn = {"The feast 😀 was huge.", "Thumbs up 👍🏽 from 𠀀."};
const std::vector<std::string> kRareZh = {"饕餮大餐😀。", "𠀀点赞👍🏽。"};


}  // namespace

TEST_CASE("characters the vocabulary never saw round trip through datagen and the decoder",
          "[datagen][e2e][spm_bytes]") {
  TempDir dir("datagen_bytes");
  const std::string sample = dir / "sample";
  fs::create_directories(sample);
  for (const std::string lang : {"en", "zh"})
    fs::copy_file(t2t::test::source_dir() + "/data/sample/train." + lang, sample + "/train." + lang);
  write_lines(sample + "/dev.en", kRareEn);
  write_lines(sample + "/dev.zh", kRareZh);
  for (const auto& s : read_lines(sample + "/train.zh"))
    for (const std::string rare : {"饕", "😀", "👍"})
      REQUIRE(s.find(rare) == std::string::npos);

  const std::string data = dir / "data", run = dir / "run";
  auto r = run_command("T2T_SAMPLE_DIR=" + sample +
                       " ./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string dev = data + "/translate_enzh_sample-dev-00000-of-00001";
  auto inspect = run_command("./t2t-datagen --inspect=" + dev +
                             " --problem=translate_enzh_sample --data_dir=" + data);
  INFO(inspect.output);
  REQUIRE(inspect.exit_code == 0);
  for (const auto& s : kRareEn) CHECK_THAT(inspect.output, Catch::Contains("inputs text: " + s));
  for (const auto& s : kRareZh) CHECK_THAT(inspect.output, Catch::Contains("targets text: " + s));
  CHECK_THAT(inspect.output, !Catch::Contains("\u2047"));

  // The decoder's text of the dev split comes from the same encoders.
  const std::string model = " --problem=translate_enzh_sample --model=transformer"
                            " --hparams_set=transformer_tiny"
                            " --hparams='batch_size=256,hidden_size=32,filter_size=64,num_heads=2'"
                            " --data_dir=" + data + " --output_dir=" + run;
  r = run_command("./t2t-trainer" + model + " --train_steps=2 --local_eval_frequency=2 --eval_steps=1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  r = run_command("./t2t-decoder" + model +
                  " --decode_hparams='beam_size=1,extra_length=2' --decode_to_file=" +
                  (dir / "dev"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string stem =
      dir / "dev.transformer.transformer_tiny.translate_enzh_sample.beam1.alpha0.6";
  auto inputs = read_lines(stem + ".inputs");
  auto targets = read_lines(stem + ".targets");
  std::sort(inputs.begin(), inputs.end());
  std::sort(targets.begin(), targets.end());
  auto en = kRareEn, zh = kRareZh;
  std::sort(en.begin(), en.end());
  std::sort(zh.begin(), zh.end());
  CHECK(inputs == en);
  CHECK(targets == zh);
}

TEST_CASE("a SentencePiece vocabulary too small for byte pieces is learned without them",
          "[datagen][e2e][spm_bytes]") {
  TempDir dir("datagen_small_spm");
  std::vector<std::string> en, zh;
  for (int i = 0; i < 300; ++i) {
    en.push_back("the cat number " + std::to_string(i) + " sat on the mat.");
    zh.push_back("第" + std::to_string(i) + "只猫坐在垫子上。");
  }
  write_lines(dir / "train.en", en);
  write_lines(dir / "train.zh", zh);
  fs::create_directories(dir / "usr");
  write_lines(dir / "usr/small.yaml",
              {"name: small_spm", "train: {source: ../train.en, target: ../train.zh}",
               "vocab: {type: sentencepiece, size: 300}", "shards: {train: 1}"});
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --t2t_usr_dir=" + (dir / "usr") +
                       " --problem=small_spm --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("a vocabulary of 300 is too small for 256 byte pieces"));
  const auto vocab = read_lines(data + "/vocab.small_spm.300.spm.vocab");
  REQUIRE(vocab.size() > 3);
  CHECK(vocab[3].rfind("<0x00>", 0) != 0);
}
