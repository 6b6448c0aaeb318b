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
#include "t2t/core/file_util.h"
#include "t2t/io/tfrecord.h"
#include "t2t/train/best_checkpoint.h"
#include "t2t/train/early_stopping.h"
#include "t2t/train/eval_decisions.h"
#include "t2t/train/eval_metrics.h"
#include "t2t/train/stop_request.h"
#include "t2t/train/trainer.h"
#include "t2t/core/hparams.h"
#include "t2t/core/runtime.h"
#include "t2t/model/t2t_model.h"
#include "tests/support/background_process.h"
#include "tests/support/test_util.h"

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
    "--device=cpu --threads=1 ";
const char* kTinyHparams = "--hparams='batch_size=512,hidden_size=64,filter_size=128,num_heads=2' ";

// A test's own --hparams replaces the default one: a flag is given once.
std::string trainer(const std::string& out, const std::string& extra) {
  const bool own = extra.find("--hparams=") != std::string::npos;
  return std::string("./t2t-trainer ") + kTinyModel + (own ? "" : kTinyHparams) +
         "--data_dir=" + sample_data() + " --output_dir=" + out +
         " --eval_steps=2 --log_step_count_steps=10 " + extra;
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
  auto lines = t2t::test::read_lines(t2t::test::source_dir() + "/data/sample/" + name);
  lines.resize(n);
  t2t::test::write_lines(path, lines);
}

// A t2t-trainer started in the background, for the tests that signal it.
using TrainerProcess = t2t::test::BackgroundProcess;

// A process's name as the kernel keeps it (what pgrep and top show).
std::string process_name(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}


