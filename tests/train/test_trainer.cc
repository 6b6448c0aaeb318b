// End-to-end tests of t2t-trainer on the bundled sample: the loss falls, a
// resumed run equals an uninterrupted one, a run's hparams are protected.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

std::string make_sample_data(const TempDir& dir) {
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  REQUIRE(r.exit_code == 0);
  return data;
}

std::string trainer(const std::string& data, const std::string& out, int steps,
                    const std::string& extra = "") {
  return "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
         "--hparams_set=transformer_tiny --hparams='batch_size=1024,learning_rate_warmup_steps=100' "
         "--data_dir=" + data + " --output_dir=" + out + " --train_steps=" + std::to_string(steps) +
         " --log_step_count_steps=10 --eval_steps=10 --device=cpu " + extra;
}

std::vector<double> logged_losses(const std::string& output) {
  std::vector<double> losses;
  std::regex re("\\] step \\d+: loss ([0-9.]+)");
  for (std::sregex_iterator it(output.begin(), output.end(), re), end; it != end; ++it)
    losses.push_back(std::stod((*it)[1]));
  return losses;
}

std::map<std::string, torch::Tensor> model_tensors(const std::string& path) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& key : archive.keys()) {
    if (key.rfind("model/", 0) != 0) continue;
    torch::Tensor t;
    archive.read(key, t);
    out[key] = t;
  }
  return out;
}

}  // namespace

