// Sampling in greedy decoding (T2T's sampling_method=random): the sampler on
// hand-made logits (its distribution, temperature, top-k, the argmax
// limits), the search's draws on a model whose answers are known, the
// hparams that choose it, and t2t-decoder / t2t-serve on a trained model.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "t2t/model/common_hparams.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/decode_options.h"
#include "t2t/search/sampling.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/sample_run.h"
#include "tests/support/test_util.h"

using t2t::SamplingOptions;
using t2t::SearchOptions;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

SamplingOptions random_sampling(double temperature, int64_t top_k = -1, uint64_t seed = 1) {
  SamplingOptions o;
  o.random = true;
  o.temperature = temperature;
  o.keep_top_k = top_k;
  o.seed = seed;
  return o;
}

// How often each id is drawn from one row of logits when the uniform
// numbers are n evenly spaced points of [0, 1): exactly n * probability,
// up to one draw per id.
std::vector<double> grid_frequencies(const std::vector<double>& logits,
                                     const SamplingOptions& options, int64_t n = 10000) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  const auto row = torch::tensor(logits, torch::kDouble).to(torch::kFloat).unsqueeze(0);
  const auto uniforms = (torch::arange(n, torch::kDouble) + 0.5) / static_cast<double>(n);
  const auto ids = t2t::sample_ids(row.expand({n, vocab}), options, uniforms);
  std::vector<double> freq(vocab, 0.0);
  for (int64_t i = 0; i < n; ++i) freq[ids[i].item<int64_t>()] += 1.0 / n;
  return freq;
}

// A model whose next-token logits are fixed per sentence: row b of the
// input gets the logits table[input[b][0]] at every step. What a sampled
// sentence must be is then a plain function of the uniform numbers.
class FixedModel : public t2t::T2TModel {
 public:
  explicit FixedModel(torch::Tensor table) : table_(std::move(table)) {}
  torch::Tensor forward(const torch::Tensor&, const torch::Tensor&) override {
    throw t2t::Error("FixedModel decodes only");
  }
  std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor& inputs) override {
    auto state = std::make_unique<t2t::DecoderState>();
    state->encoder_output = table_.index_select(0, inputs.select(1, 0)).unsqueeze(1);
    state->encoder_padding = inputs.eq(0);
    return state;
  }
  torch::Tensor decode_step(t2t::DecoderState& state, const torch::Tensor&) override {
    ++state.length;
    return state.encoder_output.squeeze(1);
  }

 private:
  torch::Tensor table_;  // [first input id, vocab]
};

// What greedy sampling must give for a sentence with fixed `logits` drawing
// as `key`: ids until EOS or `decode_length` steps, and their log-probability.
std::vector<int64_t> expected_sample(const torch::Tensor& logits, const SamplingOptions& o,
                                     int64_t key, int64_t decode_length, double* score) {
  std::vector<int64_t> ids;
  *score = 0;
  const auto lp = torch::log_softmax(logits.to(torch::kFloat), -1);
  for (int64_t step = 0; step < decode_length; ++step) {
    const auto u = torch::tensor({t2t::sample_uniform(o.seed, key, step)}, torch::kDouble);
    const int64_t id = t2t::sample_ids(logits.unsqueeze(0), o, u)[0].item<int64_t>();
    *score += lp[id].item<double>();
    if (id == t2t::kEosId) break;
    ids.push_back(id);
  }
  return ids;
}

torch::Tensor fixed_table(int64_t rows, int64_t vocab, uint64_t seed) {
  torch::manual_seed(seed);
  auto table = torch::randn({rows, vocab}) * 1.5;
  table.select(1, t2t::kPadId).fill_(-1e9);  // never padding
  table.select(1, t2t::kEosId).add_(-1.0);   // sentences of a few tokens
  return table;
}

}  // namespace