// The step of the "stopped at step N" line, -1 without one.
int64_t stopped_step(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("stopped at step (\\d+) of"))) return -1;
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("evaluations and checkpoints keep their own cadences", "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_cadence");
  // Evaluating more often than saving: no checkpoint is made for it (unless
  // it finds a new best, which --best_metric=none turns off).
  auto often = run_command(trainer(dir / "eval_often", "--train_steps=30 --best_metric=none "
                                   "--local_eval_frequency=10 --save_checkpoints_steps=30"));
  INFO(often.output);
  REQUIRE(often.exit_code == 0);
  CHECK(eval_steps_logged(often.output) == std::vector<int64_t>{10, 20, 30});
  CHECK(checkpoint_steps(dir / "eval_often") == std::vector<int64_t>{30});

  // Saving more often than evaluating; a last step off both cadences gets both.
  auto rarely = run_command(trainer(dir / "eval_rarely", "--train_steps=35 --best_metric=none "
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
  const std::string base = std::string("./t2t-trainer ") + kTinyModel + kTinyHparams +
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

TEST_CASE("t2t-trainer --eval_bleu decodes the dev split at each evaluation and scores it",
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

TEST_CASE("t2t-trainer --eval_bleu with --decode_from_file scores against --decode_reference",
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

  // Two references and every decoded metric; TER (lower is better) keeps the best.
  const std::string ref_b = dir / "ref_b.zh";
  t2t::write_file_atomic(ref_b, "我\n你\n他\n她\n它\n我们\n");
  r = run_command(trainer(dir / "run2", "--train_steps=10 --local_eval_frequency=10 "
                                        "--eval_bleu --decode_hparams=beam_size=1" + from +
                                        " --decode_reference=" + ref + "," + ref_b +
                                        " --eval_decode_metrics=bleu,chrf,chrf++,ter "
                                        "--best_metric=ter"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("BLEU, chrF2, chrF2++, TER at step 10 on 6 sentences"));
  CHECK_THAT(r.output, Catch::Contains("nrefs:2|case:mixed|eff:no|tok:zh|"));
  CHECK_THAT(r.output, Catch::Contains("nrefs:2|case:lc|tok:tercom|"));
  for (const char* tag : {"BLEU", "chrF2", "chrF2++", "TER"})
    CHECK(events_with_tag(dir / "run2/eval", tag) == 1);
  CHECK_THAT(t2t::read_file(dir / "run2/best/best.yaml"), Catch::Contains("metric: ter"));
  // The logged TER is t2t-bleu's on the same translations and references.
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex("TER = ([0-9.]+) ")));
  auto ter = run_command("./t2t-bleu --metric=ter --bleu_variant=uncased --translation=" +
                         (dir / "run2/eval/bleu.decodes") + " --reference=" + ref +
                         " --reference=" + ref_b);
  CHECK_THAT(ter.output, Catch::StartsWith("TER_uncased = " + std::string(m[1]) + "\n"));

  // Mistakes show before training, naming the flag.
  auto mismatch = run_command(trainer(dir / "bad1", "--train_steps=10 --eval_bleu" + from +
                                                    " --decode_reference=" + short_ref));
  CHECK(mismatch.exit_code == 1);
  CHECK_THAT(mismatch.output, Catch::Contains("has 6 lines but --decode_reference="));
  auto capped = run_command(trainer(dir / "bad5", "--train_steps=10 --eval_bleu" + from +
                                                   " --decode_reference=" + ref +
                                                   " --decode_hparams=num_samples=3"));
  CHECK(capped.exit_code == 1);
  CHECK_THAT(capped.output, Catch::Contains("--decode_hparams num_samples caps the dev split"));
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
  for (const char* bad : {"bad1", "bad2", "bad3", "bad4", "bad5"})
    CHECK_FALSE(fs::exists(dir / bad));
}

// ---- The best checkpoint and early stopping ----

TEST_CASE("early stopping follows T2T's plateau rule", "[trainer_loop]") {
  using History = std::vector<std::pair<int64_t, double>>;
  // Reference: the last evaluation at least 200 steps before the latest
  // (step 100, 5.0); nothing since gained 0.1.
  CHECK(t2t::has_plateaued(History{{100, 5.0}, {200, 4.95}, {300, 4.93}}, 200, 0.1, true));
  CHECK_FALSE(t2t::has_plateaued(History{{100, 5.0}, {200, 4.95}, {300, 4.85}}, 200, 0.1, true));
  // A gain of exactly delta counts as progress.
  CHECK_FALSE(t2t::has_plateaued(History{{100, 5.0}, {200, 4.75}}, 100, 0.25, true));
  // An improvement inside the window that was lost again still counts.
  CHECK_FALSE(t2t::has_plateaued(History{{100, 5.0}, {200, 4.8}, {300, 5.0}}, 200, 0.1, true));
  // Not enough history: one evaluation, or none old enough.
  CHECK_FALSE(t2t::has_plateaued(History{{100, 5.0}}, 100, 0.1, true));
  CHECK_FALSE(t2t::has_plateaued(History{{100, 5.0}, {200, 5.0}, {300, 5.0}}, 250, 0.1, true));
  // Upwards metrics (BLEU): a fall is no progress, a rise of delta is.
  CHECK(t2t::has_plateaued(History{{100, 10.0}, {200, 10.05}, {300, 9.0}}, 200, 0.1, false));
  CHECK_FALSE(t2t::has_plateaued(History{{100, 10.0}, {200, 10.2}}, 100, 0.1, false));
  // The reference is the latest old enough evaluation, not the first.
  CHECK(t2t::has_plateaued(History{{100, 9.0}, {200, 5.0}, {300, 4.95}}, 100, 0.1, true));
  // A NaN evaluation is no progress.
  CHECK(t2t::has_plateaued(History{{100, 5.0}, {200, std::nan("")}}, 100, 0.1, true));

  t2t::EarlyStoppingOptions options;
  options.steps = 200;
  auto why = t2t::early_stopping_reason(History{{100, 5.0}, {200, 4.95}, {300, 4.93}}, options);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("loss has not decreased by 0.1 or more in 200 steps"));
  CHECK_THAT(*why, Catch::Contains("5 at step 100, at best 4.93 since"));
  options.steps = 0;  // off
  CHECK_FALSE(t2t::early_stopping_reason(History{{100, 5.0}, {300, 5.0}}, options));
}

TEST_CASE("the best checkpoint is kept by its metric's direction and read back",
          "[trainer_loop]") {
  CHECK(t2t::improves_on(std::nullopt, 3.0, false));
  CHECK_FALSE(t2t::improves_on(std::nullopt, std::nan(""), false));
  const t2t::BestRecord best{"loss", 2.0, 10, "model.ckpt-10.pt"};
  CHECK(t2t::improves_on(best, 1.9, false));
  CHECK_FALSE(t2t::improves_on(best, 2.0, false));  // a tie keeps the older
  CHECK_FALSE(t2t::improves_on(best, 2.1, false));
  CHECK(t2t::improves_on(best, 2.1, true));
  CHECK_FALSE(t2t::improves_on(best, std::nan(""), true));

  TempDir dir("trainer_loop_best_unit");
  const std::string run = dir / "run";
  t2t::write_file_atomic(run + "/model.ckpt-10.pt", "ten");
  t2t::write_file_atomic(run + "/model.ckpt-20.pt", "twenty");
  t2t::write_file_atomic(run + "/hparams.yaml", "hidden_size: 64\n");
  const t2t::EvalMetricInfo& loss = *t2t::find_eval_metric("loss");
  {
    t2t::BestCheckpoint keeper(run, loss);
    CHECK_FALSE(keeper.best());
    keeper.record(run + "/model.ckpt-10.pt", 10, 2.5);
    keeper.record(run + "/model.ckpt-20.pt", 20, 2.0);
  }
  const std::string best_dir = t2t::BestCheckpoint::dir_of(run);
  // One checkpoint, the latest best, named by the index as in a run directory.
  CHECK(t2t::list_checkpoints(best_dir) == std::vector<std::string>{best_dir + "/model.ckpt-20.pt"});
  CHECK(t2t::latest_checkpoint(best_dir) == best_dir + "/model.ckpt-20.pt");
  CHECK(t2t::read_file(best_dir + "/model.ckpt-20.pt") == "twenty");
  CHECK(t2t::read_file(best_dir + "/hparams.yaml") == "hidden_size: 64\n");
  // A restart reads it back: worse values do not replace it.
  t2t::BestCheckpoint again(run, loss);
  REQUIRE(again.best());
  CHECK(again.best()->step == 20);
  CHECK(again.best()->value == 2.0);
  CHECK_FALSE(again.improves(2.2));
  CHECK(again.improves(1.5));
  // Kept by another metric: not comparable, so not a bar to clear.
  t2t::BestCheckpoint by_bleu(run, *t2t::find_eval_metric("bleu"));
  CHECK_FALSE(by_bleu.best());
}

TEST_CASE("the evaluation history survives a restart, cut at the resumed step",
          "[trainer_loop]") {
  TempDir dir("trainer_loop_history");
  const std::string path = dir / "eval/history.yaml";
  {
    t2t::EvalHistory history(path, 0);
    history.record(10, {{"loss", 3.0}, {"accuracy", 0.1}});
    history.record(20, {{"loss", 2.5}, {"accuracy", 0.2}, {"bleu", 1.5}});
    history.record(30, {{"loss", 2.0}});
  }
  t2t::EvalHistory resumed(path, 20);
  CHECK(resumed.size() == 2);
  using Series = std::vector<std::pair<int64_t, double>>;
  CHECK(resumed.series("loss") == Series{{10, 3.0}, {20, 2.5}});
  CHECK(resumed.series("bleu") == Series{{20, 1.5}});
  t2t::write_file_atomic(path, "loss: [1, 2\n");
  CHECK_THROWS_WITH(t2t::EvalHistory(path, 100), Catch::Contains(path));
}

TEST_CASE("evaluations decide the best step and the stop, and a restart takes them up",
          "[trainer_loop]") {
  TempDir dir("trainer_loop_decisions");
  t2t::TrainOptions o;
  o.output_dir = dir / "run";
  o.best_metric = "bleu";
  o.early_stopping = {20, "bleu", 0.5, false};
  for (int step : {10, 20, 30, 40})
    t2t::write_file_atomic(o.output_dir + "/model.ckpt-" + std::to_string(step) + ".pt", "x");
  {
    t2t::EvalDecisions decisions(o, 0);
    auto d = decisions.add(10, {{"bleu", 5.0}, {"loss", 3.0}});
    CHECK((d.new_best && !d.stop));
    decisions.keep_best(o.output_dir + "/model.ckpt-10.pt", 10);
    d = decisions.add(20, {{"bleu", 8.0}});
    CHECK((d.new_best && !d.stop));
    decisions.keep_best(o.output_dir + "/model.ckpt-20.pt", 20);
    d = decisions.add(30, {{"bleu", 7.0}});
    CHECK((!d.new_best && !d.stop));
    CHECK_THAT(decisions.best_summary(), Catch::Contains("by bleu is step 20"));
  }
  // Restarted from step 30: 8.2 beats the best read back, and nothing since
  // step 20 gained 0.5.
  t2t::EvalDecisions restarted(o, 30);
  CHECK_FALSE(restarted.stop_reason());
  auto d = restarted.add(40, {{"bleu", 8.2}});
  CHECK(d.new_best);
  CHECK(d.stop);
  CHECK_THAT(restarted.stop_reason().value_or(""), Catch::Contains("bleu has not increased"));
}

TEST_CASE("the best checkpoint by loss lands in best/, also between saves, and survives a "
          "restart", "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_best");
  const std::string out = dir / "run";
  // Evaluations every 10 steps, saves every 1000: each new best gets a checkpoint.
  const std::string flags = "--local_eval_frequency=10 --save_checkpoints_steps=1000 "
                            "--hparams='batch_size=512,hidden_size=64,filter_size=128,"
                            "num_heads=2,learning_rate_warmup_steps=10'";
  auto r = run_command(trainer(out, "--train_steps=30 " + flags));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("new best loss"));
  const std::string best = out + "/best";
  const auto kept = t2t::list_checkpoints(best);
  REQUIRE(kept.size() == 1);
  const int64_t best_step = t2t::checkpoint_step(kept[0]);
  CHECK(best_step % 10 == 0);
  // The step evaluated got a checkpoint of its own, off the saving cadence.
  CHECK(fs::exists(out + "/model.ckpt-" + std::to_string(best_step) + ".pt"));
  const std::string record = t2t::read_file(best + "/best.yaml");
  CHECK_THAT(record, Catch::Contains("metric: loss"));
  CHECK_THAT(record, Catch::Contains("step: " + std::to_string(best_step)));

  // t2t-decoder loads it as a run directory.
  const std::string src = dir / "src.en";
  head_of_sample("dev.en", 3, src);
  auto decoded = run_command("./t2t-decoder --problem=translate_enzh_sample --model=transformer "
                             "--data_dir=" + sample_data() + " --output_dir=" + out +
                             " --checkpoint_path=" + best + " --decode_from_file=" + src +
                             " --decode_to_file=" + (dir / "out.zh") + " --device=cpu");
  INFO(decoded.output);
  CHECK(decoded.exit_code == 0);
  CHECK_THAT(decoded.output, Catch::Contains(kept[0]));
  CHECK(t2t::test::read_lines(dir / "out.zh").size() == 3);

  // After a restart the recorded value is the bar: a best that no loss
  // reaches is kept, and nothing replaces it.
  t2t::write_file_atomic(best + "/best.yaml", "metric: loss\nvalue: 0.001\nstep: " +
                                                  std::to_string(best_step) +
                                                  "\ncheckpoint: model.ckpt-" +
                                                  std::to_string(best_step) + ".pt\n");
  auto resumed = run_command(trainer(out, "--train_steps=50 " + flags));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.output, Catch::Contains("best checkpoint so far: step " +
                                             std::to_string(best_step) + " with loss 0.0010"));
  CHECK_THAT(resumed.output, !Catch::Contains("new best"));
  CHECK(t2t::list_checkpoints(best) == kept);
  // keep_checkpoint_max prunes the run directory, never best/.
  auto pruned = run_command(trainer(out, "--train_steps=60 --keep_checkpoint_max=1 " + flags));
  REQUIRE(pruned.exit_code == 0);
  CHECK(checkpoint_steps(out) == std::vector<int64_t>{60});
  CHECK(t2t::list_checkpoints(best) == kept);
}

