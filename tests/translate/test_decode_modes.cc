// The decoder's plumbing on an echo model (it translates every sentence into
// itself, byte for byte): file decoding keeps the input's order and empty
// lines, interactive answers, the dev split's three files, return_beams and
// scores, limits, bad input, T2T's file names and decode hparams.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <atomic>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"
#include "t2t/data/problem.h"
#include "t2t/translate/decode_modes.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/parallel_batches.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

using t2t::test::TempDir;

namespace {

struct EchoState : t2t::DecoderState {
  torch::Tensor inputs;  // [rows, input_len]
};

// Predicts input id t at step t (EOS once the input is used up), with a
// weaker second choice so that other beams exist.
class EchoModel : public t2t::T2TModel {
 public:
  explicit EchoModel(int64_t vocab) : vocab_(vocab) {}
  torch::Tensor forward(const torch::Tensor&, const torch::Tensor&) override {
    throw t2t::Error("EchoModel decodes only");
  }
  std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor& inputs) override {
    auto state = std::make_unique<EchoState>();
    state->encoder_output = inputs.to(torch::kFloat).unsqueeze(2);
    state->inputs = inputs;
    ++batches;
    return state;
  }
  torch::Tensor decode_step(t2t::DecoderState& s, const torch::Tensor& last_ids) override {
    auto& state = dynamic_cast<EchoState&>(s);
    const int64_t rows = last_ids.size(0), t = state.length;
    auto logits = torch::zeros({rows, vocab_});
    for (int64_t r = 0; r < rows; ++r) {
      int64_t want = t < state.inputs.size(1) ? state.inputs[r][t].item<int64_t>() : t2t::kEosId;
      if (want == t2t::kPadId) want = t2t::kEosId;
      logits[r][want] = 10.0;
      logits[r][want == t2t::kEosId ? 2 : t2t::kEosId] = 7.0;
    }
    ++state.length;
    return logits;
  }
  void reorder_state(t2t::DecoderState& s, const torch::Tensor& index) override {
    T2TModel::reorder_state(s, index);
    auto& state = dynamic_cast<EchoState&>(s);
    state.inputs = state.inputs.index_select(0, index);
  }
  std::atomic<int64_t> batches{0};  // batches may run in parallel

 private:
  int64_t vocab_;
};

t2t::BatchTranslator make_decoder(const std::string& decode_hparams,
                          std::shared_ptr<EchoModel>* model_out = nullptr, int parallel = 0) {
  t2t::HParams dp = t2t::default_decode_hparams();
  dp.parse(decode_hparams, "--decode_hparams");
  auto options = t2t::decode_options(dp);
  options.log_results = false;
  options.parallel_batches = parallel;
  auto bytes = std::make_shared<t2t::ByteTextEncoder>();
  auto model = std::make_shared<EchoModel>(bytes->vocab_size());
  if (model_out) *model_out = model;
  return t2t::BatchTranslator(model, bytes, bytes, options);
}

std::string slurp(const std::string& path) { return t2t::read_file(path); }

}  // namespace

TEST_CASE("file decoding keeps the input's order and its empty lines", "[decode]") {
  TempDir dir("decode_order");
  const std::string in = dir / "in.txt", out = dir / "out.txt";
  // Lengths out of order, so that sorting longest first reorders them, and
  // batches of 2 so that they are spread over several batches.
  const std::vector<std::string> lines = {"mid length", "", "a much longer line than the others",
                                          "x", "   ", "  padded  ", "another one"};
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  t2t::write_file_atomic(in, text);
  std::shared_ptr<EchoModel> model;
  auto decoder = make_decoder("batch_size=2,beam_size=2", &model);
  const auto outcome = t2t::decode_file(decoder, in, out);
  CHECK(slurp(out) ==
        "mid length\n\na much longer line than the others\nx\n\npadded\nanother one\n");
  CHECK(outcome.hypotheses.size() == lines.size());
  CHECK(decoder.counts().empty == 2);
  CHECK(model->batches == 3);  // 5 non-empty lines in batches of 2
  CHECK_FALSE(std::filesystem::exists(out + ".tmp"));
}

