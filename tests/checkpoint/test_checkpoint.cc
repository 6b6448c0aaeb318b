// LibTorch first: its logging header defines CHECK too, and Catch's CHECK
// must be the one that wins.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/support/test_util.h"

using t2t::test::TempDir;

namespace {

struct TinyNet : torch::nn::Module {
  explicit TinyNet(int64_t out = 2) {
    fc = register_module("fc", torch::nn::Linear(3, out));
    register_buffer("counter", torch::zeros({1}));
  }
  torch::nn::Linear fc{nullptr};
};

void train_step(TinyNet& net, torch::optim::Adam& opt) {
  opt.zero_grad();
  auto loss = net.fc->forward(torch::ones({4, 3})).pow(2).sum();
  loss.backward();
  opt.step();
}

bool same_parameters(TinyNet& a, TinyNet& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  for (const auto& p : pa)
    if (!torch::equal(p.value(), pb[p.key()])) return false;
  return true;
}

}  // namespace

TEST_CASE("a checkpoint restores model, optimizer, step and random state", "[checkpoint]") {
  TempDir dir("checkpoint");
  torch::manual_seed(1);
  TinyNet net;
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(0.1));
  train_step(net, opt);
  t2t::CheckpointMeta meta;
  meta.step = 7;
  meta.reader_state = "epoch 1 file 3 record 42";
  meta.hparams_yaml = "hidden_size: 8\n";
  const std::string path = t2t::save_checkpoint(dir / "run", net, &opt, meta, 0);
  CHECK(std::filesystem::path(path).filename() == "model.ckpt-7.pt");
  CHECK(t2t::latest_checkpoint(dir / "run") == path);
  const auto expected_rand = torch::rand({3});

  torch::manual_seed(99);
  TinyNet other;
  torch::optim::Adam other_opt(other.parameters(), torch::optim::AdamOptions(0.1));
  auto loaded = t2t::load_checkpoint(path, other, &other_opt, true);
  CHECK(loaded.step == 7);
  CHECK(loaded.reader_state == meta.reader_state);
  CHECK(loaded.hparams_yaml == meta.hparams_yaml);
  CHECK(loaded.has_rng_state);
  CHECK(torch::equal(torch::rand({3}), expected_rand));
  CHECK(same_parameters(net, other));
  // The optimizer's moments came back too: one more step agrees exactly.
  train_step(net, opt);
  train_step(other, other_opt);
  CHECK(same_parameters(net, other));
}

TEST_CASE("a checkpoint keeps each worker's CUDA random state and the fp16 loss scale",
          "[checkpoint]") {
  TempDir dir("checkpoint_gpu_state");
  TinyNet net;
  t2t::CheckpointMeta meta;
  meta.step = 3;
  meta.worker_cuda_rng_states = {std::string("\x01\x00\x02", 3), "second worker"};
  meta.loss_scale = 16384;
  meta.loss_scale_good_steps = 1234;
  const std::string path = t2t::save_checkpoint(dir / "run", net, nullptr, meta, 0);
  const auto loaded = t2t::load_checkpoint(path, net, nullptr, false);
  CHECK(loaded.worker_cuda_rng_states == meta.worker_cuda_rng_states);
  CHECK(loaded.loss_scale == 16384);
  CHECK(loaded.loss_scale_good_steps == 1234);

  // A run that does not scale its loss saves no scale; an averaged model
  // (written from tensors) carries no state to resume with.
  meta.loss_scale = 0;
  const auto plain = t2t::load_checkpoint(t2t::save_checkpoint(dir / "plain", net, nullptr, meta, 0),
                                          net, nullptr, false);
  CHECK(plain.loss_scale == 0);
  meta.loss_scale = 512;
  const auto averaged = t2t::load_checkpoint(
      t2t::save_checkpoint_tensors(dir / "avg", t2t::read_checkpoint_tensors(path, nullptr), meta), net,
      nullptr, false);
  CHECK(averaged.worker_cuda_rng_states.empty());
  CHECK(averaged.loss_scale == 0);
}

TEST_CASE("checkpoints beyond keep_max are deleted, oldest first", "[checkpoint]") {
  TempDir dir("checkpoint_keep");
  TinyNet net;
  for (int64_t step : {100, 200, 300, 400}) {
    t2t::CheckpointMeta meta;
    meta.step = step;
    t2t::save_checkpoint(dir / "run", net, nullptr, meta, 2);
  }
  auto all = t2t::list_checkpoints(dir / "run");
  REQUIRE(all.size() == 2);
  CHECK(t2t::checkpoint_step(all[0]) == 300);
  CHECK(t2t::checkpoint_step(all[1]) == 400);
  CHECK(t2t::checkpoint_step(t2t::latest_checkpoint(dir / "run")) == 400);
  CHECK(t2t::latest_checkpoint(dir / "empty").empty());
  for (const auto& e : std::filesystem::directory_iterator(dir / "run"))
    CHECK(e.path().string().find(".tmp") == std::string::npos);
}

TEST_CASE("a checkpoint that does not fit the model names the differences", "[checkpoint]") {
  TempDir dir("checkpoint_mismatch");
  TinyNet net(2);
  t2t::CheckpointMeta meta;
  meta.step = 1;
  const std::string path = t2t::save_checkpoint(dir / "run", net, nullptr, meta, 0);
  TinyNet wider(5);
  REQUIRE_THROWS_WITH(t2t::load_checkpoint(path, wider, nullptr, false),
                      Catch::Contains("does not fit the model") &&
                          Catch::Contains("fc.weight: shape [2, 3] in the file, [5, 3] in the model"));
  REQUIRE_THROWS_WITH(t2t::load_checkpoint(dir / "run/nothing.pt", net, nullptr, false),
                      Catch::Contains("no checkpoint at"));
  std::ofstream(dir / "run/model.ckpt-9.pt") << "garbage";
  REQUIRE_THROWS_WITH(t2t::load_checkpoint(dir / "run/model.ckpt-9.pt", net, nullptr, false),
                      Catch::Contains("cannot read checkpoint"));
}