TEST_CASE("early stopping ends a run with a checkpoint, and a restart stops at once",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_early");
  const std::string out = dir / "run";
  // No 10-step window improves the loss by 100: training stops at the third
  // evaluation (step 30), the first with one 20 steps before it.
  const std::string command =
      trainer(out, "--train_steps=1000 --local_eval_frequency=10 --save_checkpoints_steps=1000 "
                   "--best_metric=none --eval_early_stopping_steps=20 "
                   "--eval_early_stopping_metric_delta=100");
  auto r = run_command(command);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("early stopping at step 30: loss has not decreased by "
                                       "100 or more in 20 steps"));
  CHECK(checkpoint_steps(out) == std::vector<int64_t>{30});
  CHECK(eval_steps_logged(r.output) == std::vector<int64_t>{10, 20, 30});
  auto again = run_command(command);
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("this run stopped early before"));
  CHECK(eval_steps_logged(again.output).empty());
  CHECK(checkpoint_steps(out) == std::vector<int64_t>{30});

  // Metric names and directions are checked before anything runs.
  auto bleu = run_command(trainer(dir / "bad1", "--eval_early_stopping_steps=10 "
                                                "--eval_early_stopping_metric=bleu"));
  CHECK(bleu.exit_code == 2);
  CHECK_THAT(bleu.output, Catch::Contains("--eval_early_stopping_metric=bleu needs --eval_bleu"));
  auto upwards = run_command(trainer(dir / "bad2", "--eval_early_stopping_steps=10 "
                                                   "--eval_early_stopping_metric=accuracy"));
  CHECK(upwards.exit_code == 2);
  CHECK_THAT(upwards.output, Catch::Contains("--eval_early_stopping_metric_minimize=false"));
  auto unknown = run_command(trainer(dir / "bad3", "--best_metric=blue"));
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("loss, bleu, chrf, chrf++, ter, accuracy, "
                                             "accuracy_top5, neg_log_perplexity, "
                                             "approx_bleu_score, or none"));
  auto best_bleu = run_command(trainer(dir / "bad4", "--best_metric=bleu"));
  CHECK(best_bleu.exit_code == 2);
  CHECK_THAT(best_bleu.output, Catch::Contains("--best_metric=bleu needs --eval_bleu"));
  // A decoded metric the evaluations do not compute would never decide.
  auto ter = run_command(trainer(dir / "bad7", "--eval_bleu --best_metric=ter"));
  CHECK(ter.exit_code == 2);
  CHECK_THAT(ter.output, Catch::Contains("--best_metric=ter scores decoded translations: it "
                                         "needs --eval_bleu with ter among "
                                         "--eval_decode_metrics"));
  auto ter_up = run_command(trainer(dir / "bad8", "--eval_bleu --eval_decode_metrics=ter "
                                                  "--eval_early_stopping_steps=10 "
                                                  "--eval_early_stopping_metric=ter "
                                                  "--eval_early_stopping_metric_minimize=false"));
  CHECK(ter_up.exit_code == 2);
  CHECK_THAT(ter_up.output, Catch::Contains("ter improves as it falls"));
  auto train_only = run_command(trainer(dir / "bad5", "--eval_early_stopping_steps=10 "
                                                      "--schedule=train"));
  CHECK(train_only.exit_code == 2);
  auto negative = run_command(trainer(dir / "bad6", "--eval_early_stopping_steps=-1"));
  CHECK(negative.exit_code == 2);
  CHECK_THAT(negative.output, Catch::Contains("--eval_early_stopping_steps=-1"));
  auto delta = run_command(trainer(dir / "bad7", "--eval_early_stopping_steps=10 "
                                                 "--eval_early_stopping_metric_delta=-0.5"));
  CHECK(delta.exit_code == 2);
  CHECK_THAT(delta.output, Catch::Contains("--eval_early_stopping_metric_delta=-0.5 must be 0"));
  // Without early stopping its other flags would do nothing: refused.
  auto off = run_command(trainer(dir / "bad8", "--eval_early_stopping_metric_delta=0.5"));
  CHECK(off.exit_code == 2);
  CHECK_THAT(off.output, Catch::Contains("--eval_early_stopping_metric_delta shapes early "
                                         "stopping, which is off"));
  auto no_evals = run_command(trainer(dir / "bad9", "--best_metric=accuracy --schedule=train"));
  CHECK(no_evals.exit_code == 2);
  CHECK_THAT(no_evals.output, Catch::Contains("--schedule=train makes none"));
  for (int i = 1; i <= 9; ++i) CHECK_FALSE(fs::exists(dir / ("bad" + std::to_string(i))));
}

