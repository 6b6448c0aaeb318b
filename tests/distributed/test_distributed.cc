// Data-parallel training on torch.distributed (Gloo on loopback): two worker
// processes give the same parameters as one process on the combined batch,
// gradient accumulation equals one big batch, and t2t-trainer --worker_gpu
// runs, checkpoints and resumes.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/stopwatch.h"
#include "t2t/distributed/communicator.h"
#include "t2t/distributed/launcher.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/loss.h"
#include "t2t/train/train_step.h"
#include "tests/support/random_batch.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

constexpr int64_t kVocab = 40;
constexpr int kSteps = 3;

t2t::HParams tiny_hparams() {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{32});
  hp.set("filter_size", int64_t{64});
  hp.set("num_hidden_layers", int64_t{2});
  hp.set("num_heads", int64_t{4});
  // Dropout would draw different masks in one process and in two.
  for (const char* key : {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"})
    hp.set(key, 0.0);
  hp.set("label_smoothing", 0.1);
  return hp;
}

std::shared_ptr<t2t::T2TModel> tiny_model() {
  torch::manual_seed(7);
  return t2t::model_registry().get("transformer")(tiny_hparams(),
                                                  t2t::FeatureInfo{kVocab, kVocab, true});
}

// Micro-batch k of the four the tests use: different sizes and lengths, so
// that weighting by tokens (not by batches) matters.
t2t::Batch micro_batch(int k) {
  return t2t::test::random_batch(100 + k, kVocab, 2 + k, 5 + 2 * k, 9 - k);
}

// All the batches as one, padded to the longest.
t2t::Batch combined(const std::vector<t2t::Batch>& parts) {
  int64_t in_len = 0, out_len = 0;
  for (const auto& b : parts) {
    in_len = std::max(in_len, b.inputs.size(1));
    out_len = std::max(out_len, b.targets.size(1));
  }
  std::vector<torch::Tensor> ins, outs;
  t2t::Batch all;
  for (const auto& b : parts) {
    ins.push_back(torch::constant_pad_nd(b.inputs, {0, in_len - b.inputs.size(1)}));
    outs.push_back(torch::constant_pad_nd(b.targets, {0, out_len - b.targets.size(1)}));
    all.input_tokens += b.input_tokens;
    all.target_tokens += b.target_tokens;
  }
  all.inputs = torch::cat(ins);
  all.targets = torch::cat(outs);
  return all;
}

// Trains kSteps updates, each from `batches` as micro-batches. Buckets of
// 16 KiB cut the tiny model's gradients into a few dozen, so that sending
// them while backward runs, in order, is exercised too.
std::vector<torch::Tensor> train(const std::vector<t2t::Batch>& batches, t2t::Communicator* comm) {
  auto model = tiny_model();
  t2t::HParams hp = tiny_hparams();
  auto optimizer = t2t::make_optimizer(*model, hp);
  t2t::TrainStep step(*model, *optimizer, hp, torch::Device(torch::kCPU), "none", comm, 16u << 10);
  for (int i = 0; i < kSteps; ++i) REQUIRE(step.run(batches, 1e-3).applied);
  std::vector<torch::Tensor> params;
  for (const auto& p : model->parameters()) params.push_back(p.detach().clone());
  return params;
}

void check_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("parameter " << i << ", max difference " << (a[i] - b[i]).abs().max().item<double>());
    CHECK(torch::allclose(a[i], b[i], 1e-4, 1e-5));
  }
}

}  // namespace