TEST_CASE("sampler: each id is drawn with its softmax probability", "[sampling]") {
  const std::vector<double> p = {0.1, 0.2, 0.3, 0.4};
  std::vector<double> logits;
  for (double x : p) logits.push_back(std::log(x));
  const auto freq = grid_frequencies(logits, random_sampling(1.0));
  for (size_t i = 0; i < p.size(); ++i) CHECK(freq[i] == Approx(p[i]).margin(2e-4));

  // Temperature 0.5 squares the probabilities before renormalising:
  // 1, 4, 9, 16 over 30.
  const auto sharp = grid_frequencies(logits, random_sampling(0.5));
  for (size_t i = 0; i < p.size(); ++i)
    CHECK(sharp[i] == Approx(p[i] * p[i] / 0.3).margin(2e-4));

  // Top 2: only the 0.3 and the 0.4, renormalised.
  const auto top2 = grid_frequencies(logits, random_sampling(1.0, 2));
  CHECK(top2[0] == 0.0);
  CHECK(top2[1] == 0.0);
  CHECK(top2[2] == Approx(3.0 / 7).margin(2e-4));
  CHECK(top2[3] == Approx(4.0 / 7).margin(2e-4));

  // Top k at or past the vocabulary keeps every id.
  const auto all = grid_frequencies(logits, random_sampling(1.0, 4));
  for (size_t i = 0; i < p.size(); ++i) CHECK(all[i] == Approx(p[i]).margin(2e-4));
}

TEST_CASE("sampler: hashed uniforms draw with the softmax's frequencies", "[sampling]") {
  const std::vector<double> p = {0.05, 0.15, 0.3, 0.5};
  std::vector<double> logits;
  for (double x : p) logits.push_back(std::log(x));
  const int64_t n = 20000;
  std::vector<double> u;
  for (int64_t k = 0; k < n; ++k) u.push_back(t2t::sample_uniform(11, k, 3));
  CHECK(*std::min_element(u.begin(), u.end()) >= 0.0);
  CHECK(*std::max_element(u.begin(), u.end()) < 1.0);
  const auto row = torch::tensor(logits, torch::kDouble).to(torch::kFloat).unsqueeze(0);
  const auto ids = t2t::sample_ids(row.expand({n, 4}), random_sampling(1.0),
                                   torch::tensor(u, torch::kDouble));
  std::vector<double> freq(4, 0.0);
  for (int64_t i = 0; i < n; ++i) freq[ids[i].item<int64_t>()] += 1.0 / n;
  // Four standard deviations of a frequency over 20000 draws: at most 0.0142.
  for (size_t i = 0; i < p.size(); ++i) CHECK(freq[i] == Approx(p[i]).margin(0.015));
}

TEST_CASE("sampler: temperature 0, top 1 and argmax all pick the likeliest id", "[sampling]") {
  torch::manual_seed(3);
  const auto logits = torch::randn({64, 50}) * 3;
  const auto want = logits.argmax(1);
  const auto u = torch::rand({64}, torch::kDouble);
  CHECK(torch::equal(t2t::sample_ids(logits, random_sampling(0.0), u), want));
  CHECK(torch::equal(t2t::sample_ids(logits, random_sampling(1.0, 1), u), want));
  CHECK(torch::equal(t2t::sample_ids(logits, random_sampling(5.0, 1), u), want));
  CHECK(torch::equal(t2t::sample_ids(logits, SamplingOptions{}, torch::Tensor()), want));
  // A very low temperature leaves nothing but the likeliest id.
  CHECK(torch::equal(t2t::sample_ids(logits, random_sampling(1e-4), u), want));
}

TEST_CASE("sampler: an id of probability 0 is never drawn, even at u just below 1",
          "[sampling]") {
  const float ninf = -std::numeric_limits<float>::infinity();
  const auto logits = torch::tensor({0.0f, 0.0f, ninf, 1.0f, ninf}).unsqueeze(0).expand({3, 5});
  const auto u = torch::tensor({0.0, 0.5, 1.0 - 0x1.0p-53}, torch::kDouble);
  const auto ids = t2t::sample_ids(logits, random_sampling(1.0), u);
  CHECK(ids[0].item<int64_t>() == 0);
  CHECK(ids[1].item<int64_t>() == 3);
  CHECK(ids[2].item<int64_t>() == 3);
}

TEST_CASE("sample_uniform depends on the seed, the sentence and the step only", "[sampling]") {
  CHECK(t2t::sample_uniform(5, 7, 2) == t2t::sample_uniform(5, 7, 2));
  std::set<double> seen;
  for (uint64_t seed : {0u, 1u})
    for (int64_t key : {0, 1, 2})
      for (int64_t step : {0, 1, 2}) seen.insert(t2t::sample_uniform(seed, key, step));
  CHECK(seen.size() == 18);
}