// ---- Stopping on a signal ----

TEST_CASE("SIGTERM stops training after the step with a checkpoint, and the run resumes "
          "from it", "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_sigterm");
  const std::string out = dir / "run";
  // Saves and evaluations every 1000 steps: the stop's checkpoint is off both.
  const std::string cadence = "--local_eval_frequency=1000 --save_checkpoints_steps=1000 ";
  {
    TrainerProcess trainer_process(trainer(out, cadence + "--train_steps=100000"), dir / "log");
    REQUIRE(trainer_process.wait_for("\\] step 20: loss"));
    trainer_process.signal(SIGTERM);
    const int status = trainer_process.wait_exit();
    const std::string log = trainer_process.log();
    INFO(log);
    CHECK(status == 0);
    CHECK_THAT(log, Catch::Contains("stop signal received"));
    const int64_t step = stopped_step(log);
    REQUIRE(step >= 20);
    CHECK(step % 1000 != 0);
    CHECK_THAT(log, Catch::Contains("(SIGTERM): saved " + out + "/model.ckpt-" +
                                    std::to_string(step) + ".pt"));
    CHECK(checkpoint_steps(out) == std::vector<int64_t>{step});

    auto resumed = run_command(trainer(out, cadence + "--train_steps=" + std::to_string(step + 5)));
    INFO(resumed.output);
    CHECK(resumed.exit_code == 0);
    CHECK_THAT(resumed.output, Catch::Contains("resuming from " + out + "/model.ckpt-" +
                                               std::to_string(step) + ".pt at step " +
                                               std::to_string(step)));
    CHECK(checkpoint_steps(out).back() == step + 5);
  }
  {
    // The same stop from two senders at once (Ctrl-C and torchrun passing
    // it on) is one stop, not two.
    TrainerProcess trainer_process(trainer(dir / "two_senders", cadence + "--train_steps=100000"),
                                   dir / "log3");
    REQUIRE(trainer_process.wait_for("\\] step 10: loss"));
    run_command("kill -TERM " + std::to_string(trainer_process.pid()));
    trainer_process.signal(SIGTERM);
    INFO(trainer_process.log());
    CHECK(trainer_process.wait_exit() == 0);
    CHECK(stopped_step(trainer_process.log()) >= 10);
  }
  {
    // The same sender twice: the same stop too.
    TrainerProcess trainer_process(trainer(dir / "one_sender", cadence + "--train_steps=100000"),
                                   dir / "log4");
    REQUIRE(trainer_process.wait_for("\\] step 10: loss"));
    trainer_process.signal(SIGTERM);
    trainer_process.signal(SIGTERM);
    INFO(trainer_process.log());
    CHECK(trainer_process.wait_exit() == 0);
    CHECK(stopped_step(trainer_process.log()) >= 10);
  }
}

