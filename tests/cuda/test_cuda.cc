// The CUDA paths: the Transformer, a training step (fp32, bf16, fp16), the
// fused Adam, beam search, pinned batches, NCCL and the two binaries, each
// checked against the CPU where the two must agree. On a machine without a
// CUDA device every test is reported as skipped (T2T_SKIP); run
// `t2t_tests "[cuda]"` on a GPU machine to exercise them.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/transformer.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/cuda_graph.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/runtime.h"
#include "t2t/data/batch_reader.h"
#include "t2t/search/beam_search.h"
#include "t2t/distributed/communicator.h"
#include "t2t/distributed/launcher.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "t2t/train/train_step.h"
#include "tests/support/adam_pair.h"
#include "tests/support/random_batch.h"
#include "tests/support/tensor_compare.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

constexpr int64_t kVocab = 40;

const torch::Device kCuda("cuda:0");

t2t::HParams tiny_hparams(bool dropout = false) {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{32});
  hp.set("filter_size", int64_t{64});
  hp.set("num_hidden_layers", int64_t{2});
  hp.set("num_heads", int64_t{4});
  if (!dropout) {
    for (const char* key : {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"})
      hp.set(key, 0.0);
  }
  hp.set("label_smoothing", 0.1);
  return hp;
}

// The same initial weights every call (seeded on the CPU, then moved).
std::shared_ptr<t2t::Transformer> tiny_model(const torch::Device& device, bool dropout = false) {
  torch::manual_seed(7);
  auto model = std::make_shared<t2t::Transformer>(tiny_hparams(dropout),
                                                  t2t::FeatureInfo{kVocab, kVocab, true});
  model->to(device);
  return model;
}

t2t::Batch random_batch(int seed, int64_t rows, int64_t in_len, int64_t out_len) {
  return t2t::test::random_batch(seed, kVocab, rows, in_len, out_len);
}

using t2t::test::max_diff;

void check_same_parameters(torch::nn::Module& a, torch::nn::Module& b, double rtol, double atol) {
  auto pa = a.parameters(), pb = b.parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO("parameter " << i << ", max difference " << max_diff(pa[i], pb[i]));
    CHECK(torch::allclose(pa[i].detach().cpu(), pb[i].detach().cpu(), rtol, atol));
  }
}

}  // namespace

TEST_CASE("the Transformer computes the same logits on CUDA as on the CPU", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  auto cpu = tiny_model(torch::kCPU), gpu = tiny_model(kCuda);
  cpu->eval();
  gpu->eval();
  torch::NoGradGuard no_grad;
  const t2t::Batch b = random_batch(1, 5, 9, 7);
  const auto want = cpu->forward(b.inputs, b.targets);
  const auto got = gpu->forward(b.inputs.to(kCuda), b.targets.to(kCuda));
  CHECK(got.device() == kCuda);
  INFO("max difference " << max_diff(want, got));
  CHECK(max_diff(want, got) < 1e-4);

  // The incremental path (cached keys and values) on the GPU equals
  // teacher forcing on the CPU.
  auto state = gpu->start_decoding(b.inputs.to(kCuda));
  auto last = torch::zeros({b.targets.size(0)}, torch::kLong).to(kCuda);
  for (int64_t t = 0; t < b.targets.size(1); ++t) {
    const auto step = gpu->decode_step(*state, last);
    INFO("position " << t << ", max difference " << max_diff(want.select(1, t), step));
    CHECK(max_diff(want.select(1, t), step) < 1e-4);
    last = b.targets.select(1, t).to(kCuda);
  }
}

