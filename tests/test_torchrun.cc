// t2t-trainer under the real torchrun (from the tests' virtualenv), started
// as users start it: torchrun --nproc_per_node=2 --no-python t2t-trainer ...
// on one host, over Gloo. A worker must not outlive torchrun's agent: killed
// with SIGKILL, the agent leaves its workers (each in a session of its own)
// behind, and they must stop instead of training on into --output_dir.
#include <ATen/core/Tensor.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/background_process.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// torchrun beside the tests' Python, or "" when that Python has no torch.
std::string torchrun() {
  const fs::path path = fs::path(T2T_TEST_PYTHON).parent_path() / "torchrun";
  return fs::exists(path) ? path.string() : "";
}

std::string trainer_flags(const std::string& data, const std::string& out) {
  return "--problem=translate_enzh_sample --model=transformer --hparams_set=transformer_tiny "
         "--hparams='batch_size=512,hidden_size=64,filter_size=128,num_heads=2' --device=cpu "
         "--threads=1 --schedule=train --log_step_count_steps=10 --data_dir=" + data +
         " --output_dir=" + out;
}

// The t2t-trainer processes whose command line names `out`.
std::vector<pid_t> trainers_of(const std::string& out) {
  std::vector<pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream comm_in(e.path() / "comm");
    std::string comm;
    std::getline(comm_in, comm);
    if (comm == "t2t-trainer" && cmdline.find(out) != std::string::npos)
      found.push_back(std::stoi(name));
  }
  return found;
}

}  // namespace

TEST_CASE("torchrun --nproc_per_node=2 trains, and a worker does not outlive a killed agent",
          "[distributed][torchrun][e2e]") {
  const std::string launcher = torchrun();
  if (launcher.empty()) T2T_SKIP("no torchrun beside " << T2T_TEST_PYTHON);
  TempDir dir("torchrun");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code == 0);
  const std::string start = launcher + " --standalone --nproc_per_node=2 --no-python ./t2t-trainer ";

  // A whole run: both workers train, the chief saves their positions.
  const std::string out = dir / "run";
  auto r = run_command(start + trainer_flags(data, out) + " --train_steps=30");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("worker 0 of 2 joined (gloo on cpu)"));
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(out + "/model.ckpt-30.pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);

  // The agent killed with SIGKILL: its workers end within seconds, saying why.
  const std::string orphaned = dir / "orphaned";
  t2t::test::BackgroundProcess agent(start + trainer_flags(data, orphaned) +
                                         " --train_steps=1000000",
                                     dir / "agent.log");
  REQUIRE(agent.wait_for("\\] step 20: loss", 120));
  REQUIRE(trainers_of(orphaned).size() == 2);
  agent.signal(SIGKILL);
  agent.wait_exit();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!trainers_of(orphaned).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  INFO(agent.log());
  const auto left = trainers_of(orphaned);
  for (pid_t pid : left) ::kill(pid, SIGKILL);  // the test leaves nothing running
  CHECK(left.empty());
  CHECK_THAT(agent.log(), Contains("its launcher (pid") && Contains("is gone; exiting now"));
}

namespace {

// The model's tensors of a checkpoint, by name.
t2t::TensorMap model_tensors(const std::string& path) {
  t2t::CheckpointMeta meta;
  return t2t::read_checkpoint_tensors(path, &meta);
}

}  // namespace

TEST_CASE("torchrun --max_restarts: a worker killed with -9, the group restarts and ends where "
          "an uninterrupted run ends",
          "[distributed][torchrun][e2e]") {
  const std::string launcher = torchrun();
  if (launcher.empty()) T2T_SKIP("no torchrun beside " << T2T_TEST_PYTHON);
  TempDir dir("torchrun_restart");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code == 0);
  const std::string start = launcher + " --standalone --nproc_per_node=2 --max_restarts=2 "
                                       "--no-python ./t2t-trainer ";
  const std::string steps = " --train_steps=60 --save_checkpoints_steps=20";
  const std::string straight = dir / "straight";
  auto r = run_command(start + trainer_flags(data, straight) + steps);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  const std::string killed = dir / "killed";
  t2t::test::BackgroundProcess agent(start + trainer_flags(data, killed) + steps,
                                     dir / "agent.log");
  REQUIRE(agent.wait_for("\\] step 30: loss", 120));
  const auto workers = trainers_of(killed);
  REQUIRE(!workers.empty());
  ::kill(workers.back(), SIGKILL);
  const int status = agent.wait_exit(180);
  INFO(agent.log());
  CHECK(status == 0);
  CHECK_THAT(agent.log(), Contains("resuming from " + killed + "/model.ckpt-20.pt at step 20"));
  // Bit-exact on the CPU: every input position and random state came back.
  const auto a = model_tensors(straight + "/model.ckpt-60.pt");
  const auto b = model_tensors(killed + "/model.ckpt-60.pt");
  REQUIRE(a.size() == b.size());
  REQUIRE(!a.empty());
  size_t equal = 0;
  for (const auto& [key, t] : a) equal += b.count(key) && t.equal(b.at(key));
  CHECK(equal == a.size());
}

TEST_CASE("SIGTERM to torchrun's agent: every worker stops at one step with one checkpoint",
          "[distributed][torchrun][e2e]") {
  const std::string launcher = torchrun();
  if (launcher.empty()) T2T_SKIP("no torchrun beside " << T2T_TEST_PYTHON);
  TempDir dir("torchrun_sigterm");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code == 0);
  const std::string out = dir / "run";
  t2t::test::BackgroundProcess agent(launcher + " --standalone --nproc_per_node=2 --no-python "
                                     "./t2t-trainer " + trainer_flags(data, out) +
                                     " --train_steps=1000000 --save_checkpoints_steps=100000",
                                     dir / "agent.log");
  REQUIRE(agent.wait_for("\\] step 20: loss", 120));
  agent.signal(SIGTERM);
  agent.wait_exit(120);
  INFO(agent.log());
  std::smatch m;
  const std::string log = agent.log();
  REQUIRE(std::regex_search(log, m, std::regex("stopped at step (\\d+) of 1000000 \\(SIGTERM\\): saved")));
  const std::string step = m[1];
  CHECK(fs::exists(out + "/model.ckpt-" + step + ".pt"));
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(out + "/model.ckpt-" + step + ".pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);
  CHECK(trainers_of(out).empty());
  // No file under --output_dir is left half-written under a temporary name.
  for (const auto& f : fs::recursive_directory_iterator(out))
    CHECK(f.path().filename().string().find(".tmp") == std::string::npos);
}