TEST_CASE("a repeated stop signal within a second is the same stop, and one later stops at once",
          "[trainer_loop]") {
  // In a child process: the second case ends it by its signal.
  const auto child_status = [](int gap_ms) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      t2t::install_stop_handlers();
      ::raise(SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
      ::raise(SIGTERM);  // from this same process, as timeout sends both
      ::_exit(t2t::stop_requested() ? 0 : 3);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  const int soon = child_status(50);
  CHECK(WIFEXITED(soon));
  CHECK(WEXITSTATUS(soon) == 0);
  const int later = child_status(1200);
  CHECK(WIFSIGNALED(later));
  CHECK(WTERMSIG(later) == SIGTERM);
}

TEST_CASE("coreutils timeout stops training with a checkpoint, as README's recipe uses it",
          "[trainer_loop][e2e]") {
  // timeout signals its child, then its own process group, which holds the
  // child: one stop delivered twice by one sender. --foreground signals the
  // child only.
  TempDir dir("trainer_loop_timeout");
  const std::string cadence = "--local_eval_frequency=1000 --save_checkpoints_steps=1000 ";
  for (const std::string how : {"", "--foreground "}) {
    INFO("timeout " << how);
    const std::string out = dir / (how.empty() ? "group" : "foreground");
    const auto r = run_command("timeout " + how + "-s TERM 6 " +
                               trainer(out, cadence + "--train_steps=100000"));
    INFO(r.output);
    CHECK(r.exit_code == 124);  // timeout's own status when it had to signal
    CHECK_THAT(r.output, Catch::Contains("(SIGTERM): saved " + out + "/model.ckpt-"));
    CHECK_THAT(r.output, !Catch::Contains("stopping at once"));
    CHECK(!checkpoint_steps(out).empty());
  }
}

TEST_CASE("Ctrl-C at a terminal (SIGINT to the whole process group) stops --worker_gpu's "
          "workers once, at one step, with a checkpoint",
          "[trainer_loop][e2e]") {
  // The launcher and both workers get the SIGINT themselves, and the
  // workers get it passed on by the launcher too: one stop, not two.
  TempDir dir("trainer_loop_ctrl_c");
  const std::string out = dir / "run";
  TrainerProcess group("setsid " + trainer(out, "--worker_gpu=2 --train_steps=100000 "
                                                "--local_eval_frequency=1000"),
                       dir / "log");
  REQUIRE(group.wait_for("\\] step 20: loss"));
  REQUIRE(::getpgid(group.pid()) == group.pid());  // its own group, not the test's
  ::kill(-group.pid(), SIGINT);
  const int status = group.wait_exit();
  const std::string log = group.log();
  INFO(log);
  CHECK(status == 0);
  CHECK_THAT(log, !Catch::Contains("stopping at once"));
  const int64_t step = stopped_step(log);
  REQUIRE(step >= 20);
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(out + "/model.ckpt-" + std::to_string(step) + ".pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);
}

TEST_CASE("with --worker_gpu, a SIGINT to the launcher or early stopping stops every worker at "
          "the same step",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_sigint_workers");
  const std::string out = dir / "run";
  TrainerProcess trainer_process(
      trainer(out, "--worker_gpu=2 --train_steps=100000 --local_eval_frequency=1000"),
      dir / "log");
  REQUIRE(trainer_process.wait_for("\\] step 20: loss"));
  // The launcher and its workers are found by the binary's name, as
  // operators look for them (pgrep -x t2t-trainer), not named "exe".
  CHECK(process_name(trainer_process.pid()) == "t2t-trainer");
  const auto workers = t2t::child_processes(trainer_process.pid());
  CHECK(workers.size() == 2);
  for (int w : workers) CHECK(process_name(w) == "t2t-trainer");
  CHECK_THAT(run_command("pgrep -x t2t-trainer").output,
             Catch::Contains(std::to_string(trainer_process.pid())));
  trainer_process.signal(SIGINT);
  const int status = trainer_process.wait_exit();
  const std::string log = trainer_process.log();
  INFO(log);
  CHECK(status == 0);
  CHECK_THAT(log, Catch::Contains("passing it on to the workers"));
  CHECK_THAT(log, Catch::Contains("(a stop passed on by the launcher)"));
  const int64_t step = stopped_step(log);
  REQUIRE(step >= 20);
  // Both workers saved together: the checkpoint holds both input positions.
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(out + "/model.ckpt-" + std::to_string(step) + ".pt", &meta);
  CHECK(meta.step == step);
  CHECK(meta.worker_rng_states.size() == 2);

  // Early stopping, decided by the chief's evaluations, stops both workers
  // at the same step too (a worker left behind would hang the run).
  const std::string early = dir / "early";
  TrainerProcess early_process(
      trainer(early, "--worker_gpu=2 --train_steps=1000 --local_eval_frequency=10 "
                     "--save_checkpoints_steps=1000 --eval_early_stopping_steps=20 "
                     "--eval_early_stopping_metric_delta=100"),
      dir / "early_log");
  CHECK(early_process.wait_exit(120) == 0);
  INFO(early_process.log());
  CHECK_THAT(early_process.log(), Catch::Contains("early stopping at step 30"));
  t2t::read_checkpoint_tensors(early + "/model.ckpt-30.pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);
}

// ---- Warm starts ----

namespace {

// The loss of the "eval at step N" line of a log, or -1.
double eval_loss_at(const std::string& log, int64_t step) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("eval at step " + std::to_string(step) +
                                            ": loss ([0-9.]+)")))
    return -1;
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("t2t-trainer --warm_start_from starts a new run from another run's weights",
          "[trainer_loop][e2e]") {
  TempDir dir("trainer_loop_warm");
  const std::string source = dir / "source", warm = dir / "warm", cold = dir / "cold";
  const std::string fast = "--hparams='batch_size=512,hidden_size=64,filter_size=128,"
                           "num_heads=2,learning_rate_warmup_steps=10' --best_metric=none ";
  auto trained = run_command(trainer(source, fast + "--train_steps=60 --local_eval_frequency=60"));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const double source_loss = eval_loss_at(trained.output, 60);

  // One step on from the source's weights evaluates like the source, far
  // below a model one step from its initializer.
  const std::string one_step = fast + "--train_steps=1 --local_eval_frequency=1 ";
  auto r = run_command(trainer(warm, one_step + "--warm_start_from=" + source));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("warm start: the weights of " + source +
                                       "/model.ckpt-60.pt (trained 60 steps)"));
  CHECK_THAT(r.output, !Catch::Contains("resuming from"));
  CHECK(checkpoint_steps(warm) == std::vector<int64_t>{1});
  auto fresh = run_command(trainer(cold, one_step));
  REQUIRE(fresh.exit_code == 0);
  const double warm_loss = eval_loss_at(r.output, 1), cold_loss = eval_loss_at(fresh.output, 1);
  CHECK(std::abs(warm_loss - source_loss) < 0.2);
  CHECK(warm_loss < cold_loss - 0.5);

  // A run with checkpoints of its own resumes and says the flag is ignored.
  auto again = run_command(trainer(warm, fast + "--train_steps=2 --local_eval_frequency=1 "
                                          "--warm_start_from=" + source + "/model.ckpt-60.pt"));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("is ignored"));
  CHECK_THAT(again.output, Catch::Contains("resuming from " + warm + "/model.ckpt-1.pt"));

  // Other sizes are refused, naming a parameter and both shapes.
  auto other = run_command(trainer(dir / "other", "--hparams='batch_size=512,hidden_size=32,"
                                                  "filter_size=128,num_heads=2' --train_steps=1 "
                                                  "--warm_start_from=" + source));
  INFO(other.output);
  CHECK(other.exit_code == 1);
  CHECK_THAT(other.output, Catch::Contains("--warm_start_from=" + source));
  CHECK_THAT(other.output, Catch::Contains("in the file, [") && Catch::Contains("in the model"));
  auto missing = run_command(trainer(dir / "missing", "--train_steps=1 --warm_start_from=" +
                                                          (dir / "nowhere")));
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.output, Catch::Contains("does not exist"));
}

