// A briefly trained transformer_tiny on the bundled sample, for the
// end-to-end tests of the binaries that use a trained model (t2t-decoder,
// t2t-serve): about a second of datagen and 20 training steps.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

#include "tests/support/test_util.h"

namespace t2t::test {

struct SampleRun {
  TempDir dir;
  std::string data = dir / "data";
  std::string run = dir / "run";
  // translate_enzh_sample, or its _rev (zh -> en) on the same data.
  std::string problem;
  bool ok = false;
  std::string log;

  explicit SampleRun(const std::string& tag, std::string problem_name = "translate_enzh_sample")
      : dir(tag), problem(std::move(problem_name)) {
    auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
    log = r.output;
    if (r.exit_code != 0) return;
    r = run_command(trainer("--train_steps=20"));
    log += r.output;
    ok = r.exit_code == 0;
  }

  // t2t-trainer on this run with `extra` flags: --train_steps=N goes on
  // from the latest checkpoint.
  std::string trainer(const std::string& extra) const {
    return "./t2t-trainer --problem=" + problem + " --model=transformer "
           "--hparams_set=transformer_tiny "
           "--hparams='batch_size=512,hidden_size=64,filter_size=128,num_heads=2,"
           "learning_rate_warmup_steps=10' "
           "--data_dir=" + data + " --output_dir=" + run +
           " --local_eval_frequency=20 --eval_steps=2 " + extra;
  }

  // The model flags of t2t-decoder and t2t-serve for this run.
  std::string model_flags() const {
    return "--problem=" + problem + " --model=transformer --hparams_set=transformer_tiny "
           "--data_dir=" + data + " --output_dir=" + run;
  }

  std::string decoder(const std::string& extra) const {
    return "./t2t-decoder " + model_flags() + " " + extra;
  }
};

// The run called `tag`, trained on first use and shared by every case that
// names it; a case fails with the training's log when it did not train.
inline const SampleRun& trained_sample_run(const std::string& tag,
                                           const std::string& problem = "translate_enzh_sample") {
  static std::map<std::string, std::unique_ptr<SampleRun>> runs;
  std::unique_ptr<SampleRun>& run = runs[tag];
  if (!run) run = std::make_unique<SampleRun>(tag, problem);
  INFO(run->log);
  REQUIRE(run->ok);
  return *run;
}

}  // namespace t2t::test
