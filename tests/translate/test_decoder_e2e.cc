// End-to-end tests of t2t-decoder on a briefly trained transformer_tiny on
// the bundled sample: file decoding with T2T's default output name, the dev
// split's three files and BLEU, interactive answers, and the errors for a
// missing or mismatched checkpoint.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/file_util.h"
#include "t2t/kernels/int8_linear.h"
#include "tests/support/sample_run.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// True when `decoded` is `original` with some runs replaced by
// SentencePiece's unknown-piece mark (the sample's 1k vocabulary lacks rare
// characters).
bool same_but_unknowns(const std::string& original, const std::string& decoded) {
  const std::string unk = "\u2047";
  std::vector<std::string> pieces;
  size_t start = 0, at;
  while ((at = decoded.find(unk, start)) != std::string::npos) {
    pieces.push_back(decoded.substr(start, at - start));
    start = at + unk.size();
  }
  pieces.push_back(decoded.substr(start));
  if (pieces.size() == 1) return original == decoded;
  // Each mark stands for at least one byte of the original.
  if (original.compare(0, pieces.front().size(), pieces.front()) != 0) return false;
  size_t pos = pieces.front().size();
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    pos = original.find(pieces[i], pos + 1);
    if (pos == std::string::npos) return false;
    pos += pieces[i].size();
  }
  const std::string& last = pieces.back();
  return original.size() >= pos + 1 + last.size() &&
         original.compare(original.size() - last.size(), last.size(), last) == 0;
}

// One small trained run shared by the tests of this file.
using TrainedRun = t2t::test::SampleRun;

const TrainedRun& trained() {
  static TrainedRun run("decoder_e2e");
  INFO(run.log);
  REQUIRE(run.ok);
  return run;
}

}  // namespace

TEST_CASE("t2t-decoder translates a file into T2T's default output name", "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("decoder_file");
  const std::string in = dir / "in.en";
  t2t::write_file_atomic(in, "I want to eat a bowl of noodles.\n\nThis movie is longer than that "
                             "one.\nHello.\n");
  auto r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5' "
                                 "--decode_from_file=" + in));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string out =
      in + ".transformer.transformer_tiny.translate_enzh_sample.beam2.alpha0.6.decodes";
  REQUIRE(fs::exists(out));
  const auto lines = read_lines(out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[1].empty());
  CHECK_THAT(r.output, Catch::Contains("sentences/s"));

  // Beams with scores, and BLEU against a reference of the same length.
  const std::string ref = dir / "ref.zh";
  t2t::write_file_atomic(ref, "我想吃一碗面条。\n\n这部电影比那部长。\n你好。\n");
  r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5,return_beams=true,"
                            "write_beam_scores=true' --decode_from_file=" + in +
                            " --decode_to_file=" + (dir / "beams.zh") + " --decode_reference=" + ref));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("BLEU = "));
  const auto beams = read_lines(dir / "beams.zh");
  REQUIRE(beams.size() == 4);
  CHECK(std::count(beams[0].begin(), beams[0].end(), '\t') == 3);

  // A reference that does not match the input is refused, naming it.
  t2t::write_file_atomic(ref, "只有一行\n");
  r = run_command(t.decoder("--decode_hparams='beam_size=1,extra_length=3' --decode_from_file=" +
                            in + " --decode_to_file=" + (dir / "x.zh") + " --decode_reference=" + ref));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("has 1 lines but there are 4 translations"));
}