TEST_CASE("fp32 training steps on CUDA end where the CPU's do", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  const t2t::HParams hp = tiny_hparams();
  const std::vector<t2t::Batch> batches = {random_batch(2, 4, 8, 6), random_batch(3, 3, 5, 9)};
  auto cpu = tiny_model(torch::kCPU), gpu = tiny_model(kCuda);
  auto cpu_opt = t2t::make_optimizer(*cpu, hp);
  auto gpu_opt = t2t::make_optimizer(*gpu, hp);
  t2t::TrainStep cpu_step(*cpu, *cpu_opt, hp, torch::kCPU, "none");
  t2t::TrainStep gpu_step(*gpu, *gpu_opt, hp, kCuda, "none");
  for (int i = 0; i < 4; ++i) {
    const auto a = cpu_step.run(batches, 1e-3);
    const auto b = gpu_step.run(batches, 1e-3);
    REQUIRE(a.applied);
    REQUIRE(b.applied);
    CHECK(b.tokens == a.tokens);
    CHECK(b.loss_sum == Approx(a.loss_sum).epsilon(1e-4));
    CHECK(b.grad_norm == Approx(a.grad_norm).epsilon(1e-3));
  }
  check_same_parameters(*cpu, *gpu, 1e-3, 1e-4);
}

TEST_CASE("steps captured in CUDA graphs end where the uncaptured static steps do, and the "
          "CPU's",
          "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  const t2t::HParams hp = tiny_hparams();
  // Two shapes (widths 7 and 12), each met four times: run, captured, replayed twice.
  const std::vector<t2t::Batch> batches = {random_batch(2, 4, 5, 6), random_batch(3, 4, 12, 9)};
  auto cpu = tiny_model(torch::kCPU), gpu = tiny_model(kCuda);
  auto cpu_opt = t2t::make_optimizer(*cpu, hp);
  auto gpu_opt = t2t::make_optimizer(*gpu, hp);
  t2t::TrainStep cpu_step(*cpu, *cpu_opt, hp, torch::kCPU, "none");
  t2t::TrainStep gpu_step(*gpu, *gpu_opt, hp, kCuda, "none");
  const auto scheme = t2t::batching_scheme(64, 64);
  cpu_step.use_static_shapes(scheme, false);
  {
    t2t::UseSideStream side(kCuda);
    gpu_step.use_static_shapes(scheme, true);
    for (int i = 0; i < 8; ++i) {
      const auto& b = batches[i % 2];
      const auto want = cpu_step.run({b}, 1e-3);
      const auto got = gpu_step.run({b}, 1e-3);
      INFO("step " << i);
      REQUIRE(got.applied);
      CHECK(got.tokens == want.tokens);
      CHECK(got.loss_sum == Approx(want.loss_sum).epsilon(1e-4));
      CHECK(got.grad_norm == Approx(want.grad_norm).epsilon(1e-3));
    }
    CHECK(gpu_step.captured_graphs() == 2);
    gpu_step.stats().snapshot();
    CHECK(gpu_step.stats().take().steps == 8);
  }
  check_same_parameters(*cpu, *gpu, 1e-3, 1e-4);
  // The host's step counts (what a checkpoint keeps) counted every replay.
  const auto& state = static_cast<torch::optim::AdamParamState&>(
      *gpu_opt->state().at(gpu->parameters()[0].unsafeGetTensorImpl()));
  CHECK(state.step() == 8);
}

TEST_CASE("bf16 and fp16 autocast train on CUDA and lower the loss", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  const t2t::HParams hp = tiny_hparams(/*dropout=*/true);
  const std::vector<t2t::Batch> batches = {random_batch(4, 8, 10, 10)};
  for (const std::string mode : {"bf16", "fp16"}) {
    INFO("--mixed_precision=" << mode);
    auto model = tiny_model(kCuda, /*dropout=*/true);
    auto optimizer = t2t::make_optimizer(*model, hp);
    t2t::TrainStep step(*model, *optimizer, hp, kCuda, mode);
    double first = 0, last = 0;
    int applied = 0;
    for (int i = 0; i < 60; ++i) {
      const auto r = step.run(batches, 3e-3);
      applied += r.applied;
      const double loss = r.loss_sum / static_cast<double>(r.tokens);
      if (i == 0) first = loss;
      last = loss;
    }
    // fp16 may skip a step or two while its loss scale settles; no more.
    CHECK(applied >= 57);
    CHECK(last < 0.6 * first);
    if (mode == "fp16") CHECK(step.loss_scale() >= 1.0);
    for (const auto& p : model->parameters()) CHECK(p.dtype() == torch::kFloat);
  }
}