TEST_CASE("torchrun's environment is read and checked", "[distributed]") {
  ::unsetenv("WORLD_SIZE");
  CHECK_FALSE(t2t::worker_env_from_environment().has_value());
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "1", 1);
  ::unsetenv("LOCAL_RANK");
  ::setenv("MASTER_ADDR", "10.0.0.1", 1);
  ::setenv("MASTER_PORT", "29555", 1);
  auto env = t2t::worker_env_from_environment();
  REQUIRE(env.has_value());
  CHECK(env->rank == 1);
  CHECK(env->local_rank == 1);
  CHECK(env->world_size == 2);
  CHECK(env->master_addr == "10.0.0.1");
  CHECK(env->master_port == 29555);
  ::setenv("RANK", "2", 1);
  CHECK_THROWS_WITH(t2t::worker_env_from_environment(), Catch::Contains("RANK=2"));
  ::setenv("RANK", "0", 1);
  ::unsetenv("MASTER_PORT");
  CHECK_THROWS_WITH(t2t::worker_env_from_environment(), Catch::Contains("MASTER_PORT"));
  for (const char* v : {"WORLD_SIZE", "RANK", "MASTER_ADDR"}) ::unsetenv(v);
}

TEST_CASE("accumulating micro-batches equals one update on the combined batch", "[distributed]") {
  torch::set_num_threads(1);
  std::vector<t2t::Batch> parts;
  for (int k = 0; k < 4; ++k) parts.push_back(micro_batch(k));
  check_same(train(parts, nullptr), train({combined(parts)}, nullptr));
}

// Run only by the test below, in two processes launched with torchrun's
// variables: rank r trains on micro-batches 2r and 2r+1 and saves what it
// ends with.
TEST_CASE("distributed worker", "[.][distributed_worker]") {
  // The failure test below asks rank 1 to die before it joins.
  if (std::getenv("T2T_TEST_DISTRIBUTED_FAIL") && std::getenv("RANK") == std::string("1"))
    std::_Exit(3);
  const char* out = std::getenv("T2T_TEST_DISTRIBUTED_DIR");
  REQUIRE(out);
  torch::set_num_threads(1);
  auto env = t2t::worker_env_from_environment();
  REQUIRE(env.has_value());
  auto comm = t2t::Communicator::connect(*env, torch::Device(torch::kCPU));
  REQUIRE(comm->size() == 2);
  REQUIRE(comm->backend() == "gloo");
  CHECK(comm->all_gather_strings("worker " + std::to_string(env->rank) + std::string(env->rank, '!')) ==
        std::vector<std::string>{"worker 0", "worker 1!"});
  auto params = train({micro_batch(2 * env->rank), micro_batch(2 * env->rank + 1)}, comm.get());
  torch::save(params, std::string(out) + "/rank" + std::to_string(env->rank) + ".pt");
  // A model outliving its TrainStep trains on alone: the gradient hooks
  // left with the reducer, and plain backward works.
  auto model = tiny_model();
  auto optimizer = t2t::make_optimizer(*model, tiny_hparams());
  {
    t2t::TrainStep step(*model, *optimizer, tiny_hparams(), torch::Device(torch::kCPU), "none",
                        comm.get(), 16u << 10);
  }
  const t2t::Batch b = micro_batch(0);
  t2t::smoothed_cross_entropy(model->forward(b.inputs, b.targets), b.targets, 0.1)
      .loss_sum.backward();
  CHECK(model->parameters()[0].grad().defined());
}

TEST_CASE("two Gloo workers equal one process on the combined batch", "[distributed]") {
  TempDir dir("distributed");
  ::setenv("T2T_TEST_DISTRIBUTED_DIR", dir.path.c_str(), 1);
  const std::string self = std::string("/proc/self/exe");
  REQUIRE(t2t::run_local_workers({self, "[distributed_worker]"}, 2) == 0);
  ::unsetenv("T2T_TEST_DISTRIBUTED_DIR");
  std::vector<torch::Tensor> rank0, rank1;
  torch::load(rank0, dir / "rank0.pt");
  torch::load(rank1, dir / "rank1.pt");
  torch::set_num_threads(1);
  std::vector<t2t::Batch> parts;
  for (int k = 0; k < 4; ++k) parts.push_back(micro_batch(k));
  const auto single = train({combined(parts)}, nullptr);
  check_same(rank0, single);
  // Both workers hold the very same model.
  for (size_t i = 0; i < rank0.size(); ++i) CHECK(torch::equal(rank0[i], rank1[i]));
  // And the model did move.
  const auto initial = tiny_model()->parameters();
  CHECK_FALSE(torch::allclose(initial[0], rank0[0]));
}