TEST_CASE("t2t-decoder decodes the dev split into .decodes .targets .inputs with BLEU",
          "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("decoder_dev");
  auto r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5,num_samples=40' "
                                 "--decode_to_file=" + (dir / "dev")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string stem = dir / "dev.transformer.transformer_tiny.translate_enzh_sample.beam2.alpha0.6";
  REQUIRE(read_lines(stem + ".decodes").size() == 40);
  const auto targets = read_lines(stem + ".targets");
  const auto inputs = read_lines(stem + ".inputs");
  REQUIRE(targets.size() == 40);
  REQUIRE(inputs.size() == 40);
  // The sample's dev pairs (shuffled by datagen), decoded back to text.
  const auto en = read_lines(t2t::test::source_dir() + "/data/sample/dev.en");
  const auto zh = read_lines(t2t::test::source_dir() + "/data/sample/dev.zh");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto at = std::find(en.begin(), en.end(), inputs[i]);
    INFO("dev line " << i << ": " << inputs[i]);
    REQUIRE(at != en.end());
    CHECK(same_but_unknowns(zh[at - en.begin()], targets[i]));
  }
  CHECK_THAT(r.output, Catch::Contains("BLEU = "));
  CHECK_THAT(r.output, Catch::Contains("tok:zh"));
}