TEST_CASE("greedy sampling draws each sentence's ids from its own numbers", "[sampling]") {
  const int64_t vocab = 12;
  const auto table = fixed_table(6, vocab, 5);
  FixedModel model(table);
  model.eval();
  SearchOptions o;
  o.beam_size = 1;
  o.extra_length = 8;
  o.sampling = random_sampling(1.3, -1, 77);
  const std::vector<std::vector<int64_t>> rows = {{2, 3, t2t::kEosId}, {4, t2t::kEosId},
                                                  {5, 2, 3, 4, t2t::kEosId}, {3, t2t::kEosId}};
  auto batch = torch::zeros({4, 5}, torch::kLong);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) batch[r][c] = rows[r][c];
  const std::vector<int64_t> keys = {10, 11, 12, 13};
  const auto got = t2t::beam_search(model, batch, o, nullptr, keys);
  REQUIRE(got.size() == 4);
  std::set<std::vector<int64_t>> distinct;
  for (size_t r = 0; r < rows.size(); ++r) {
    double score = 0;
    const auto want = expected_sample(table[rows[r][0]], o.sampling, keys[r],
                                      static_cast<int64_t>(rows[r].size()) + o.extra_length, &score);
    INFO("sentence " << r);
    CHECK(got[r][0].ids == want);
    CHECK(got[r][0].score == Approx(score).epsilon(1e-5));
    distinct.insert(got[r][0].ids);
  }
  CHECK(distinct.size() > 1);

  // One sentence alone, keyed as before: the same draws as in the batch.
  const auto alone = t2t::beam_search(model, batch.slice(0, 2, 3), o, nullptr, {12});
  CHECK(alone[0][0].ids == got[2][0].ids);

  // The same seed again: the same; another seed: another sample somewhere.
  CHECK(t2t::beam_search(model, batch, o, nullptr, keys)[1][0].ids == got[1][0].ids);
  o.sampling.seed = 78;
  const auto other = t2t::beam_search(model, batch, o, nullptr, keys);
  bool differs = false;
  for (size_t r = 0; r < rows.size(); ++r) differs = differs || other[r][0].ids != got[r][0].ids;
  CHECK(differs);
}

TEST_CASE("greedy sampling at temperature 0 or top 1 is greedy decoding", "[sampling]") {
  const auto table = fixed_table(6, 10, 9);
  FixedModel model(table);
  const auto batch = torch::tensor({2, 5, 3, 4}, torch::kLong).unsqueeze(1);
  SearchOptions o;
  o.beam_size = 1;
  o.extra_length = 6;
  const auto greedy = t2t::beam_search(model, batch, o);
  for (const auto& sampling : {random_sampling(0.0), random_sampling(2.0, 1)}) {
    o.sampling = sampling;
    const auto sampled = t2t::beam_search(model, batch, o);
    for (size_t r = 0; r < greedy.size(); ++r) {
      CHECK(sampled[r][0].ids == greedy[r][0].ids);
      CHECK(sampled[r][0].score == Approx(greedy[r][0].score).epsilon(1e-6));
    }
  }
}

TEST_CASE("beam search refuses random sampling", "[sampling]") {
  FixedModel model(fixed_table(6, 10, 9));
  SearchOptions o;
  o.beam_size = 2;
  o.sampling = random_sampling(1.0);
  const auto batch = torch::tensor({2, 3}, torch::kLong).unsqueeze(1);
  CHECK_THROWS_WITH(t2t::beam_search(model, batch, o), Catch::Contains("greedily only"));
  CHECK_THROWS_WITH(t2t::check_sampling_search(o), Catch::Contains("beam_size=1"));
  o.beam_size = 1;
  CHECK_NOTHROW(t2t::check_sampling_search(o));
}