TEST_CASE("the fused Adam step on CUDA equals LibTorch's Adam", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  torch::manual_seed(11);
  t2t::test::AdamPair pair({torch::randn({7, 5}), torch::randn({5}), torch::randn({300})}, kCuda);
  for (int step = 0; step < 5; ++step) {
    pair.step();
    for (size_t i = 0; i < pair.init.size(); ++i) {
      const auto &a = pair.plain_params[i], &b = pair.fused_params[i];
      INFO("step " << step << ", tensor " << i << ", max difference " << max_diff(a, b));
      CHECK(torch::allclose(a, b, 1e-5, 1e-6));
    }
  }
}

TEST_CASE("beam search on CUDA returns the CPU's hypotheses", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  auto cpu = tiny_model(torch::kCPU), gpu = tiny_model(kCuda);
  cpu->eval();
  gpu->eval();
  // Sharpen the random model so that near-ties (which rounding may break
  // either way) are rare.
  {
    torch::NoGradGuard no_grad;
    for (auto& m : {cpu, gpu})
      for (auto& p : m->parameters()) p.mul_(3.0);
  }
  auto inputs = random_batch(5, 6, 8, 2).inputs;
  for (int64_t r = 0; r < inputs.size(0); ++r) {
    const int64_t n = inputs[r].ne(0).sum().item<int64_t>();
    inputs[r][n - 1] = t2t::kEosId;
  }
  t2t::SearchOptions o;
  o.beam_size = 4;
  o.extra_length = 8;
  o.num_return = 2;
  o.stop_early = false;
  const auto want = t2t::beam_search(*cpu, inputs, o);
  const auto got = t2t::beam_search(*gpu, inputs.to(kCuda), o);
  REQUIRE(got.size() == want.size());
  for (size_t s = 0; s < want.size(); ++s) {
    REQUIRE(got[s].size() == want[s].size());
    for (size_t k = 0; k < want[s].size(); ++k) {
      INFO("sentence " << s << ", hypothesis " << k);
      CHECK(got[s][k].ids == want[s][k].ids);
      CHECK(got[s][k].score == Approx(want[s][k].score).epsilon(1e-4).margin(1e-5));
    }
  }
}

TEST_CASE("beam search with its steps replayed as CUDA graphs returns the uncaptured hypotheses",
          "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  auto usual = tiny_model(kCuda), graphed = tiny_model(kCuda);
  usual->eval();
  graphed->eval();
  {
    torch::NoGradGuard no_grad;
    for (auto& m : {usual, graphed})
      for (auto& p : m->parameters()) p.mul_(3.0);
  }
  graphed->set_static_decoding(true, true);
  t2t::SearchOptions o;
  o.beam_size = 4;
  o.extra_length = 20;
  // The same batches twice: the second time every shape replays a graph.
  for (int round = 0; round < 2; ++round)
    for (int seed : {5, 6, 7}) {
      auto inputs = random_batch(seed, 3 + seed, 4 + seed, 2).inputs;
      for (int64_t r = 0; r < inputs.size(0); ++r) {
        const int64_t n = inputs[r].ne(0).sum().item<int64_t>();
        inputs[r][n - 1] = t2t::kEosId;
      }
      const auto want = t2t::beam_search(*usual, inputs.to(kCuda), o);
      const auto got = t2t::beam_search(*graphed, inputs.to(kCuda), o);
      REQUIRE(got.size() == want.size());
      for (size_t s = 0; s < want.size(); ++s) {
        INFO("round " << round << ", batch " << seed << ", sentence " << s);
        CHECK(got[s][0].ids == want[s][0].ids);
        CHECK(got[s][0].score == Approx(want[s][0].score).epsilon(1e-4).margin(1e-5));
      }
    }
  CHECK(graphed->decode_graphs() > 0);
}

