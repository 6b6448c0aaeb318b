// t2t-avg-all --wait_minutes and --min_steps on a real training run: the
// run's checkpoints are copied one by one into a directory that the tool
// follows, and each new one gets its average of the newest --n.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::ckpt;
using t2t::test::CommandResult;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// As the trainer writes them: whole, under the final name at once.
void copy_in(const std::string& from, const std::string& to_dir) {
  const fs::path to = fs::path(to_dir) / fs::path(from).filename();
  fs::copy_file(from, to.string() + ".part");
  fs::rename(to.string() + ".part", to);
}

bool wait_for(const std::string& path, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return fs::exists(path);
}

// The average of checkpoints a and b, as t2t-avg-all makes it.
void check_mean(const std::string& avg, const std::string& a, const std::string& b) {
  const auto x = t2t::read_checkpoint_tensors(avg, nullptr);
  const auto ta = t2t::read_checkpoint_tensors(a, nullptr), tb = t2t::read_checkpoint_tensors(b, nullptr);
  REQUIRE(x.size() == ta.size());
  for (const auto& [name, t] : x) {
    INFO(avg << ": " << name);
    if (!t.is_floating_point()) continue;
    const auto want =
        ((ta.at(name).to(torch::kFloat64) + tb.at(name).to(torch::kFloat64)) / 2).to(t.scalar_type());
    REQUIRE(t.equal(want));
  }
}

}  // namespace

TEST_CASE("t2t-avg-all --wait_minutes averages each new checkpoint of a run", "[avg_wait][e2e]") {
  TempDir dir("avg_wait");
  const std::string data = dir / "data", run = dir / "run", follow = dir / "follow",
                    avg = dir / "avg";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data)
              .exit_code == 0);
  const auto trained = run_command(
      "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
      "--hparams_set=transformer_tiny --hparams='batch_size=256,hidden_size=32,filter_size=64,"
      "num_heads=2' --data_dir=" + data + " --output_dir=" + run +
      " --train_steps=8 --save_checkpoints_steps=2 --keep_checkpoint_max=0 --schedule=train "
      "--device=cpu");
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  for (int step : {2, 4, 6, 8}) REQUIRE(fs::exists(ckpt(run, step)));

  fs::create_directories(follow);
  fs::copy_file(fs::path(run) / "hparams.yaml", fs::path(follow) / "hparams.yaml");
  copy_in(ckpt(run, 2), follow);
  CommandResult r;
  std::thread tool([&] {
    // 0.1 minutes: 6 s without a new checkpoint ends it.
    r = run_command("timeout 120 ./t2t-avg-all --model_dir=" + follow + " --output_dir=" + avg +
                    " --n=2 --wait_minutes=0.1");
  });
  // Each checkpoint goes in once the previous one's average is there.
  bool followed = wait_for(ckpt(avg, 2), 30);
  for (int step : {4, 6, 8}) {
    if (!followed) break;
    copy_in(ckpt(run, step), follow);
    followed = wait_for(ckpt(avg, step), 30);
  }
  tool.join();
  INFO(r.output);
  REQUIRE(followed);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("averaged 1 checkpoint(s) into " + ckpt(avg, 2)));
  CHECK_THAT(r.output,
             Catch::Contains("averaged 2 checkpoint(s) into " + ckpt(avg, 8) + " (steps 6 to 8)"));
  CHECK_THAT(r.output, Catch::Contains("no new checkpoint in " + follow + " for 0.1 minute(s)"));
  CHECK(t2t::list_checkpoints(avg).size() == 4);
  CHECK(t2t::latest_checkpoint(avg) == ckpt(avg, 8));
  CHECK(fs::exists(fs::path(avg) / "hparams.yaml"));
  for (int step : {4, 6, 8}) check_mean(ckpt(avg, step), ckpt(run, step - 2), ckpt(run, step));

  {  // --min_steps leaves out the early checkpoints
    r = run_command("./t2t-avg-all --model_dir=" + run + " --output_dir=" + (dir / "late") +
                    " --min_steps=5");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("averaged 2 checkpoint(s) into " +
                                         ckpt(dir / "late", 8) + " (steps 6 to 8)"));
    check_mean(ckpt(dir / "late", 8), ckpt(run, 6), ckpt(run, 8));
    r = run_command("./t2t-avg-all --model_dir=" + run + " --min_steps=9");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("of at least --min_steps=9 steps"));
  }
  {  // waiting in vain, and flags that do not go together
    fs::create_directories(dir / "empty");
    r = run_command("./t2t-avg-all --model_dir=" + (dir / "empty") + " --wait_minutes=0.01");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("none came within --wait_minutes"));
    r = run_command("./t2t-avg-all --model_dir=" + run +
                    " --checkpoints=model.ckpt-2.pt --wait_minutes=1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--wait_minutes chooses among --model_dir's"));
    r = run_command("./t2t-avg-all --model_dir=" + run + " --wait_minutes=-1");
    CHECK(r.exit_code == 2);
  }
}
