// The training loop of a long run: evaluations and checkpoints on their own
// cadences, refused flag values, BLEU at evaluation time, the best
// checkpoint, early stopping, stopping on a signal, warm starts. Unit tests
// of the pure pieces, then the real t2t-trainer on the bundled sample with
// a very small model (tens of steps a second on a CPU).
#include <torch/torch.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

// The bundled sample's data, made once per test binary run.
const std::string& sample_data() {
  static TempDir dir("trainer_loop_data");
  static const std::string data = dir / "data";
  static const bool made =
      run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code ==
      0;
  REQUIRE(made);
  return data;
}

const char* kTinyModel =
    "--problem=translate_enzh_sample --model=transformer --hparams_set=transformer_tiny "
    "--hparams='batch_size=512,hidden_size=64,filter_size=128,num_heads=2' --device=cpu "
    "--threads=1 ";

std::string trainer(const std::string& out, const std::string& extra) {
  return std::string("./t2t-trainer ") + kTinyModel + "--data_dir=" + sample_data() +
         " --output_dir=" + out + " --eval_steps=2 --log_step_count_steps=10 " + extra;
}

// The steps of the "eval at step N" lines of a log.
std::vector<int64_t> eval_steps_logged(const std::string& log) {
  std::vector<int64_t> steps;
  std::regex re("eval at step (\\d+):");
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
    steps.push_back(std::stoll((*it)[1]));
  return steps;
}

std::vector<int64_t> checkpoint_steps(const std::string& dir) {
  std::vector<int64_t> steps;
  for (const auto& path : t2t::list_checkpoints(dir)) steps.push_back(t2t::checkpoint_step(path));
  return steps;
}

}  // namespace

TEST_CASE("evaluations and checkpoints keep their own cadences", "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_cadence");
  // Evaluating more often than saving: no checkpoint is made for it.
  auto often = run_command(trainer(dir / "eval_often", "--train_steps=30 "
                                   "--local_eval_frequency=10 --save_checkpoints_steps=30"));
  INFO(often.output);
  REQUIRE(often.exit_code == 0);
  CHECK(eval_steps_logged(often.output) == std::vector<int64_t>{10, 20, 30});
  CHECK(checkpoint_steps(dir / "eval_often") == std::vector<int64_t>{30});

  // Saving more often than evaluating; a last step off both cadences gets both.
  auto rarely = run_command(trainer(dir / "eval_rarely", "--train_steps=35 "
                                    "--local_eval_frequency=30 --save_checkpoints_steps=10"));
  INFO(rarely.output);
  REQUIRE(rarely.exit_code == 0);
  CHECK(eval_steps_logged(rarely.output) == std::vector<int64_t>{30, 35});
  CHECK(checkpoint_steps(dir / "eval_rarely") == std::vector<int64_t>{10, 20, 30, 35});

  // --schedule=train never evaluates.
  auto train_only = run_command(trainer(dir / "train_only", "--train_steps=20 "
                                        "--local_eval_frequency=10 --schedule=train"));
  INFO(train_only.output);
  REQUIRE(train_only.exit_code == 0);
  CHECK(eval_steps_logged(train_only.output).empty());
  CHECK(checkpoint_steps(dir / "train_only") == std::vector<int64_t>{10, 20});
}

TEST_CASE("numeric trainer flags out of range are refused, naming the flag",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_flags");
  const std::string base = std::string("./t2t-trainer ") + kTinyModel +
                           "--data_dir=" + (dir / "no_data") + " --output_dir=" + (dir / "run");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--train_steps=-5", "--train_steps=-5 must be at least 1"},
      {"--train_steps=0", "--train_steps=0 must be at least 1"},
      {"--eval_steps=0", "--eval_steps=0 must be at least 1"},
      {"--local_eval_frequency=-1", "--local_eval_frequency=-1 must be at least 1"},
      {"--log_step_count_steps=0", "--log_step_count_steps=0 must be at least 1"},
      {"--max_nonfinite_steps=0", "--max_nonfinite_steps=0 must be at least 1"},
      {"--save_checkpoints_steps=-10", "--save_checkpoints_steps=-10 must be 0"},
      {"--save_checkpoints_secs=-1", "--save_checkpoints_secs=-1 must be 0"},
      {"--keep_checkpoint_max=-2", "--keep_checkpoint_max=-2 must be 0"},
  };
  for (const auto& [flag, message] : cases) {
    auto r = run_command(base + " " + flag);
    INFO(flag << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(message));
  }
  // Nothing was created for a refused command line.
  CHECK_FALSE(fs::exists(dir / "run"));
}
