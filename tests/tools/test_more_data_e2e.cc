// The workflows that make more training data, end to end with the real
// binaries on the bundled sample: back-translation of a monolingual file
// in pieces that survive a kill, a problem mixing real pairs with tagged
// back-translations, and a student trained on a teacher's translations.
#include <signal.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t2t/core/string_util.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/sentencepiece_encoder.h"
#include "tests/support/background_process.h"
#include "tests/support/sample_run.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::BackgroundProcess;
using t2t::test::file_bytes;
using t2t::test::run_command;
using t2t::test::TempDir;
using t2t::test::write_lines;

namespace {

const std::string kTinyHparams =
    "--hparams_set=transformer_tiny --hparams='batch_size=512,hidden_size=64,filter_size=128,"
    "num_heads=2,learning_rate_warmup_steps=10'";

std::vector<std::string> sample_lines(const std::string& name, size_t from, size_t count) {
  std::ifstream in(t2t::test::source_dir() + "/data/sample/" + name);
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; std::getline(in, line) && out.size() < count; ++i)
    if (i >= from) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("back-translation in pieces: killed and started again, it writes what one pass writes",
          "[e2e][backtranslation]") {
  // The reverse model, zh -> en.
  const auto& m = t2t::test::trained_sample_run("more_data_rev", "translate_enzh_sample_rev");
  TempDir dir("bt_pieces");
  const std::string mono = dir / "mono.zh";
  write_lines(mono, sample_lines("train.zh", 0, 600));
  // Sampling from the top 10, as back-translation does: each line draws as
  // its line of the file, whichever piece and batch it is decoded in.
  const std::string search =
      "--decode_hparams=beam_size=1,batch_size=16,extra_length=20 --random_seed=5 "
      "--hparams=sampling_method=random,sampling_temp=1.0,sampling_keep_top_k=10 ";
  auto once = run_command(m.decoder(search + "--decode_from_file=" + mono +
                                    " --decode_to_file=" + (dir / "once.en")));
  INFO(once.output);
  REQUIRE(once.exit_code == 0);

  const std::string out = dir / "bt.en";
  const std::string pieces = out + ".pieces";
  const std::string command =
      m.decoder(search + "--decode_from_file=" + mono + " --decode_to_file=" + out +
                " --decode_piece_lines=10");
  {
    BackgroundProcess killed(command, dir / "killed.log");
    // Killed as soon as a piece is done: dozens are left, far more than it
    // could finish before the signal lands.
    REQUIRE(killed.wait_for("piece 1 of 60 done", 300));
    killed.signal(SIGKILL);
    CHECK(killed.wait_exit() == 128 + SIGKILL);
    INFO(killed.log());
    CHECK_THAT(killed.log(), Catch::Contains("in 60 pieces of 10 lines"));
  }
  CHECK(fs::exists(fs::path(pieces) / "piece-000000"));
  CHECK_FALSE(fs::exists(out));

  // Other settings do not go on with these pieces.
  auto other = run_command(m.decoder(
      "--decode_hparams=beam_size=1,batch_size=16,extra_length=20 --random_seed=6 "
      "--hparams=sampling_method=random,sampling_temp=1.0,sampling_keep_top_k=10 "
      "--decode_from_file=" + mono + " --decode_to_file=" + out + " --decode_piece_lines=10"));
  CHECK(other.exit_code != 0);
  CHECK_THAT(other.output, Catch::Contains("seed 5") && Catch::Contains("seed 6") &&
                               Catch::Contains("remove " + pieces));
  auto wrong_size = run_command(command.substr(0, command.size() - 2) + "30");
  CHECK(wrong_size.exit_code != 0);
  CHECK_THAT(wrong_size.output, Catch::Contains("piece_lines: 10"));

  auto resumed = run_command(command);
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.output, Catch::Contains("going on with " + pieces));
  CHECK_THAT(resumed.output, Catch::Contains("piece 60 of 60 done: 600 of 600 lines (100.0%)"));
  CHECK(file_bytes(out) == file_bytes(dir / "once.en"));
  CHECK_FALSE(fs::exists(pieces));

  SECTION("flags that cannot go with pieces are refused") {
    auto refs = run_command(command + " --decode_reference=" + mono);
    CHECK(refs.exit_code == 2);
    CHECK_THAT(refs.output, Catch::Contains("t2t-bleu"));
    auto prefix = run_command(command + " --prefix_file=" + mono);
    CHECK(prefix.exit_code != 0);
    CHECK_THAT(prefix.output, Catch::Contains("--prefix_file is read whole"));
    auto negative = run_command(m.decoder("--decode_from_file=" + mono + " --decode_piece_lines=-3"));
    CHECK(negative.exit_code == 2);
  }
}