TEST_CASE("t2t-trainer lowers the loss on the sample and writes a run directory", "[trainer][e2e]") {
  TempDir dir("trainer_loss");
  const std::string data = make_sample_data(dir);
  const std::string out = dir / "run";
  auto r = run_command(trainer(data, out, 80, "--local_eval_frequency=40"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto losses = logged_losses(r.output);
  REQUIRE(losses.size() == 8);
  CHECK(losses.back() < losses.front() - 1.0);
  CHECK_THAT(r.output, Catch::Contains("eval at step 80: loss"));
  CHECK_THAT(r.output, Catch::Contains("approx BLEU"));
  CHECK_THAT(r.output, Catch::Contains("tokens/s"));
  CHECK(fs::exists(out + "/hparams.yaml"));
  CHECK(t2t::checkpoint_step(t2t::latest_checkpoint(out)) == 80);
  bool train_events = false, eval_events = false;
  for (const auto& e : fs::directory_iterator(out))
    train_events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  for (const auto& e : fs::directory_iterator(out + "/eval"))
    eval_events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  CHECK(train_events);
  CHECK(eval_events);
}

TEST_CASE("a resumed run ends with the same parameters as an uninterrupted one", "[trainer][e2e]") {
  TempDir dir("trainer_resume");
  const std::string data = make_sample_data(dir);
  const std::string straight = dir / "straight", resumed = dir / "resumed";
  const std::string every = "--save_checkpoints_steps=15 --local_eval_frequency=1000 --threads=1";
  REQUIRE(run_command(trainer(data, straight, 30, every)).exit_code == 0);
  REQUIRE(run_command(trainer(data, resumed, 15, every)).exit_code == 0);
  auto second = run_command(trainer(data, resumed, 30, every));
  INFO(second.output);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.output, Catch::Contains("resuming from"));
  auto a = model_tensors(straight + "/model.ckpt-30.pt");
  auto b = model_tensors(resumed + "/model.ckpt-30.pt");
  REQUIRE(a.size() == b.size());
  REQUIRE_FALSE(a.empty());
  for (const auto& [key, t] : a) {
    INFO(key);
    REQUIRE(b.count(key));
    CHECK(torch::allclose(t, b[key], 1e-5, 1e-6));
  }

  // Other hparams in the same run directory are refused, naming the change.
  auto other = run_command(
      "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
      "--hparams_set=transformer_tiny --hparams='batch_size=512,learning_rate_warmup_steps=100' "
      "--data_dir=" + data + " --output_dir=" + resumed + " --train_steps=40");
  CHECK(other.exit_code == 1);
  CHECK_THAT(other.output, Catch::Contains("batch_size: 1024 -> 512"));
}

TEST_CASE("non-finite losses are skipped and stop training when they persist", "[trainer][e2e]") {
  TempDir dir("trainer_nonfinite");
  const std::string data = make_sample_data(dir);
  const std::string out = dir / "run";
  // A learning rate of 1e30 from the second step on: the weights overflow.
  auto r = run_command(
      "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
      "--hparams_set=transformer_tiny "
      "--hparams='batch_size=1024,learning_rate_warmup_steps=1,learning_rate_constant=1e30' "
      "--data_dir=" + data + " --output_dir=" + out +
      " --train_steps=50 --save_checkpoints_steps=1 --local_eval_frequency=1000 "
      "--max_nonfinite_steps=4");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  // The host reads the steps' outcomes every few steps (kReportEvery), so
  // the run may go on past the 4th non-finite step before it stops.
  CHECK_THAT(r.output, Catch::Contains("with a non-finite loss or gradient, their updates skipped"));
  CHECK_THAT(r.output, Catch::Contains("steps in a row gave a non-finite loss or gradient "
                                       "(--max_nonfinite_steps=4)"));
  CHECK_THAT(r.output, Catch::Contains("The last good checkpoint is"));
  const std::string last = t2t::latest_checkpoint(out);
  REQUIRE_FALSE(last.empty());
  CHECK(model_tensors(last).size() > 0);  // intact and readable
}

TEST_CASE("bf16 mixed precision trains on a CPU and fp16 asks for CUDA", "[trainer][e2e]") {
  TempDir dir("trainer_bf16");
  const std::string data = make_sample_data(dir);
  auto r = run_command(trainer(data, dir / "bf16", 60, "--mixed_precision=bf16"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("mixed precision: bf16 autocast"));
  // A CPU that computes bf16 natively says so in /proc/cpuinfo; on any other
  // the run warns that float32 is faster.
  const auto cpuinfo = run_command("grep -m1 -ow 'avx512_bf16\\|amx_bf16' /proc/cpuinfo");
  const bool native_bf16 = cpuinfo.exit_code == 0;
  INFO("native bf16: " << native_bf16);
  const bool warned =
      r.output.find("bf16 autocast on a CPU without AVX512_BF16 or AMX") != std::string::npos;
  CHECK(warned == !native_bf16);
  if (!native_bf16)
    CHECK_THAT(r.output,
               Catch::Contains("mixed_precision=none (and activation_dtype=float32) is faster"));
  auto losses = logged_losses(r.output);
  REQUIRE(losses.size() == 6);
  CHECK(losses.back() < losses.front() - 1.0);
  auto fp16 = run_command(trainer(data, dir / "fp16", 10, "--mixed_precision=fp16"));
  CHECK(fp16.exit_code == 1);
  CHECK_THAT(fp16.output, Catch::Contains("--mixed_precision=fp16 needs a CUDA device"));
}

TEST_CASE("t2t-trainer refuses --cuda_graphs on a CPU, naming the flag", "[trainer][e2e]") {
  TempDir dir("trainer_graphs");
  const std::string data = make_sample_data(dir);
  auto cpu = run_command(trainer(data, dir / "cpu", 10, "--cuda_graphs"));
  CHECK(cpu.exit_code == 2);
  CHECK_THAT(cpu.output, Catch::Contains("--cuda_graphs captures the training step on a GPU: it "
                                         "needs --device=cuda, not cpu"));
  CHECK_FALSE(std::filesystem::exists(dir / "cpu/model.ckpt-10.pt"));
}

TEST_CASE("a schedule that reads train_steps takes --train_steps, also in a resumed run",
          "[trainer][e2e]") {
  // The Evolved Transformer's sets decay the rate by one cosine cycle to
  // the end of training: T2T's trainer adds --train_steps to the hparams.
  TempDir dir("trainer_train_steps");
  const std::string data = make_sample_data(dir);
  const std::string out = dir / "run";
  auto run = [&](int steps) {
    return run_command(
        "./t2t-trainer --problem=translate_enzh_sample --model=evolved_transformer "
        "--hparams_set=evolved_transformer_tiny --hparams='hidden_size=32,num_heads=2,"
        "batch_size=512,learning_rate_warmup_steps=10' --data_dir=" + data + " --output_dir=" +
        out + " --train_steps=" + std::to_string(steps) +
        " --log_step_count_steps=10 --local_eval_frequency=1000 --threads=1");
  };
  auto first = run(20);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // The rate of the update to step s: 2 / sqrt(8000) times
  // cos(pi (s - 10) / (train_steps - 10)) / 2 + 1/2, 0 at the end.
  const double constant = 2.0 / std::sqrt(8000.0);
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::smatch m;
  REQUIRE(std::regex_search(first.output, m, std::regex("step 20: loss [0-9.]+, lr ([0-9.e-]+)")));
  CHECK(std::stod(m[1]) < 1e-6);
  CHECK_THAT(read(out + "/hparams.yaml"), Catch::Contains("train_steps: 20"));

  // Resumed with more steps: not refused as other hparams; the cycle now
  // ends at 40.
  auto second = run(40);
  INFO(second.output);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.output, Catch::Contains("resuming from"));
  REQUIRE(std::regex_search(second.output, m, std::regex("step 30: loss [0-9.]+, lr ([0-9.e-]+)")));
  const double pi = std::acos(-1.0);
  CHECK(std::stod(m[1]) == Approx(constant * (std::cos(pi * 20.0 / 30.0) / 2 + 0.5)).epsilon(0.02));
  CHECK_THAT(read(out + "/hparams.yaml"), Catch::Contains("train_steps: 40"));
}