TEST_CASE("invalid UTF-8 is replaced and counted, long inputs are cut when asked", "[decode]") {
  TempDir dir("decode_bad_input");
  const std::string in = dir / "in.txt", out = dir / "out.txt";
  t2t::write_file_atomic(in, "ok\nbad \xff byte\nabcdefghij\n");
  auto decoder = make_decoder("beam_size=1,max_input_size=8");
  t2t::decode_file(decoder, in, out);
  // max_input_size 8 keeps 7 bytes and EOS; U+FFFD is 3 bytes.
  CHECK(slurp(out) == "ok\nbad \xef\xbf\xbd\nabcdefg\n");
  CHECK(decoder.counts().invalid_utf8 == 1);
  CHECK(decoder.counts().truncated == 2);
}

TEST_CASE("inputs are cut at 1,024 tokens by default, and decoded whole with max_input_size=-1",
          "[decode]") {
  TempDir dir("decode_whole_input");
  const std::string in = dir / "in.txt", out = dir / "out.txt";
  // 299 bytes + EOS: longer than any model's max_length in the shipped sets.
  std::string long_line;
  for (int i = 0; i < 299; ++i) long_line += static_cast<char>('a' + i % 26);
  t2t::write_file_atomic(in, long_line + "\nshort\n");
  std::shared_ptr<EchoModel> model;
  auto decoder = make_decoder("beam_size=1,max_input_size=-1", &model);
  CHECK(decoder.options().max_input_length == 0);
  t2t::decode_file(decoder, in, out);
  CHECK(slurp(out) == long_line + "\nshort\n");
  CHECK(decoder.counts().truncated == 0);
  CHECK(decoder.counts().input_tokens == 300 + 6);

  // By default a line of 2,000 tokens is cut to 1,024, EOS included.
  std::string huge;
  for (int i = 0; i < 1999; ++i) huge += static_cast<char>('a' + i % 26);
  t2t::write_file_atomic(in, "short\n" + huge + "\n");
  auto capped = make_decoder("beam_size=1");
  CHECK(capped.options().max_input_length == 1024);
  t2t::decode_file(capped, in, out);
  CHECK(slurp(out) == "short\n" + huge.substr(0, 1023) + "\n");
  CHECK(capped.counts().truncated == 1);
}

TEST_CASE("return_beams writes every beam and write_beam_scores T2T's scores", "[decode]") {
  TempDir dir("decode_beams");
  const std::string in = dir / "in.txt", out = dir / "out.txt";
  t2t::write_file_atomic(in, "abc\n\nde\n");
  auto decoder = make_decoder("beam_size=3,return_beams=true,write_beam_scores=true");
  t2t::decode_file(decoder, in, out);
  std::istringstream lines(slurp(out));
  std::string line;
  std::vector<std::string> records;
  while (std::getline(lines, line)) records.push_back(line);
  REQUIRE(records.size() == 3);
  const std::regex beam_with_score("([^\\t]*)\\t(-?[0-9]+\\.[0-9]{2})");
  auto fields = [](const std::string& l) {
    std::vector<std::string> f;
    size_t start = 0, tab;
    while ((tab = l.find('\t', start)) != std::string::npos) {
      f.push_back(l.substr(start, tab - start));
      start = tab + 1;
    }
    f.push_back(l.substr(start));
    return f;
  };
  const auto first = fields(records[0]);
  REQUIRE(first.size() == 6);  // 3 beams, each with its score
  CHECK(first[0] == "abc");
  double previous = 1.0;
  for (size_t k = 0; k < 3; ++k) {
    CHECK(std::regex_match(first[2 * k] + "\t" + first[2 * k + 1], beam_with_score));
    const double score = std::stod(first[2 * k + 1]);
    CHECK(score <= previous);
    CHECK(score <= 0.0);
    previous = score;
  }
  CHECK(first[2] != "abc");
  CHECK(fields(records[2])[0] == "de");

  auto plain = make_decoder("beam_size=3,return_beams=true");
  t2t::decode_file(plain, in, out);
  CHECK(fields(slurp(out).substr(0, slurp(out).find('\n'))).size() == 3);
}