// Run only by the test below: the chief's work outlasts the collective
// timeout, and the other waits for it; then the chief's work fails, and
// the other is told so.
TEST_CASE("chief_alone worker", "[.][chief_alone_worker]") {
  const char* out = std::getenv("T2T_TEST_DISTRIBUTED_DIR");
  REQUIRE(out);
  auto env = t2t::worker_env_from_environment();
  REQUIRE(env.has_value());
  t2t::CommunicatorTimeouts timeouts;
  timeouts.collective = std::chrono::seconds(1);
  auto comm = t2t::Communicator::connect(*env, torch::Device(torch::kCPU), timeouts);
  t2t::Stopwatch timer;
  comm->chief_alone("a long task", [] { std::this_thread::sleep_for(std::chrono::seconds(3)); });
  CHECK(timer.seconds() > 2.5);
  auto x = torch::ones({3});
  comm->all_reduce_sum(x);  // still one group
  CHECK(x[0].item<float>() == 2);
  const auto fail = [] { throw t2t::Error("the task broke"); };
  if (env->rank == 0)
    CHECK_THROWS_WITH(comm->chief_alone("a failing task", fail), Catch::Contains("the task broke"));
  else
    CHECK_THROWS_WITH(comm->chief_alone("a failing task", fail),
                      Catch::Contains("worker 0 failed during a failing task"));
  std::ofstream(std::string(out) + "/done" + std::to_string(env->rank)) << "ok";
}

TEST_CASE("the others wait for the chief's work beyond the collective timeout, and hear of its "
          "failure",
          "[distributed]") {
  TempDir dir("chief_alone");
  ::setenv("T2T_TEST_DISTRIBUTED_DIR", dir.path.c_str(), 1);
  const int status = t2t::run_local_workers({"/proc/self/exe", "[chief_alone_worker]"}, 2);
  ::unsetenv("T2T_TEST_DISTRIBUTED_DIR");
  CHECK(status == 0);
  CHECK(fs::exists(dir / "done0"));
  CHECK(fs::exists(dir / "done1"));
}

// Run only by the test below: rank 1 leaves after 50 steps; rank 0 goes
// on and writes down what it was told.
TEST_CASE("peer lost worker", "[.][peer_lost_worker]") {
  const char* out = std::getenv("T2T_TEST_DISTRIBUTED_DIR");
  REQUIRE(out);
  auto env = t2t::worker_env_from_environment();
  REQUIRE(env.has_value());
  t2t::CommunicatorTimeouts timeouts;
  timeouts.collective = std::chrono::seconds(20);
  auto comm = t2t::Communicator::connect(*env, torch::Device(torch::kCPU), timeouts);
  // A step's gradient buckets: several collectives in flight at once.
  std::vector<at::Tensor> buckets;
  for (int b = 0; b < 8; ++b) buckets.push_back(torch::ones({64 << b}));
  const auto step = [&] {
    std::vector<std::unique_ptr<t2t::CollectiveWork>> works;
    for (auto& b : buckets) works.push_back(comm->all_reduce_sum_async(b));
    for (auto& w : works) w->wait();
  };
  if (env->rank == 1) {
    for (int i = 0; i < 50; ++i) step();
    // Gone mid-step, with rank 0's data unread: its connections reset.
    std::vector<std::unique_ptr<t2t::CollectiveWork>> works;
    for (auto& b : buckets) works.push_back(comm->all_reduce_sum_async(b));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::_Exit(0);
  }
  std::string said = "no error in 10000 steps";
  try {
    for (int i = 0; i < 10000; ++i) step();
  } catch (const t2t::Error& e) {
    said = e.what();
  }
  struct sigaction pipe {};
  ::sigaction(SIGPIPE, nullptr, &pipe);
  std::ofstream(std::string(out) + "/said0")
      << (pipe.sa_handler == SIG_IGN ? "SIGPIPE ignored; " : "SIGPIPE not ignored; ") << said;
}

