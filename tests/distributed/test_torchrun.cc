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
#include "tests/support/background_process.h"
#include "tests/support/test_util.h"
#include "tests/support/torchrun_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::TempDir;
using t2t::test::torchrun;
using t2t::test::trainers_of;
using t2t::test::wait_trainers_gone;
const auto trainer_flags = t2t::test::tiny_trainer_flags;

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
  INFO(agent.log());
  CHECK(wait_trainers_gone(orphaned, 20).empty());
  CHECK_THAT(agent.log(), Contains("its launcher (pid") && Contains("is gone; exiting now"));
}

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
  t2t::test::check_same_weights(straight + "/model.ckpt-60.pt", killed + "/model.ckpt-60.pt");
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
  // No file under --output_dir is left half-written.
  CHECK(t2t::test::check_files_complete(out) == std::stoll(step));
}
