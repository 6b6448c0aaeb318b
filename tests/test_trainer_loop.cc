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
#include "t2t/io/tfrecord.h"
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

// The eval event records of a run that carry the scalar tag `tag`.
int events_with_tag(const std::string& eval_dir, const std::string& tag) {
  const std::string wire = std::string("\x0a") + static_cast<char>(tag.size()) + tag;
  int found = 0;
  for (const auto& e : fs::directory_iterator(eval_dir)) {
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
    t2t::TFRecordReader reader(e.path().string());
    std::string record;
    while (reader.next(&record)) found += record.find(wire) != std::string::npos;
  }
  return found;
}

// The first `n` lines of a sample file, written to `path`.
void head_of_sample(const std::string& name, size_t n, const std::string& path) {
  auto lines = t2t::test::read_lines(T2T_SOURCE_DIR "/data/sample/" + name);
  lines.resize(n);
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
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

TEST_CASE("--eval_bleu decodes the dev split at each evaluation and scores it",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_bleu");
  const std::string out = dir / "run";
  auto r = run_command(trainer(out, "--train_steps=20 --local_eval_frequency=10 --eval_bleu "
                                    "--decode_hparams='beam_size=2,num_samples=12'"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("BLEU at step 10 on 12 sentences of the dev split"));
  CHECK_THAT(r.output, Catch::Contains("tok:zh"));  // the sample's targets are Chinese
  CHECK(events_with_tag(out + "/eval", "BLEU") == 2);
  CHECK(t2t::test::read_lines(out + "/eval/bleu.decodes").size() == 12);
  // The score is t2t-bleu's on the translations and references written.
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m,
                            std::regex("BLEU at step 20 [^\n]*: BLEU = ([0-9.]+) ")));
  auto bleu = run_command("./t2t-bleu --translation=" + out + "/eval/bleu.decodes --reference=" +
                          out + "/eval/bleu.targets --bleu_variant=cased");
  INFO(bleu.output);
  CHECK_THAT(bleu.output, Catch::StartsWith("BLEU_cased = " + std::string(m[1])));
}

TEST_CASE("--eval_bleu with --decode_from_file scores against --decode_reference",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_bleu_file");
  const std::string src = dir / "src.en", ref = dir / "ref.zh", short_ref = dir / "short.zh";
  head_of_sample("dev.en", 6, src);
  head_of_sample("dev.zh", 6, ref);
  head_of_sample("dev.zh", 5, short_ref);
  const std::string from = " --decode_from_file=" + src;
  auto r = run_command(trainer(dir / "run", "--train_steps=10 --local_eval_frequency=10 "
                                            "--eval_bleu --decode_hparams=beam_size=1" + from +
                                            " --decode_reference=" + ref));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("BLEU at step 10 on 6 sentences of " + src));
  CHECK(t2t::test::read_lines(dir / "run/eval/bleu.decodes").size() == 6);

  // Mistakes show before training, naming the flag.
  auto mismatch = run_command(trainer(dir / "bad1", "--train_steps=10 --eval_bleu" + from +
                                                    " --decode_reference=" + short_ref));
  CHECK(mismatch.exit_code == 1);
  CHECK_THAT(mismatch.output, Catch::Contains("has 6 lines but --decode_reference="));
  auto no_ref = run_command(trainer(dir / "bad2", "--train_steps=10 --eval_bleu" + from));
  CHECK(no_ref.exit_code == 1);
  CHECK_THAT(no_ref.output, Catch::Contains("needs --decode_reference"));
  auto no_bleu = run_command(trainer(dir / "bad3", "--train_steps=10 --decode_reference=" + ref));
  CHECK(no_bleu.exit_code == 2);
  CHECK_THAT(no_bleu.output, Catch::Contains("--decode_reference is for --eval_bleu"));
  auto train_only =
      run_command(trainer(dir / "bad4", "--train_steps=10 --eval_bleu --schedule=train"));
  CHECK(train_only.exit_code == 2);
  CHECK_THAT(train_only.output, Catch::Contains("--schedule=train makes none"));
  for (const char* bad : {"bad1", "bad2", "bad3", "bad4"}) CHECK_FALSE(fs::exists(dir / bad));
}