TEST_CASE("interactive decoding answers each line at once and stops at q", "[decode]") {
  auto decoder = make_decoder("beam_size=2");
  std::istringstream in("hello there\n\n  spaced \r\nq\nnever read\n");
  std::ostringstream out;
  CHECK(t2t::decode_interactively(decoder, in, out) == 3);
  CHECK(out.str() == "hello there\n\nspaced\n");
}

TEST_CASE("the dev split decodes to .decodes .targets and .inputs in file order", "[decode]") {
  TempDir dir("decode_dev");
  auto problem = t2t::create_problem("translate_enzh_sample");
  t2t::ByteTextEncoder bytes;
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"short", "S"}, {"a rather longer source", "L"}, {"mid size", "M"}};
  {
    t2t::TFRecordWriter writer(dir / "translate_enzh_sample-dev-00000-of-00001");
    for (const auto& [src, tgt] : pairs) {
      auto in = bytes.encode(src), out = bytes.encode(tgt);
      in.push_back(t2t::kEosId);
      out.push_back(t2t::kEosId);
      writer.write(t2t::serialize_example({{"inputs", in}, {"targets", out}}));
    }
    writer.close();
  }
  auto decoder = make_decoder("beam_size=2,num_samples=2");
  const std::string decodes = dir / "run/dev.decodes";
  const auto outcome = t2t::decode_dev_split(decoder, *problem, dir.path.string(), decodes);
  CHECK(slurp(decodes) == "short\na rather longer source\n");
  CHECK(slurp(dir / "run/dev.inputs") == "short\na rather longer source\n");
  CHECK(slurp(dir / "run/dev.targets") == "S\nL\n");
  CHECK(outcome.references == std::vector<std::string>{"S", "L"});

  auto reversed = t2t::create_problem("translate_enzh_sample_rev");
  auto all = make_decoder("beam_size=1");
  const auto rev = t2t::decode_dev_split(all, *reversed, dir.path.string(), dir / "rev.decodes");
  CHECK(rev.hypotheses == std::vector<std::string>{"S", "L", "M"});
  CHECK(rev.references == std::vector<std::string>{"short", "a rather longer source", "mid size"});

  CHECK_THROWS_WITH(t2t::decode_dev_split(all, *problem, (dir / "nowhere"), dir / "x.decodes"),
                    Catch::Contains("t2t-datagen"));
}

TEST_CASE("output names and float formatting follow T2T", "[decode]") {
  CHECK(t2t::python_float_str(0.6) == "0.6");
  CHECK(t2t::python_float_str(1.0) == "1.0");
  CHECK(t2t::python_float_str(0.0) == "0.0");
  CHECK(t2t::python_float_str(2.5) == "2.5");
  CHECK(t2t::python_float_str(123.0) == "123.0");
  CHECK(t2t::python_float_str(0.0001) == "0.0001");
  CHECK(t2t::python_float_str(1e-05) == "1e-05");
  CHECK(t2t::python_float_str(1e16) == "1e+16");
  CHECK(t2t::python_float_str(-0.25) == "-0.25");
  const t2t::OutputNaming naming{"transformer", "transformer_tiny", "translate_enzh_sample"};
  CHECK(t2t::decode_filename("in.en", naming, 4, 0.6) ==
        "in.en.transformer.transformer_tiny.translate_enzh_sample.beam4.alpha0.6.decodes");
  CHECK(t2t::decode_filename("x.beam4.alpha0.6.decodes", naming, 4, 0.6) ==
        "x.beam4.alpha0.6.decodes");
  CHECK(t2t::decode_filename("in", naming, 1, 1.0) ==
        "in.transformer.transformer_tiny.translate_enzh_sample.beam1.alpha1.0.decodes");
}