TEST_CASE("a reader for a CUDA run hands out pinned batches", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  TempDir dir("cuda_pinned");
  const std::string file = dir / "data-train-00000-of-00001";
  {
    t2t::TFRecordWriter w(file);
    for (int64_t i = 0; i < 50; ++i)
      w.write(t2t::serialize_example({{"inputs", {5 + i % 7, 9, 1}}, {"targets", {6, 7 + i % 5, 1}}}));
    w.close();
  }
  t2t::ReaderOptions o;
  o.training = false;
  o.pin_memory = true;
  t2t::BatchReader reader({file}, t2t::batching_scheme(64, 16), o);
  int batches = 0;
  while (auto b = reader.next()) {
    ++batches;
    CHECK(b->inputs.is_pinned());
    CHECK(b->targets.is_pinned());
  }
  CHECK(batches > 1);
}

TEST_CASE("one NCCL worker: collectives and a training step", "[cuda][distributed]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  t2t::WorkerEnv env;
  env.master_port = t2t::free_local_port();
  auto comm = t2t::Communicator::connect(env, kCuda, {std::chrono::seconds(60), std::chrono::seconds(60)});
  CHECK(comm->backend() == "nccl");
  CHECK(comm->device() == kCuda);
  auto x = torch::arange(10, torch::kFloat).to(kCuda);
  comm->all_reduce_sum(x);
  CHECK(torch::equal(x.cpu(), torch::arange(10, torch::kFloat)));
  comm->broadcast(x);
  CHECK(comm->all_gather_strings("worker zero") == std::vector<std::string>{"worker zero"});
  comm->barrier();

  // Through the gradient reducer (small buckets: many of them), one worker
  // ends where a plain step does.
  const t2t::HParams hp = tiny_hparams();
  const std::vector<t2t::Batch> batches = {random_batch(6, 4, 7, 8)};
  auto plain = tiny_model(kCuda), reduced = tiny_model(kCuda);
  auto plain_opt = t2t::make_optimizer(*plain, hp);
  auto reduced_opt = t2t::make_optimizer(*reduced, hp);
  t2t::TrainStep plain_step(*plain, *plain_opt, hp, kCuda, "none");
  t2t::TrainStep reduced_step(*reduced, *reduced_opt, hp, kCuda, "none", comm.get(), 16u << 10);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(plain_step.run(batches, 1e-3).applied);
    REQUIRE(reduced_step.run(batches, 1e-3).applied);
  }
  check_same_parameters(*plain, *reduced, 1e-5, 1e-6);
}

TEST_CASE("t2t-trainer and t2t-decoder run on CUDA", "[cuda][e2e]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  TempDir dir("cuda_e2e");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code ==
          0);
  for (const std::string mode : {"none", "bf16", "fp16", "bf16 --cuda_graphs"}) {
    INFO("--mixed_precision=" << mode);
    const bool graphs = mode.find("graphs") != std::string::npos;
    const std::string out = dir / ("run_" + mode.substr(0, 4) + (graphs ? "_graphs" : ""));
    auto train = run_command(
        "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --hparams='batch_size=2048' --data_dir=" + data +
        " --output_dir=" + out + " --train_steps=300 --local_eval_frequency=300 --eval_steps=20 "
        "--log_step_count_steps=100 --device=cuda --mixed_precision=" + mode);
    INFO(train.output);
    REQUIRE(train.exit_code == 0);
    CHECK(train.output.find("device cuda:0") != std::string::npos);
    if (graphs) CHECK_THAT(train.output, !Catch::Contains("CUDA graphs: 0 captured"));
  }
  // More workers than GPUs: a clear refusal before any worker starts.
  const int too_many = t2t::cuda_device_count() + 1;
  auto crowded = run_command(
      "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
      "--hparams_set=transformer_tiny --data_dir=" + data + " --output_dir=" + (dir / "crowded") +
      " --train_steps=10 --device=cuda --worker_gpu=" + std::to_string(too_many));
  CHECK(crowded.exit_code == 2);
  CHECK_THAT(crowded.output, Catch::Contains("--worker_gpu=" + std::to_string(too_many) +
                                             " puts one worker on each GPU"));
  // The fp32 run's checkpoint decodes on the GPU as on the CPU.
  auto decode = [&](const std::string& device, const std::string& to) {
    return run_command(
        "./t2t-decoder --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --data_dir=" + data + " --output_dir=" + (dir / "run_none") +
        " --decode_hparams='beam_size=4,num_samples=60,log_results=false,batch_size=8' "
        "--decode_to_file=" + to + " --device=" + device);
  };
  auto gpu = decode("cuda", dir / "gpu");
  INFO(gpu.output);
  REQUIRE(gpu.exit_code == 0);
  REQUIRE(decode("cpu", dir / "cpu").exit_code == 0);
  auto graphs = decode("cuda --cuda_graphs", dir / "graphs");
  INFO(graphs.output);
  REQUIRE(graphs.exit_code == 0);
  CHECK_THAT(graphs.output, Catch::Contains("replayed as CUDA graphs"));
  auto lines = [](const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const std::string suffix = ".transformer.transformer_tiny.translate_enzh_sample.beam4.alpha0.6.decodes";
  const auto g = lines(dir / ("gpu" + suffix)), c = lines(dir / ("cpu" + suffix));
  const auto gg = lines(dir / ("graphs" + suffix));
  REQUIRE(g.size() == 60);
  REQUIRE(c.size() == g.size());
  REQUIRE(gg.size() == g.size());
  size_t same = 0, same_graphed = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    same += g[i] == c[i];
    same_graphed += gg[i] == g[i];
  }
  // Rounding may turn a near-tie the other way in a sentence or two.
  CHECK(same >= g.size() - 3);
  CHECK(same_graphed >= g.size() - 3);
}