// ---- An extra evaluation drives the best checkpoint and early stopping ----

TEST_CASE("an extra evaluation's metric (bleu) picks the best checkpoint and stops training",
          "[trainer_loop]") {
  TempDir dir("trainer_loop_extra");
  t2t::TrainOptions o;
  o.problem = "translate_enzh_sample";
  o.model = "transformer";
  o.data_dir = sample_data();
  o.output_dir = dir / "run";
  o.train_steps = 1000;
  o.eval_steps = 2;
  o.local_eval_frequency = 10;
  o.save_checkpoints_steps = 1000;
  o.log_step_count_steps = 1000;
  o.best_metric = "bleu";
  o.early_stopping = {20, "bleu", 0.5, false};
  // A scripted BLEU: the best is step 40 (8.05), and from step 20 (8.0) on
  // nothing gains 0.5, so training stops at step 40.
  const std::map<int64_t, double> bleu{{10, 5.0}, {20, 8.0}, {30, 7.0}, {40, 8.05}, {50, 9.0}};
  std::vector<int64_t> called;
  bool grad_enabled = false, on_cpu = true;
  o.extra_evaluation = [&](const std::shared_ptr<t2t::T2TModel>& model, int64_t step) {
    called.push_back(step);
    grad_enabled |= torch::GradMode::is_enabled();
    for (const auto& p : model->parameters()) on_cpu &= p.device().is_cpu();
    model->eval();  // as the decoder does; the trainer must undo it
    return t2t::EvalMetrics{{"bleu", bleu.at(step)}};
  };
  o.extra_metrics = {"bleu"};
  const t2t::HParams hp = t2t::resolve_hparams(
      "transformer_tiny", "", "batch_size=512,hidden_size=64,filter_size=128,num_heads=2");
  t2t::run_training(o, hp);

  CHECK(called == std::vector<int64_t>{10, 20, 30, 40});
  CHECK_FALSE(grad_enabled);
  CHECK(on_cpu);
  // New bests at 10, 20 and 40 got checkpoints off the saving cadence; 30 none.
  CHECK(checkpoint_steps(o.output_dir) == std::vector<int64_t>{10, 20, 40});
  const std::string record = t2t::read_file(o.output_dir + "/best/best.yaml");
  CHECK_THAT(record, Catch::Contains("metric: bleu"));
  CHECK_THAT(record, Catch::Contains("value: 8.05"));
  CHECK_THAT(record, Catch::Contains("step: 40"));
  // The history holds the extra metric beside the teacher-forced ones.
  t2t::EvalHistory history(o.output_dir + "/eval/history.yaml", 1000);
  CHECK(history.series("bleu").size() == 4);
  CHECK(history.series("loss").size() == 4);
  CHECK(events_with_tag(o.output_dir + "/eval", "BLEU") == 4);
}
