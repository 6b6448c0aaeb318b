// The CPU kernels of one decoding step (t2t/kernels/decode_attention.h) against
// scaled_dot_product_attention, and the Transformer's slot-table caches
// against caches reordered in place.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <limits>

#include "t2t/kernels/decode_attention.h"
#include "tests/support/tensor_compare.h"
#include "tests/support/test_util.h"
#include "models/transformer.h"
#include "t2t/core/hparams.h"
#include "t2t/search/beam_search.h"
#include "t2t/text/text_encoder.h"

using t2t::test::max_diff;

namespace {

// A small Transformer without dropout, so that train() and eval() compute
// the same function by different paths; vocabulary of 30.
std::shared_ptr<t2t::Transformer> dropout_free_transformer(uint64_t seed) {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", 32);
  hp.set("filter_size", 64);
  hp.set("num_heads", 4);
  for (const char* key : {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"})
    hp.set(key, 0.0);
  torch::manual_seed(seed);
  return std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{30, 30, false});
}

}  // namespace

TEST_CASE("attend_slots equals attention over the gathered history", "[decode_attention]") {
  torch::manual_seed(3);
  // Depths of 16s take the vectorized kernel where the CPU has one (value
  // depths past 128 its loop without registers for the whole output);
  // lengths past 16 its scores in several blocks of 16.
  for (const auto& [depth, value_depth] : std::vector<std::pair<int64_t, int64_t>>{
           {12, 10}, {32, 32}, {64, 48}, {16, 160}}) {
  INFO("depth " << depth << ", value depth " << value_depth);
  const int64_t rows = 6, heads = 4, num_slots = 9, capacity = 40;
  const auto keys = torch::randn({num_slots, heads, capacity, depth});
  const auto values = torch::randn({num_slots, heads, capacity, value_depth});
  const auto slots = torch::randint(0, num_slots, {rows, capacity}, torch::kLong);
  // Queries as a strided view, as the fused projection hands them over.
  const auto q = torch::randn({rows, 3 * heads * depth}).narrow(1, 0, heads * depth).view({rows, heads, depth});
  const double scale = 0.3;
  for (int64_t length : {1, 5, 16, 17, 40}) {
    INFO("length " << length);
    const auto got = t2t::attend_slots(q, keys, values, slots, length, scale);
    REQUIRE(got.sizes() == torch::IntArrayRef({rows, heads * value_depth}));
    // The history of each row, gathered by hand.
    std::vector<torch::Tensor> k_rows, v_rows;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<torch::Tensor> ks, vs;
      for (int64_t p = 0; p < length; ++p) {
        const int64_t s = slots[r][p].item<int64_t>();
        ks.push_back(keys[s].select(1, p));
        vs.push_back(values[s].select(1, p));
      }
      k_rows.push_back(torch::stack(ks, 1));  // [heads, length, depth]
      v_rows.push_back(torch::stack(vs, 1));
    }
    const auto want = torch::scaled_dot_product_attention(q.unsqueeze(2), torch::stack(k_rows),
                                                          torch::stack(v_rows), {}, 0.0, false, scale)
                          .reshape({rows, heads * value_depth});
    CHECK(max_diff(got, want) < 1e-5);
    // Caches in bfloat16 are read as the float32 values they hold, exactly.
    const auto k16 = keys.to(torch::kBFloat16), v16 = values.to(torch::kBFloat16);
    CHECK(torch::equal(t2t::attend_slots(q, k16, v16, slots, length, scale),
                       t2t::attend_slots(q, k16.to(torch::kFloat), v16.to(torch::kFloat), slots,
                                         length, scale)));
  }
  CHECK_THROWS_WITH(t2t::attend_slots(q, keys.to(torch::kBFloat16), values, slots, 3, scale),
                    Catch::Contains("both float32 or both bfloat16"));
  auto bad = slots.clone();
  bad[2][0] = num_slots;
  CHECK_THROWS(t2t::attend_slots(q, keys, values, bad, 3, scale));
  }
}

