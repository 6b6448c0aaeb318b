// A fake model for search tests: its next-token distribution is a fixed
// pseudo-random function of the input and the whole prefix, so that a
// search's result can be checked against a plain statement of it.
#pragma once

#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"

namespace t2t::test {

inline uint64_t mix(uint64_t h, int64_t id) {
  return t2t::splitmix64_mix(h * t2t::kGoldenGamma + static_cast<uint64_t>(id) +
                             0x632BE59BD9B4E019ULL);
}

// ---- a model whose distribution depends on the whole prefix ----------------

struct PrefixState : t2t::DecoderState {
  torch::Tensor hash;     // [rows] int64: the input and every id fed so far
  torch::Tensor lengths;  // [rows] int64: the input's ids, EOS included
};

class PrefixModel : public t2t::T2TModel {
 public:
  PrefixModel(int64_t vocab, uint64_t seed, double eos_bias)
      : vocab_(vocab), seed_(seed), eos_bias_(eos_bias) {}

  // The logits after feeding `fed` (the first step's 0, then the prefix).
  std::vector<float> logits(uint64_t hash) const {
    std::vector<float> out(vocab_);
    for (int64_t v = 0; v < vocab_; ++v) {
      const double u = static_cast<double>(mix(hash ^ seed_, v) >> 11) / 9007199254740992.0;
      out[v] = static_cast<float>(6.0 * (u - 0.5) + (v == t2t::kEosId ? eos_bias_ : 0.0));
    }
    return out;
  }
  uint64_t input_hash(const std::vector<int64_t>& input) const {
    uint64_t h = seed_;
    for (int64_t id : input) h = mix(h, id);
    return h;
  }
  // log p(. | input, prefix) in double.
  std::vector<double> log_probs(const std::vector<int64_t>& input,
                                const std::vector<int64_t>& prefix) const {
    uint64_t h = mix(input_hash(input), 0);
    for (int64_t id : prefix) h = mix(h, id);
    const auto l = logits(h);
    double mx = *std::max_element(l.begin(), l.end()), sum = 0;
    for (float x : l) sum += std::exp(x - mx);
    std::vector<double> out;
    for (float x : l) out.push_back(x - mx - std::log(sum));
    return out;
  }

  torch::Tensor forward(const torch::Tensor&, const torch::Tensor&) override {
    throw t2t::Error("PrefixModel decodes only");
  }
  std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor& inputs) override {
    auto state = std::make_unique<PrefixState>();
    state->encoder_output = inputs.to(torch::kFloat).unsqueeze(2);
    state->encoder_padding = inputs.eq(0);
    std::vector<int64_t> hashes;
    for (int64_t r = 0; r < inputs.size(0); ++r) {
      std::vector<int64_t> row;
      for (int64_t c = 0; c < inputs.size(1); ++c)
        if (inputs[r][c].item<int64_t>() != 0) row.push_back(inputs[r][c].item<int64_t>());
      hashes.push_back(static_cast<int64_t>(input_hash(row)));
    }
    state->hash = torch::tensor(hashes, torch::kLong);
    state->lengths = inputs.ne(0).sum(1).to(torch::kLong);
    return state;
  }
  torch::Tensor decode_step(t2t::DecoderState& s, const torch::Tensor& last_ids) override {
    auto& state = dynamic_cast<PrefixState&>(s);
    const int64_t rows = last_ids.size(0);
    REQUIRE(state.hash.size(0) == rows);
    rows_per_step.push_back(rows);
    auto out = torch::empty({rows, vocab_}, torch::kFloat);
    for (int64_t r = 0; r < rows; ++r) {
      const uint64_t h = mix(static_cast<uint64_t>(state.hash[r].item<int64_t>()),
                             last_ids[r].item<int64_t>());
      state.hash[r] = static_cast<int64_t>(h);
      const auto l = logits(h);
      for (int64_t v = 0; v < vocab_; ++v) out[r][v] = l[v];
    }
    if (state.probe) {
      // All the attention on one input position, a function of the
      // history: carried with the wrong hypothesis, it shows.
      state.attention = torch::zeros({rows, state.encoder_padding.size(1)}, torch::kFloat);
      for (int64_t r = 0; r < rows; ++r)
        state.attention[r][attended(static_cast<uint64_t>(state.hash[r].item<int64_t>()),
                                    state.lengths[r].item<int64_t>())] = 1.0f;
    }
    ++state.length;
    return out;
  }
  void reorder_state(t2t::DecoderState& s, const torch::Tensor& index) override {
    T2TModel::reorder_state(s, index);
    auto& state = dynamic_cast<PrefixState&>(s);
    state.hash = state.hash.index_select(0, index);
    state.lengths = state.lengths.index_select(0, index);
  }
  bool reports_attention() const override { return true; }

  // The input position attended after a history of hash `h`.
  static int64_t attended(uint64_t h, int64_t input_length) {
    return static_cast<int64_t>((h >> 7) % static_cast<uint64_t>(input_length));
  }
  // Per step of `ids` (then EOS when `finished`), the position attended.
  std::vector<int64_t> attended_positions(const std::vector<int64_t>& input,
                                          const std::vector<int64_t>& ids, bool finished) const {
    std::vector<int64_t> out;
    uint64_t h = mix(input_hash(input), 0);
    out.push_back(attended(h, static_cast<int64_t>(input.size())));
    std::vector<int64_t> fed = ids;
    if (!finished && !fed.empty()) fed.pop_back();  // the last id's step is its own
    for (int64_t id : fed) {
      h = mix(h, id);
      out.push_back(attended(h, static_cast<int64_t>(input.size())));
    }
    return out;
  }

  std::vector<int64_t> rows_per_step;

 private:
  int64_t vocab_;
  uint64_t seed_;
  double eos_bias_;
};


}  // namespace t2t::test
