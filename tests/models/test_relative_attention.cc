// Relative position self-attention (models/relative_attention.h) against
// T2T's computation written out as T2T writes it (a gathered [queries, keys,
// depth] table of embeddings per product), and the Transformer built with
// it: teacher forcing, incremental decoding and what it must not see.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <limits>

#include "models/relative_attention.h"
#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "tests/support/tensor_compare.h"

using t2t::test::max_diff;

namespace {

// T2T's _relative_attention_inner and dot_product_attention_relative, in
// float64: logits q k^T + q E_k[buckets]^T, softmax, weights (v +
// E_v[buckets]); q already scaled.
torch::Tensor t2t_reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            const torch::Tensor& table_k, const torch::Tensor& table_v,
                            const torch::Tensor& buckets, const torch::Tensor& allowed) {
  const auto qd = q.to(torch::kDouble), kd = k.to(torch::kDouble), vd = v.to(torch::kDouble);
  const auto rk = table_k.to(torch::kDouble).index({buckets});  // [queries, keys, depth]
  const auto rv = table_v.to(torch::kDouble).index({buckets});
  auto logits = torch::matmul(qd, kd.transpose(-2, -1)) + torch::einsum("bhqd,qkd->bhqk", {qd, rk});
  if (allowed.defined())
    logits = logits.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  const auto weights = torch::softmax(logits, -1);
  return torch::matmul(weights, vd) + torch::einsum("bhqk,qkd->bhqd", {weights, rv});
}

std::shared_ptr<t2t::Transformer> relative_model(int64_t max_distance, uint64_t seed = 1) {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_relative_tiny")();
  hp.set("hidden_size", 32);
  hp.set("filter_size", 64);
  hp.set("num_heads", 2);
  hp.set("max_relative_position", max_distance);
  torch::manual_seed(seed);
  auto model = std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{40, 40, false});
  model->eval();
  return model;
}

}  // namespace

TEST_CASE("relative buckets clip the distance from query to key", "[model][relative]") {
  const auto b = t2t::relative_buckets(3, 5, 0, 2, torch::kCPU);
  // Row q: clip(k - q, -2, 2) + 2.
  const auto want = torch::tensor({2, 3, 4, 4, 4, 1, 2, 3, 4, 4, 0, 1, 2, 3, 4}).view({3, 5});
  CHECK(torch::equal(b, want));
  // One query at position 6 over 8 keys: what T2T's cache mode gives
  // (range(-length_k + 1, 1), clipped).
  CHECK(torch::equal(t2t::relative_buckets(1, 8, 6, 2, torch::kCPU),
                     torch::tensor({0, 0, 0, 0, 0, 1, 2, 3}).view({1, 8})));
  CHECK(torch::equal(t2t::relative_buckets_at(torch::tensor({6}, torch::kLong), 8, 2),
                     t2t::relative_buckets(1, 8, 6, 2, torch::kCPU)));
}

TEST_CASE("relative attention computes T2T's sums", "[model][relative]") {
  torch::manual_seed(3);
  const int64_t batch = 2, heads = 3, length = 9, depth = 4, max = 3;
  const auto q = torch::randn({batch, heads, length, depth});
  const auto k = torch::randn({batch, heads, length, depth});
  const auto v = torch::randn({batch, heads, length, depth});
  const auto table_k = torch::randn({2 * max + 1, depth});
  const auto table_v = torch::randn({2 * max + 1, depth});
  const double scale = 0.5;
  const auto buckets = t2t::relative_buckets(length, length, 0, max, torch::kCPU);
  // Padding at the end of the second row, and the decoder's causal mask.
  auto allowed = torch::ones({batch, 1, 1, length}, torch::kBool);
  allowed[1].narrow(-1, 6, 3).fill_(false);
  const auto causal = torch::ones({length, length}, torch::kBool).tril();
  for (const auto& mask : {torch::Tensor(), allowed, causal}) {
    const auto got = t2t::attend_relative(q, k, v, table_k, table_v, buckets, mask, scale, 0.0);
    const auto want = t2t_reference(q * scale, k, v, table_k, table_v, buckets, mask);
    CHECK(max_diff(got.to(torch::kDouble), want) < 1e-5);
  }
  // One query at the last position over the keys before it, as a decoding
  // step asks: the teacher-forced result's last row.
  const auto step = t2t::attend_relative(
      q.narrow(2, length - 1, 1), k, v, table_k, table_v,
      t2t::relative_buckets(1, length, length - 1, max, torch::kCPU), torch::Tensor(), scale, 0.0);
  const auto full = t2t::attend_relative(q, k, v, table_k, table_v, buckets, causal, scale, 0.0);
  CHECK(max_diff(step, full.narrow(2, length - 1, 1)) < 1e-5);
  // Gradients reach both tables.
  const auto tk = table_k.clone().requires_grad_(), tv = table_v.clone().requires_grad_();
  t2t::attend_relative(q, k, v, tk, tv, buckets, causal, scale, 0.0).sum().backward();
  CHECK(tk.grad().abs().sum().item<double>() > 0);
  CHECK(tv.grad().abs().sum().item<double>() > 0);
}