TEST_CASE("sampling options come from the model hparams, checked", "[sampling]") {
  t2t::HParams hp = t2t::basic_params1();
  auto o = t2t::sampling_options(hp, 9);
  CHECK_FALSE(o.random);
  CHECK(o.temperature == 1.0);
  CHECK(o.keep_top_k == -1);
  CHECK(o.seed == 9);

  hp.parse("sampling_method=random,sampling_temp=0.7,sampling_keep_top_k=40");
  o = t2t::sampling_options(hp, 3);
  CHECK(o.random);
  CHECK(o.temperature == 0.7);
  CHECK(o.keep_top_k == 40);
  CHECK(o.draws());

  auto bad = [&](const std::string& overrides) {
    t2t::HParams h = t2t::basic_params1();
    h.parse(overrides);
    return h;
  };
  CHECK_THROWS_WITH(t2t::sampling_options(bad("sampling_temp=-0.5"), 0),
                    Catch::Contains("sampling_temp"));
  CHECK_THROWS_WITH(t2t::sampling_options(bad("sampling_method=nucleus"), 0),
                    Catch::Contains("sampling_method=nucleus") && Catch::Contains("argmax, random"));
  CHECK_THROWS_WITH(t2t::sampling_options(bad("sampling_keep_top_k=0"), 0),
                    Catch::Contains("sampling_keep_top_k"));

  // A run saved before sampling_keep_top_k existed decodes with its default.
  t2t::HParams old;
  old.add("sampling_method", "random");
  old.add("sampling_temp", 0.0);
  o = t2t::sampling_options(old, 0);
  CHECK(o.keep_top_k == -1);
  CHECK_FALSE(o.draws());
}

TEST_CASE("t2t-decoder samples reproducibly by --random_seed, and t2t-serve refuses sampling",
          "[sampling][e2e]") {
  static t2t::test::SampleRun run("sampling_e2e");
  INFO(run.log);
  REQUIRE(run.ok);
  TempDir dir("sampling_e2e_out");
  const std::string in = dir / "in.en";
  {
    std::ofstream out(in);
    const auto dev = read_lines(t2t::test::source_dir() + "/data/sample/dev.en");
    for (size_t i = 0; i < 12 && i < dev.size(); ++i) out << dev[i] << "\n";
  }
  auto decode = [&](const std::string& name, const std::string& extra) {
    const auto r = run_command(run.decoder("--decode_from_file=" + in + " --decode_to_file=" +
                                           (dir / name) + " " + extra));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return read_lines(dir / name);
  };
  const std::string sample = "--hparams=sampling_method=random,sampling_temp=1.0 ";
  const auto seed3 = decode("a.zh", sample + "--decode_hparams=beam_size=1,extra_length=5 "
                                             "--random_seed=3");
  REQUIRE(seed3.size() == 12);
  // The same seed in other batches and threads: the same samples.
  CHECK(decode("b.zh", sample + "--decode_hparams=beam_size=1,extra_length=5,batch_size=5 "
                                "--random_seed=3 --threads=1") == seed3);
  CHECK(decode("c.zh", sample + "--decode_hparams=beam_size=1,extra_length=5 "
                                "--random_seed=4") != seed3);
  const auto greedy = decode("g.zh", "--decode_hparams=beam_size=1,extra_length=5");
  CHECK(seed3 != greedy);
  CHECK(decode("t0.zh", "--hparams=sampling_method=random,sampling_temp=0 "
                        "--decode_hparams=beam_size=1,extra_length=5 --random_seed=3") == greedy);

  // Refused: beam search with sampling, a negative temperature, an unknown
  // method; and sampling in the server.
  auto r = run_command(run.decoder(sample + "--decode_hparams=beam_size=4 --decode_from_file=" + in +
                                   " --decode_to_file=" + (dir / "x.zh")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("greedy decoding only") &&
                           Catch::Contains("beam_size=1"));
  r = run_command(run.decoder("--hparams=sampling_temp=-1 --decode_hparams=beam_size=1 "
                              "--decode_from_file=" + in + " --decode_to_file=" + (dir / "x.zh")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("sampling_temp"));
  r = run_command(run.decoder("--hparams=sampling_method=top --decode_hparams=beam_size=1 "
                              "--decode_from_file=" + in + " --decode_to_file=" + (dir / "x.zh")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("sampling_method=top"));
  r = run_command("./t2t-serve " + run.model_flags() + " --port=0 " + sample);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("sampling_method=random is not supported by t2t-serve"));
  CHECK_FALSE(std::filesystem::exists(dir / "x.zh"));
}