TEST_CASE("decode hparams map onto search options as in T2T", "[decode]") {
  auto parse = [&](const std::string& s) {
    t2t::HParams dp = t2t::default_decode_hparams();
    dp.parse(s, "--decode_hparams");
    return t2t::decode_options(dp);
  };
  const auto d = parse("");
  CHECK(d.search.beam_size == 4);
  CHECK(d.search.alpha == Approx(0.6));
  CHECK(d.search.extra_length == 100);
  CHECK(d.batch_size == 32);
  CHECK(d.search.num_return == 1);
  CHECK(d.search.stop_early);
  CHECK(d.max_input_length == 1024);  // cut, as Marian and CTranslate2 cut
  CHECK(d.search.patience == 0);  // T2T's stopping test alone
  CHECK(parse("patience=2").search.patience == Approx(2.0));
  CHECK_THROWS_WITH(parse("patience=-1"), Catch::Contains("patience"));
  CHECK(parse("max_input_size=-1").max_input_length == 0);  // the whole input, as T2T
  const auto beams = parse("return_beams=true,beam_size=5,batch_size=7,max_input_size=50");
  CHECK(beams.search.num_return == 5);
  CHECK_FALSE(beams.search.stop_early);
  CHECK(beams.batch_size == 7);
  CHECK(beams.max_input_length == 50);
  CHECK_THROWS_WITH(parse("eos_penalty=0.5"), Catch::Contains("eos_penalty"));
  CHECK_THROWS_WITH(parse("beam_size=0"), Catch::Contains("beam_size"));
  CHECK_THROWS_AS(parse("no_such_key=1"), t2t::Error);
}

TEST_CASE("BLEU report checks line counts", "[decode]") {
  CHECK_THROWS_WITH(t2t::bleu_report({"a", "b"}, {{"a"}}, {"--decode_reference=ref.txt"}),
                    Catch::Contains("--decode_reference=ref.txt has 1 lines"));
  const auto report = t2t::bleu_report({"the cat sat on the mat"}, {{"the cat sat on the mat"}}, {"ref"});
  CHECK_THAT(report, Catch::StartsWith("BLEU = 100.00"));
}

TEST_CASE("batches decoded side by side give what one at a time gives", "[decode]") {
  std::vector<std::vector<int64_t>> sources;
  auto bytes = std::make_shared<t2t::ByteTextEncoder>();
  for (int i = 0; i < 23; ++i) {
    auto ids = bytes->encode("line " + std::to_string(i) + std::string(i % 7, 'x'));
    ids.push_back(t2t::kEosId);
    sources.push_back(ids);
  }
  sources.push_back({});  // an empty line among them
  std::shared_ptr<EchoModel> one_model, many_model;
  auto one = make_decoder("batch_size=3,beam_size=2", &one_model, 1);
  auto many = make_decoder("batch_size=3,beam_size=2", &many_model, 3);
  const auto a = one.translate(sources), b = many.translate(sources);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].texts == b[i].texts);
    CHECK(a[i].scores == b[i].scores);
  }
  CHECK(b[3].texts[0] == "line 3xxx");
  CHECK(many_model->batches == one_model->batches);
  CHECK(many.counts().output_tokens == one.counts().output_tokens);
  CHECK(many.counts().input_tokens == one.counts().input_tokens);
}

TEST_CASE("for_each_batch runs every batch once and passes on the first error", "[decode]") {
  CHECK(t2t::parallel_batches(0, 4, 10) == 4);
  CHECK(t2t::parallel_batches(0, 4, 2) == 2);
  CHECK(t2t::parallel_batches(3, 1, 10) == 3);
  CHECK(t2t::parallel_batches(0, 0, 0) == 1);
  std::vector<std::atomic<int>> seen(50);
  t2t::for_each_batch(50, 3, 3, [&](int64_t j) { ++seen[j]; });
  for (const auto& s : seen) CHECK(s == 1);
  CHECK_THROWS_WITH(t2t::for_each_batch(50, 3, 3,
                                        [&](int64_t j) {
                                          if (j == 7) throw t2t::Error("batch 7 failed");
                                        }),
                    "batch 7 failed");
}