TEST_CASE("a problem mixing real pairs with tagged back-translations trains and resumes",
          "[e2e][backtranslation][data_mix]") {
  TempDir dir("bt_mix");
  // Real pairs, and "back-translations": the other half's English stands
  // in for a reverse model's output here (bt_pieces makes real ones).
  write_lines(dir / "real.en", sample_lines("train.en", 0, 1000));
  write_lines(dir / "real.zh", sample_lines("train.zh", 0, 1000));
  write_lines(dir / "bt.en", sample_lines("train.en", 1000, 1000));
  write_lines(dir / "mono.zh", sample_lines("train.zh", 1000, 1000));
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  write_lines(dir / "usr/mix.yaml",
              {"name: enzh_bt_mix", "source_language: en", "target_language: zh",
               "train:", "  - {name: real, source: ../real.en, target: ../real.zh, shards: 2}",
               "  - {name: bt, source: ../bt.en, target: ../mono.zh, weight: 0.5, tag: '<BT>'}",
               "dev: {source: " + sample + "dev.en, target: " + sample + "dev.zh}",
               "vocab: {type: sentencepiece, size: 1200, separate: false}",
               "shards: {train: 1}"});
  const std::string usr = "--t2t_usr_dir=" + (dir / "usr");
  const std::string data = dir / "data";
  auto gen = run_command("./t2t-datagen " + usr + " --problem=enzh_bt_mix --data_dir=" + data);
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  const std::string real0 = data + "/enzh_bt_mix-train-real-00000-of-00002";
  const std::string bt0 = data + "/enzh_bt_mix-train-bt-00000-of-00001";
  CHECK(t2t::count_tfrecords(real0) + t2t::count_tfrecords(data + "/enzh_bt_mix-train-real-00001-of-00002") == 1000);
  CHECK(t2t::count_tfrecords(bt0) == 1000);
  CHECK_FALSE(fs::exists(data + "/enzh_bt_mix-train-00000-of-00010"));

  // The tag is one piece of the vocabulary, before every back-translated
  // source and no real one.
  const t2t::SentencePieceEncoder vocab(data + "/vocab.enzh_bt_mix.1200.spm.model");
  const auto tag = vocab.encode("<BT>");
  REQUIRE_FALSE(tag.empty());
  CHECK(vocab.decode({tag.back()}) == "<BT>");
  auto first_inputs = [](const std::string& shard) {
    t2t::TFRecordReader reader(shard);
    std::string record;
    REQUIRE(reader.next(&record));
    return t2t::parse_example(record).at("inputs");
  };
  const auto bt_inputs = first_inputs(bt0);
  CHECK(std::vector<int64_t>(bt_inputs.begin(), bt_inputs.begin() + static_cast<long>(tag.size())) == tag);
  CHECK(t2t::starts_with(vocab.decode(bt_inputs), "<BT> "));
  CHECK_FALSE(t2t::starts_with(vocab.decode(first_inputs(real0)), "<BT>"));

  const std::string trainer = "./t2t-trainer " + usr + " --problem=enzh_bt_mix --model=transformer " +
                              kTinyHparams + " --data_dir=" + data + " --output_dir=" +
                              (dir / "run") + " --local_eval_frequency=10 --eval_steps=1 ";
  auto first = run_command(trainer + "--train_steps=10");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.output, Catch::Contains("a mix of 2 drawn by weight (real 1, bt 0.5)"));
  auto more = run_command(trainer + "--train_steps=20");
  INFO(more.output);
  REQUIRE(more.exit_code == 0);
  CHECK_THAT(more.output, Catch::Contains("resuming from"));
  CHECK_THAT(more.output, Catch::Contains("a mix of 2"));

  // The reader's position holds for this mix only: other weights are refused.
  std::string yaml = file_bytes(dir / "usr/mix.yaml");
  yaml.replace(yaml.find("weight: 0.5"), 11, "weight: 2.0");
  write_lines(dir / "usr/mix.yaml", {yaml});
  auto reweighted = run_command(trainer + "--train_steps=30");
  CHECK(reweighted.exit_code != 0);
  CHECK_THAT(reweighted.output, Catch::Contains("real 1, bt 0.5") &&
                                    Catch::Contains("real 1, bt 2") &&
                                    Catch::Contains("new output_dir"));

  // Reversed, the tags would be learned as targets.
  auto reversed = run_command("./t2t-trainer " + usr + " --problem=enzh_bt_mix_rev --model=transformer " +
                              kTinyHparams + " --data_dir=" + data + " --output_dir=" +
                              (dir / "rev") + " --train_steps=2");
  CHECK(reversed.exit_code != 0);
  CHECK_THAT(reversed.output, Catch::Contains("tags its sources"));
}

TEST_CASE("distillation: a teacher translates the training sources and a student learns them",
          "[e2e][distillation]") {
  // The teacher: a model of the forward direction (the sample, briefly).
  const auto& teacher = t2t::test::trained_sample_run("distill_teacher");
  TempDir dir("distill");
  write_lines(dir / "train.en", sample_lines("train.en", 0, 300));
  auto teach = run_command(teacher.decoder(
      "--decode_hparams=beam_size=2,extra_length=20 --decode_from_file=" + (dir / "train.en") +
      " --decode_to_file=" + (dir / "train.teacher.zh") + " --decode_piece_lines=100"));
  INFO(teach.output);
  REQUIRE(teach.exit_code == 0);
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  write_lines(dir / "usr/distilled.yaml",
              {"name: enzh_distilled", "source_language: en", "target_language: zh",
               "train: {source: ../train.en, target: ../train.teacher.zh}",
               "dev: {source: " + sample + "dev.en, target: " + sample + "dev.zh}",
               "vocab: {type: byte}", "shards: {train: 1}"});
  const std::string usr = "--t2t_usr_dir=" + (dir / "usr");
  auto gen = run_command("./t2t-datagen " + usr + " --problem=enzh_distilled --data_dir=" +
                         (dir / "data"));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  CHECK(t2t::count_tfrecords(dir / "data/enzh_distilled-train-00000-of-00001") > 0);
  auto student = run_command("./t2t-trainer " + usr + " --problem=enzh_distilled "
                             "--model=transformer " + kTinyHparams + " --data_dir=" +
                             (dir / "data") + " --output_dir=" + (dir / "student") +
                             " --train_steps=5 --schedule=train");
  INFO(student.output);
  CHECK(student.exit_code == 0);
}