TEST_CASE("a failing worker stops the launch with its exit status", "[distributed]") {
  // Rank 1 exits with status 3 at once; rank 0 would wait for it at the
  // rendezvous for minutes, so the launcher must stop it.
  TempDir dir("distributed_fail");
  ::setenv("T2T_TEST_DISTRIBUTED_DIR", dir.path.c_str(), 1);
  ::setenv("T2T_TEST_DISTRIBUTED_FAIL", "1", 1);
  const std::string self = std::string("/proc/self/exe");
  t2t::Stopwatch timer;
  const int status = t2t::run_local_workers({self, "[distributed_worker]"}, 2);
  ::unsetenv("T2T_TEST_DISTRIBUTED_FAIL");
  ::unsetenv("T2T_TEST_DISTRIBUTED_DIR");
  CHECK(status == 3);
  CHECK(timer.seconds() < 60);
  CHECK_FALSE(fs::exists(dir / "rank0.pt"));
}

TEST_CASE("a worker whose peer is gone mid-collective is told which one, instead of dying of "
          "SIGPIPE",
          "[distributed]") {
  // Gloo writes with writev, which raises SIGPIPE on a connection the peer
  // closed: unless ignored, it ends the worker without a word.
  TempDir dir("peer_lost");
  ::setenv("T2T_TEST_DISTRIBUTED_DIR", dir.path.c_str(), 1);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int status = t2t::run_local_workers({"/proc/self/exe", "[peer_lost_worker]"}, 2);
    CHECK(status == 0);
    std::ifstream in(dir / "said0");
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(said, Catch::StartsWith("SIGPIPE ignored; "));
    CHECK_THAT(said, Catch::Contains("worker 0 of 2: a collective operation failed: worker 1 ("));
    fs::remove(dir / "said0");
  }
  ::unsetenv("T2T_TEST_DISTRIBUTED_DIR");
}

TEST_CASE("t2t-trainer --worker_gpu=2 trains with two processes and resumes", "[distributed][e2e]") {
  TempDir dir("trainer_dp");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code == 0);
  const std::string out = dir / "run", straight = dir / "straight";
  auto cmd = [&](int steps, const std::string& run_dir = "") {
    return "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
           "--hparams_set=transformer_tiny --hparams='batch_size=512' --worker_gpu=2 --device=cpu "
           "--data_dir=" + data + " --output_dir=" + (run_dir.empty() ? out : run_dir) +
           " --train_steps=" +
           std::to_string(steps) +
           " --log_step_count_steps=5 --save_checkpoints_steps=10 --local_eval_frequency=20 "
           "--eval_steps=2";
  };
  auto first = run_command(cmd(10));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.output, Catch::Contains("started 2 worker processes"));
  CHECK_THAT(first.output, Catch::Contains("worker 0 of 2 joined"));
  // The other worker reports only problems.
  CHECK_THAT(first.output, !Catch::Contains("worker 1 of 2 joined"));
  CHECK_THAT(first.output, Catch::Contains("(all workers)"));
  REQUIRE(fs::exists(out + "/model.ckpt-10.pt"));
  auto second = run_command(cmd(20));
  INFO(second.output);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.output, Catch::Contains("resuming from"));
  CHECK_THAT(second.output, !Catch::Contains("input position cannot be restored"));
  CHECK_THAT(second.output, Catch::Contains("eval at step 20"));
  REQUIRE(fs::exists(out + "/model.ckpt-20.pt"));
  // Each worker resumed its own input position and dropout stream: the same
  // parameters as 20 steps without a stop.
  auto uninterrupted = run_command(cmd(20, straight));
  INFO(uninterrupted.output);
  REQUIRE(uninterrupted.exit_code == 0);
  t2t::CheckpointMeta meta;
  const auto a = t2t::read_checkpoint_tensors(straight + "/model.ckpt-20.pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);
  const auto b = t2t::read_checkpoint_tensors(out + "/model.ckpt-20.pt", nullptr);
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    INFO(name);
    REQUIRE(b.count(name));
    CHECK(torch::equal(t, b.at(name)));
  }
}