TEST_CASE("transformer_relative: tables in self-attention only, no timing signal",
          "[model][relative]") {
  auto model = relative_model(20);
  int64_t tables = 0;
  for (const auto& p : model->named_parameters()) {
    if (p.key().find("relative_") == std::string::npos) continue;
    ++tables;
    CHECK(p.key().find(".self_attention.relative_") != std::string::npos);
    CHECK(p.value().sizes() == torch::IntArrayRef({41, 16}));
  }
  CHECK(tables == 2 * (2 + 2));  // keys and values, 2 encoder and 2 decoder layers
  // Without a timing signal or relative positions the encoder could not tell
  // the order of its inputs: here it does.
  torch::NoGradGuard no_grad;
  const auto targets = torch::tensor({{5, 6, 7, 1}}, torch::kLong);
  const auto a = model->forward(torch::tensor({{3, 4, 5, 1}}, torch::kLong), targets);
  const auto b = model->forward(torch::tensor({{5, 4, 3, 1}}, torch::kLong), targets);
  CHECK(max_diff(a, b) > 1e-4);
}

TEST_CASE("transformer_relative: incremental decoding matches teacher forcing past the clipping",
          "[model][relative]") {
  // Distances clipped at 3, 15 target positions: most pairs are clipped.
  auto model = relative_model(3);
  const auto inputs = torch::tensor({{3, 4, 5, 6, 1, 0, 0}, {9, 8, 1, 0, 0, 0, 0}}, torch::kLong);
  const auto targets = torch::randint(2, 40, {2, 15}, torch::kLong);
  torch::NoGradGuard no_grad;
  const auto expected = model->forward(inputs, targets);
  auto state = model->start_decoding(inputs);
  auto last = torch::zeros({2}, torch::kLong);
  for (int64_t t = 0; t < targets.size(1); ++t) {
    INFO("position " << t);
    const auto logits = model->decode_step(*state, last);
    CHECK(max_diff(logits, expected.select(1, t)) < 1e-4);
    last = targets.select(1, t).clone();
  }
}

TEST_CASE("transformer_relative: padding and the future stay unseen", "[model][relative]") {
  auto model = relative_model(4);
  torch::NoGradGuard no_grad;
  const auto targets = torch::tensor({{7, 8, 9, 10, 1}}, torch::kLong);
  const auto base = model->forward(torch::tensor({{3, 4, 5, 1}}, torch::kLong), targets);
  const auto padded = model->forward(torch::tensor({{3, 4, 5, 1, 0, 0, 0}}, torch::kLong), targets);
  CHECK(max_diff(base, padded) < 1e-5);
  auto changed = targets.clone();
  changed[0][3] = 20;
  const auto other = model->forward(torch::tensor({{3, 4, 5, 1}}, torch::kLong), changed);
  CHECK(max_diff(base.narrow(1, 0, 4), other.narrow(1, 0, 4)) < 1e-5);
  CHECK(max_diff(base.narrow(1, 4, 1), other.narrow(1, 4, 1)) > 1e-4);
}

TEST_CASE("transformer_relative: hparams it cannot honour are refused", "[model][relative]") {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_relative_tiny")();
  hp.set("max_relative_position", 0);
  CHECK_THROWS_WITH(t2t::Transformer(hp, t2t::FeatureInfo{40, 40, false}),
                    Catch::Contains("max_relative_position=0"));
  hp = t2t::hparams_registry().get("transformer_relative_tiny")();
  hp.set("attention_value_channels", 64);
  CHECK_THROWS_WITH(t2t::Transformer(hp, t2t::FeatureInfo{40, 40, false}),
                    Catch::Contains("equal key and value depths"));
  hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("self_attention_type", "dot_product_relative_v2");
  CHECK_THROWS_WITH(t2t::Transformer(hp, t2t::FeatureInfo{40, 40, false}),
                    Catch::Contains("self_attention_type='dot_product_relative_v2'"));
  // T2T reads max_relative_position only for relative attention.
  hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("max_relative_position", 20);
  CHECK_NOTHROW(t2t::Transformer(hp, t2t::FeatureInfo{40, 40, false}));
}