TEST_CASE("the CUDA random state comes back from its bytes", "[cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  const std::string state = t2t::cuda_rng_state(0);
  const auto first = torch::rand({16}, torch::kCUDA);
  t2t::set_cuda_rng_state(0, state);
  CHECK(torch::equal(torch::rand({16}, torch::kCUDA), first));
  CHECK_THROWS_WITH(t2t::set_cuda_rng_state(0, "not a state"),
                    Catch::Contains("could not be restored"));
}

TEST_CASE("an fp16 CUDA run checkpoints its CUDA random state and loss scale, and resumes them",
          "[cuda][e2e]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  TempDir dir("cuda_resume");
  const std::string data = dir / "data", out = dir / "run";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code ==
          0);
  auto train = [&](int steps) {
    return run_command(
        "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --hparams='batch_size=1024' --data_dir=" + data +
        " --output_dir=" + out + " --train_steps=" + std::to_string(steps) +
        " --save_checkpoints_steps=20 --local_eval_frequency=1000 --device=cuda "
        "--mixed_precision=fp16");
  };
  auto first = train(20);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(t2t::latest_checkpoint(out), &meta);
  CHECK(meta.worker_cuda_rng_states.size() == 1);
  CHECK(meta.loss_scale > 0);
  auto resumed = train(30);
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.output, Catch::Contains("fp16 loss scale") && Catch::Contains("taken up"));
}

TEST_CASE("a saved loss scale is taken up only by a step that scales its loss", "[train]") {
  const t2t::HParams hp = tiny_hparams();
  auto model = tiny_model(torch::kCPU);
  auto optimizer = t2t::make_optimizer(*model, hp);
  t2t::TrainStep plain(*model, *optimizer, hp, torch::kCPU, "none");
  CHECK_FALSE(plain.scales_loss());
  CHECK_FALSE(plain.restore_loss_scale(1024, 5));
  CHECK(plain.loss_scale() == 1.0);
  CHECK_THROWS_WITH(plain.restore_loss_scale(0, 0), Catch::Contains("cannot be taken up"));
  CHECK_THROWS_AS(plain.restore_loss_scale(std::nan(""), 0), t2t::Error);
  if (t2t::cuda_device_count() == 0) return;  // the fp16 half needs a GPU
  auto gpu = tiny_model(kCuda);
  auto gpu_opt = t2t::make_optimizer(*gpu, hp);
  t2t::TrainStep fp16(*gpu, *gpu_opt, hp, kCuda, "fp16");
  CHECK(fp16.restore_loss_scale(1024, 5));
  CHECK(fp16.loss_scale() == 1024);
  CHECK(fp16.loss_scale_good_steps() == 5);
}