TEST_CASE("t2t-decoder answers interactively, line by line", "[decoder][e2e]") {
  const auto& t = trained();
  auto r = run_command("printf 'Hello.\\n\\nq\\nnot read\\n' | " +
                       t.decoder("--decode_hparams='beam_size=1,extra_length=4' "
                                 "--decode_interactive --log_level=warning"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Two answers (the second empty); "q" stopped the rest.
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 2);
}

TEST_CASE("t2t-decoder explains a missing or mismatched checkpoint", "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("decoder_errors");
  auto r = run_command("./t2t-decoder --problem=translate_enzh_sample --model=transformer "
                       "--hparams_set=transformer_tiny --data_dir=" + t.data +
                       " --output_dir=" + (dir / "empty") + " --decode_from_file=x");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("holds no checkpoint"));

  r = run_command(t.decoder("--hparams=hidden_size=32 --decode_from_file=x"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("does not fit model 'transformer'"));

  r = run_command(t.decoder("--checkpoint_path=" + (dir / "nope.pt") + " --decode_from_file=x"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--checkpoint_path=" + (dir / "nope.pt")));
}

TEST_CASE("t2t-decoder --quantize=int8 and bf16 decode every line, bad ones included",
          "[decoder][e2e][int8]") {
  const auto& t = trained();
  TempDir dir("decoder_int8");
  const std::string in = dir / "in.en";
  std::string text = t2t::read_file(t2t::test::source_dir() + "/data/sample/dev.en");
  text = text.substr(0, text.find('\n', text.size() / 4) + 1);  // a quarter of the dev set
  // An empty line, a line of 1,000 words, characters the vocabulary lacks.
  std::string long_line;
  for (int i = 0; i < 1000; ++i) long_line += "noodles ";
  text += "\n" + long_line + "\n\u2603 \U0001D11E \u00e9t\u00e9 \u0627\u0644\u0633\u0644\u0627\u0645\n";
  t2t::write_file_atomic(in, text);
  const auto inputs = read_lines(in);

  const std::string flags = "--decode_hparams='beam_size=2,extra_length=5' --decode_from_file=" + in;
  auto r = run_command(t.decoder(flags + " --decode_to_file=" + (dir / "float.zh")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto float_out = read_lines(dir / "float.zh");
  REQUIRE(float_out.size() == inputs.size());
  for (const std::string mode : {"int8", "bf16"}) {
    SECTION(mode) {
      r = run_command(t.decoder(flags + " --quantize=" + mode + " --decode_to_file=" +
                                (dir / (mode + ".zh"))));
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.output, Catch::Contains(mode + " weights"));
      if (mode == "bf16") {
        // Where the CPU has no bf16 instructions (/proc/cpuinfo), it says
        // that bf16 is emulated there.
        const bool native = run_command("grep -m1 -ow 'avx512_bf16\\|amx_bf16' /proc/cpuinfo")
                                .exit_code == 0;
        const bool warned = r.output.find("--quantize=bf16 on a CPU without") != std::string::npos;
        CHECK(warned == !native);
      }
      const auto out = read_lines(dir / (mode + ".zh"));
      REQUIRE(out.size() == inputs.size());
      CHECK(out[inputs.size() - 3].empty());
      // Inputs are decoded whole: the long line was not cut.
      CHECK_THAT(r.output, !Catch::Contains("decoding the first"));
      size_t same = 0;
      for (size_t i = 0; i < inputs.size(); ++i) same += out[i] == float_out[i];
      INFO(same << " of " << inputs.size() << " lines identical");
      // Both round the weights; on this barely trained model most lines
      // come out the same all the same.
      CHECK(same * 2 >= inputs.size());
    }
  }

  r = run_command(t.decoder("--quantize=int4 --decode_from_file=" + in));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("--quantize=int4 is not one of none, int8, bf16"));
}

TEST_CASE("t2t-avg-all --quantize=int8 writes a checkpoint decoded as --quantize=int8 is",
          "[decoder][e2e][int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  const auto& t = trained();
  REQUIRE(t.ok);
  TempDir dir("decoder_int8_saved");
  const std::string int8_dir = dir / "int8";
  const std::string in = t2t::test::source_dir() + "/data/sample/dev.en";
  const std::string avg = "./t2t-avg-all --model_dir=" + t.run + " --output_dir=" + int8_dir +
                          " --n=1 --quantize=int8";

  // The model's shape comes from the vocabularies: refused without them.
  auto r = run_command(avg);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--problem=P --data_dir=D"));
  r = run_command("./t2t-avg-all --model_dir=" + t.run + " --output_dir=" + int8_dir +
                  " --problem=translate_enzh_sample");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--problem is for --quantize=int8 only"));

  r = run_command(avg + " --problem=translate_enzh_sample --data_dir=" + t.data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("in int8"));
  const std::string saved = t2t::latest_checkpoint(int8_dir);
  REQUIRE(!saved.empty());
  const std::string float_ckpt = t2t::latest_checkpoint(t.run);
  // The matrices in a quarter of the bytes; the embeddings stay float.
  CHECK(fs::file_size(saved) < fs::file_size(float_ckpt));
  t2t::CheckpointMeta meta;
  const auto tensors = t2t::read_checkpoint_tensors(saved, &meta);
  CHECK(meta.weights == "int8");
  CHECK(meta.step == t2t::checkpoint_step(float_ckpt));
  CHECK(tensors.at("encoder.0.self_attention.qkv.weight").scalar_type() == torch::kChar);

  const std::string flags = "--decode_hparams=beam_size=2 --decode_from_file=" + in;
  r = run_command(t.decoder(flags + " --quantize=int8 --decode_to_file=" + (dir / "quantized.zh")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const std::string quantize : {"", " --quantize=int8"}) {
    r = run_command("./t2t-decoder --problem=translate_enzh_sample --model=transformer "
                    "--data_dir=" + t.data + " --output_dir=" + int8_dir + " " + flags +
                    quantize + " --decode_to_file=" + (dir / "saved.zh"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("holds int8 weights") && Catch::Contains("int8 weights,") &&
                             !Catch::Contains("quantized the model"));
    // Exactly what quantizing the float checkpoint at start decodes.
    CHECK(t2t::read_file(dir / "saved.zh") == t2t::read_file(dir / "quantized.zh"));
  }

  // What it cannot be: decoded in bf16, trained on, averaged.
  r = run_command("./t2t-decoder --problem=translate_enzh_sample --model=transformer --data_dir=" +
                  t.data + " --output_dir=" + int8_dir + " --quantize=bf16 " + flags);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("int8 already"));
  r = run_command("./t2t-avg-all --model_dir=" + int8_dir + " --output_dir=" + (dir / "again"));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("int8 weights for decoding"));
  std::string warm = t.trainer("--train_steps=40 --warm_start_from=" + saved);
  warm.replace(warm.find("--output_dir=" + t.run), ("--output_dir=" + t.run).size(),
               "--output_dir=" + (dir / "warm"));
  r = run_command(warm);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("int8"));
}
