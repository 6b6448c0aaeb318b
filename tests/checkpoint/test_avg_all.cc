// Checkpoint averaging: the library against the elementwise mean, its
// refusals, and t2t-avg-all end to end on checkpoints save_checkpoint wrote.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "t2t/checkpoint/average.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "tests/support/test_util.h"

using t2t::test::ckpt;
using t2t::test::run_command;
using t2t::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Parameters, a float buffer and an integer buffer, as real models have.
struct TinyImpl : torch::nn::Module {
  explicit TinyImpl(int64_t in, torch::Dtype dtype = torch::kFloat32) {
    lin = register_module("lin", torch::nn::Linear(in, 3));
    lin->to(dtype);
    scale = register_buffer("scale", torch::ones({3}));
    count = register_buffer("count", torch::zeros({2}, torch::kInt64));
  }
  torch::nn::Linear lin{nullptr};
  torch::Tensor scale, count;
};
TORCH_MODULE(Tiny);

constexpr const char* kYaml = "hidden_size: 4\nnum_heads: 2\n";

// A checkpoint of a freshly initialised Tiny at `step`; returns its tensors.
t2t::TensorMap save_random(const std::string& dir, int64_t step, int64_t in = 4,
                           const std::string& yaml = kYaml,
                           torch::Dtype dtype = torch::kFloat32) {
  Tiny model(in, dtype);
  torch::NoGradGuard no_grad;
  model->scale.uniform_(0.5, 2.0);
  model->count.fill_(step);
  t2t::CheckpointMeta meta;
  meta.step = step;
  meta.hparams_yaml = yaml;
  t2t::save_checkpoint(dir, *model, nullptr, meta, 0);
  t2t::TensorMap out;
  for (const auto& p : model->named_parameters()) out[p.key()] = p.value().clone();
  for (const auto& b : model->named_buffers()) out[b.key()] = b.value().clone();
  return out;
}

}  // namespace

TEST_CASE("averaging two checkpoints gives the elementwise mean", "[avg_all]") {
  TempDir dir("avg_mean");
  const std::string run = dir / "run", out = dir / "avg";
  const auto a = save_random(run, 100);
  const auto b = save_random(run, 200);
  const auto result = t2t::average_checkpoints({ckpt(run, 100), ckpt(run, 200)}, out);
  CHECK(result.step == 200);
  CHECK(result.path == ckpt(out, 200));
  CHECK(result.inputs.size() == 2);

  t2t::CheckpointMeta meta;
  const auto avg = t2t::read_checkpoint_tensors(result.path, &meta);
  CHECK(meta.step == 200);
  CHECK(meta.hparams_yaml == kYaml);
  REQUIRE(avg.size() == 4);
  for (const char* name : {"lin.weight", "lin.bias", "scale"}) {
    INFO(name);
    const auto expected = ((a.at(name).to(torch::kFloat64) + b.at(name).to(torch::kFloat64)) / 2)
                              .to(torch::kFloat32);
    CHECK(avg.at(name).scalar_type() == torch::kFloat32);
    CHECK(torch::equal(avg.at(name), expected));
    CHECK_FALSE(torch::equal(avg.at(name), a.at(name)));
  }
  // Integer buffers are not averaged: the latest checkpoint's values.
  CHECK(torch::equal(avg.at("count"), torch::full({2}, 200, torch::kInt64)));
  CHECK(t2t::latest_checkpoint(out) == result.path);
  CHECK(t2t::read_file(out + "/hparams.yaml") == kYaml);

  // The decoder's path: load_checkpoint into a model of the same shape.
  Tiny fresh(4);
  CHECK(t2t::load_checkpoint(result.path, *fresh, nullptr, false).step == 200);
  CHECK(torch::equal(fresh->lin->weight, avg.at("lin.weight")));
}

TEST_CASE("averaging keeps bf16 weights bf16 and sums in float64", "[avg_all]") {
  TempDir dir("avg_bf16");
  const std::string run = dir / "run";
  std::vector<t2t::TensorMap> all;
  for (int step = 1; step <= 3; ++step) all.push_back(save_random(run, step, 4, kYaml, torch::kBFloat16));
  const auto result =
      t2t::average_checkpoints(t2t::last_checkpoints(run, 3), dir / "avg", run + "/none.yaml");
  const auto avg = t2t::read_checkpoint_tensors(result.path, nullptr);
  auto sum = all[0].at("lin.weight").to(torch::kFloat64);
  for (size_t i = 1; i < all.size(); ++i) sum += all[i].at("lin.weight").to(torch::kFloat64);
  CHECK(avg.at("lin.weight").scalar_type() == torch::kBFloat16);
  CHECK(torch::equal(avg.at("lin.weight"), (sum / 3).to(torch::kBFloat16)));
  // No hparams.yaml at the given path: the checkpoints' own hparams are written.
  CHECK(t2t::read_file(dir / "avg/hparams.yaml") == kYaml);
}