TEST_CASE("store_position writes a step's keys as a copy into the cache would",
          "[decode_attention]") {
  torch::manual_seed(6);
  const int64_t rows = 5, heads = 3, depth = 16, slots = 7, capacity = 6;
  // A strided view, as the fused projection hands the keys over.
  auto x = torch::randn({rows, 4 * heads * depth}).narrow(1, heads * depth, heads * depth)
               .view({rows, heads, depth});
  x[1][2][3] = std::numeric_limits<float>::quiet_NaN();
  x[2][0][0] = 1.00390625f;  // halfway between two bfloat16 values: to the even one
  for (const auto type : {torch::kFloat, torch::kBFloat16}) {
    INFO(type);
    const auto cache = torch::randn({slots, heads, capacity, depth}).to(type);
    auto want = cache.clone();
    want.narrow(0, 0, rows).narrow(2, 4, 1).copy_(x.unsqueeze(2));
    t2t::store_position(cache, 4, x);
    CHECK(torch::equal(cache.isnan(), want.isnan()));
    CHECK(torch::equal(cache.nan_to_num(), want.nan_to_num()));
  }
  const auto cache = torch::zeros({slots, heads, capacity, depth});
  CHECK_THROWS_WITH(t2t::store_position(cache, capacity, x), Catch::Contains("position"));
  CHECK_THROWS(t2t::store_position(cache.transpose(1, 2), 0, x));
}

TEST_CASE("attend_memory equals masked attention with shared memory rows", "[decode_attention]") {
  torch::manual_seed(4);
  for (const int64_t depth : {8, 32}) {
  INFO("depth " << depth);
  const int64_t memory_rows = 3, group = 4, heads = 2, length = 7;
  const int64_t rows = memory_rows * group;
  // Keys and values as views of one projection, as the layer makes them.
  const auto kv = torch::randn({memory_rows, length, 2 * heads * depth});
  const auto keys = kv.narrow(2, 0, heads * depth).view({memory_rows, length, heads, depth}).transpose(1, 2);
  const auto values =
      kv.narrow(2, heads * depth, heads * depth).view({memory_rows, length, heads, depth}).transpose(1, 2);
  auto allowed = torch::ones({memory_rows, length}, torch::kBool);
  allowed[0].narrow(0, 5, 2).fill_(false);
  allowed[2].narrow(0, 1, 6).fill_(false);
  const auto q = torch::randn({rows, heads, depth});
  const auto got = t2t::attend_memory(q, keys, values, allowed, group, 0.25);
  const auto per_row = [&](const torch::Tensor& t) { return t.repeat_interleave(group, 0); };
  const auto want = torch::scaled_dot_product_attention(
                        q.unsqueeze(2), per_row(keys), per_row(values),
                        per_row(allowed).view({rows, 1, 1, length}), 0.0, false, 0.25)
                        .reshape({rows, heads * depth});
  CHECK(max_diff(got, want) < 1e-5);
  const auto k16 = keys.to(torch::kBFloat16), v16 = values.to(torch::kBFloat16);
  CHECK(torch::equal(t2t::attend_memory(q, k16, v16, allowed, group, 0.25),
                     t2t::attend_memory(q, k16.to(torch::kFloat), v16.to(torch::kFloat), allowed,
                                        group, 0.25)));
  CHECK_THROWS(t2t::attend_memory(q, keys, values, allowed, 3, 0.25));
  }
}

TEST_CASE("slot-table caches decode as caches reordered in place", "[decode_attention][decode]") {
  auto model = dropout_free_transformer(9);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.mul_(3.0);  // fewer near-ties
  }
  auto inputs = torch::randint(2, 30, {7, 9}, torch::kLong);
  for (int64_t r = 0; r < inputs.size(0); ++r) {
    inputs[r][8 - r] = t2t::kEosId;
    if (r > 0) inputs[r].narrow(0, 9 - r, r).zero_();
  }
  t2t::SearchOptions o;
  o.beam_size = 4;
  o.extra_length = 20;  // past the first cache capacities (8, then 16)
  o.num_return = 4;
  o.stop_early = false;
  // Eval mode uses the slot tables; train mode (no dropout here, so the same
  // function) reorders the caches in place.
  model->eval();
  const auto slotted = t2t::beam_search(*model, inputs, o);
  model->train();
  const auto reordered = t2t::beam_search(*model, inputs, o);
  REQUIRE(slotted.size() == reordered.size());
  for (size_t s = 0; s < slotted.size(); ++s) {
    REQUIRE(slotted[s].size() == reordered[s].size());
    for (size_t k = 0; k < slotted[s].size(); ++k) {
      INFO("sentence " << s << ", hypothesis " << k);
      CHECK(slotted[s][k].ids == reordered[s][k].ids);
      // The two modes run different kernels (attention, layer norm), whose
      // sums round differently, and differently again on CPUs without
      // AVX-512 (AVX2 clones): over 20-odd steps of a model with weights
      // tripled, scores part by up to ~1e-4 of their size.
      CHECK(slotted[s][k].score == Approx(reordered[s][k].score).epsilon(1e-3));
    }
  }
}

TEST_CASE("slot tables follow the batch as it grows and shrinks mid-sentence",
          "[decode_attention][decode]") {
  auto model = dropout_free_transformer(10);
  const auto inputs = torch::tensor({{5, 6, 7, 1}, {8, 9, 1, 0}}, torch::kLong);
  auto run = [&](bool slotted) {
    slotted ? model->eval() : model->train();
    std::vector<torch::Tensor> out;
    auto state = model->start_decoding(inputs);
    auto step = [&](std::vector<int64_t> ids) {
      out.push_back(model->decode_step(*state, torch::tensor(ids, torch::kLong)));
    };
    for (int t = 0; t < 3; ++t) step({3 + t, 10 + t});
    model->reorder_state(*state, torch::tensor({0, 0, 1, 1, 1}, torch::kLong));  // grows
    step({4, 5, 6, 7, 8});
    model->reorder_state(*state, torch::tensor({4, 1, 3, 0, 2}, torch::kLong));  // permutes
    step({9, 10, 11, 12, 13});
    model->reorder_state(*state, torch::tensor({2, 2}, torch::kLong));  // shrinks
    for (int t = 0; t < 15; ++t) step({14, 15});  // past the first capacity
    return out;
  };
  const auto a = run(true), b = run(false);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("step " << i);
    CHECK(max_diff(a[i], b[i]) < 1e-5);
  }
}

TEST_CASE("each attention kernel gives the bits of the others of its kind", "[decode_attention]") {
  // avx512 and avx2 give the same bits; plain sums each score's lanes in
  // another order, so it agrees up to rounding.
  const auto kernels = t2t::decode_attention_kernels();
  REQUIRE(kernels.back() == "plain");
  if (kernels.size() < 2) T2T_SKIP("no vector kernel on this CPU (neither AVX-512 nor AVX2)");
  torch::manual_seed(5);
  struct Unpin {
    ~Unpin() { t2t::pin_decode_attention_kernel(""); }
  } unpin;
  for (const auto& [depth, value_depth] :
       std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {32, 32}, {64, 64}, {16, 160}, {48, 80}}) {
    const int64_t rows = 5, heads = 3, num_slots = 7, capacity = 30, length = 21;
    const auto keys = torch::randn({num_slots, heads, capacity, depth});
    const auto values = torch::randn({num_slots, heads, capacity, value_depth});
    const auto slots = torch::randint(0, num_slots, {rows, capacity}, torch::kLong);
    const auto q = torch::randn({rows, heads, depth});
    const auto memory_keys = torch::randn({rows, heads, length, depth});
    const auto memory_values = torch::randn({rows, heads, length, value_depth});
    auto allowed = torch::ones({rows, length}, torch::kBool);
    allowed.narrow(1, 15, 6).zero_();
    for (const bool bf16 : {false, true}) {
      const auto type = bf16 ? torch::kBFloat16 : torch::kFloat;
      std::vector<std::pair<torch::Tensor, torch::Tensor>> got;
      for (const auto& kernel : kernels) {
        t2t::pin_decode_attention_kernel(kernel);
        for (const int64_t n : {1, 8, 9, 21})
          got.emplace_back(t2t::attend_slots(q, keys.to(type), values.to(type), slots, n, 0.3),
                           t2t::attend_memory(q, memory_keys.to(type), memory_values.to(type),
                                              allowed, 1, 0.3));
      }
      const size_t per = got.size() / kernels.size();
      for (size_t k = 1; k < kernels.size(); ++k)
        for (size_t i = 0; i < per; ++i) {
          INFO(kernels[k] << " against " << kernels[0] << ", depth " << depth << ", value depth "
                          << value_depth << (bf16 ? ", bfloat16" : ", float32") << ", case " << i);
          const auto& [slots_0, memory_0] = got[i];
          const auto& [slots_k, memory_k] = got[k * per + i];
          if (kernels[k] == "plain") {
            CHECK(torch::allclose(slots_k, slots_0, 1e-5, 1e-6));
            CHECK(torch::allclose(memory_k, memory_0, 1e-5, 1e-6));
          } else {
            CHECK(torch::equal(slots_k, slots_0));
            CHECK(torch::equal(memory_k, memory_0));
          }
        }
    }
  }
  CHECK_THROWS_WITH(t2t::pin_decode_attention_kernel("avx1024"), Catch::Contains("no kernel"));
}