TEST_CASE("last_checkpoints takes the newest n by step", "[avg_all]") {
  TempDir dir("avg_last");
  for (int64_t step : {5, 40, 300}) save_random(dir.path.string(), step);
  CHECK(t2t::last_checkpoints(dir.path.string(), 2) ==
        std::vector<std::string>{ckpt(dir.path.string(), 40), ckpt(dir.path.string(), 300)});
  CHECK(t2t::last_checkpoints(dir.path.string(), 8).size() == 3);
  CHECK_THROWS_WITH(t2t::last_checkpoints(dir / "nothing", 2), Catch::Contains("not a directory"));
  fs::create_directories(dir / "empty");
  CHECK_THROWS_WITH(t2t::last_checkpoints(dir / "empty", 2), Catch::Contains("holds no checkpoint"));
  CHECK_THROWS_AS(t2t::last_checkpoints(dir.path.string(), 0), t2t::Error);
}

TEST_CASE("averaging refuses checkpoints of different models or runs", "[avg_all]") {
  TempDir dir("avg_refuse");
  const std::string a = dir / "a", b = dir / "b", c = dir / "c";
  save_random(a, 1);
  save_random(b, 2, /*in=*/5);
  save_random(c, 3, 4, "hidden_size: 8\nnum_heads: 2\n");
  CHECK_THROWS_WITH(t2t::average_checkpoints({ckpt(a, 1), ckpt(b, 2)}, dir / "out"),
                    Catch::Contains(ckpt(a, 1)) && Catch::Contains(ckpt(b, 2)) &&
                        Catch::Contains("lin.weight has shape [3, 5] instead of [3, 4]"));
  CHECK_THROWS_WITH(t2t::average_checkpoints({ckpt(a, 1), ckpt(c, 3)}, dir / "out"),
                    Catch::Contains("other hparams") && Catch::Contains("hidden_size"));
  CHECK_THROWS_WITH(t2t::average_checkpoints({ckpt(a, 1), ckpt(a, 1)}, dir / "out"),
                    Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(t2t::average_checkpoints({ckpt(a, 1)}, a),
                    Catch::Contains("would replace a checkpoint of the run"));
  CHECK_THROWS_WITH(t2t::average_checkpoints({dir / "a/model.ckpt-9.pt"}, dir / "out"),
                    Catch::Contains("no checkpoint at"));
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("t2t-avg-all averages the newest checkpoints of a run for the decoder", "[avg_all][tools]") {
  TempDir dir("avg_tool");
  const std::string run = dir / "run";
  const auto first = save_random(run, 10);
  const auto second = save_random(run, 20);
  const auto third = save_random(run, 30);
  t2t::write_file_atomic(run + "/hparams.yaml", kYaml);

  auto r = run_command("./t2t-avg-all --model_dir=" + run + " --n=2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("averaged 2 checkpoint(s) into " + ckpt(run + "/avg", 30)));
  const auto avg = t2t::read_checkpoint_tensors(ckpt(run + "/avg", 30), nullptr);
  const auto mean = ((second.at("lin.bias").to(torch::kFloat64) +
                      third.at("lin.bias").to(torch::kFloat64)) / 2).to(torch::kFloat32);
  CHECK(torch::equal(avg.at("lin.bias"), mean));
  CHECK(t2t::read_file(run + "/avg/hparams.yaml") == kYaml);
  // The run itself is untouched.
  CHECK(t2t::latest_checkpoint(run) == ckpt(run, 30));

  r = run_command("./t2t-avg-all --model_dir=" + run + " --checkpoints=model.ckpt-10.pt," +
                  ckpt(run, 30) + " --output_dir=" + (dir / "pair"));
  REQUIRE(r.exit_code == 0);
  const auto pair = t2t::read_checkpoint_tensors(ckpt(dir / "pair", 30), nullptr);
  const auto pair_mean = ((first.at("scale").to(torch::kFloat64) +
                           third.at("scale").to(torch::kFloat64)) / 2).to(torch::kFloat32);
  CHECK(torch::equal(pair.at("scale"), pair_mean));

  r = run_command("./t2t-avg-all --model_dir=" + run + " --output_dir=" + run);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("would replace a checkpoint of the run"));
  r = run_command("./t2t-avg-all --model_dir=" + (dir / "nothing"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("not a directory"));
  r = run_command("./t2t-avg-all --model_dir=" + run + " --n=0");
  CHECK(r.exit_code == 2);
  r = run_command("./t2t-avg-all --n=2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--model_dir is required"));
}
