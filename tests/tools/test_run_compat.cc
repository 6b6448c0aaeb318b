// A run written before t2t gained an hparam stays usable: the trainer
// resumes it (saying which hparams it takes up) and the decoder accepts
// --hparams naming the new key. Other differences are still refused.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/sample_run.h"

namespace {

using t2t::test::run_command;

// Drops `key`'s line from a run's hparams.yaml, as an older t2t wrote it.
void drop_hparam(const std::string& run, const std::string& key) {
  const std::string path = run + "/hparams.yaml";
  std::ifstream in(path);
  std::ostringstream kept;
  std::string line;
  bool dropped = false;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      dropped = true;
      continue;
    }
    kept << line << "\n";
  }
  in.close();
  REQUIRE(dropped);
  std::ofstream(path) << kept.str();
}

}  // namespace

TEST_CASE("a run whose hparams.yaml lacks a newer hparam resumes and decodes",
          "[run_compat]") {
  t2t::test::SampleRun sample("run_compat");
  REQUIRE(sample.ok);
  drop_hparam(sample.run, "sampling_keep_top_k");

  auto resumed = run_command(sample.trainer("--train_steps=22"));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.output.find("sampling_keep_top_k: (absent) -> -1") != std::string::npos);
  CHECK(resumed.output.find("saved") != std::string::npos);

  // A changed hparam is still refused.
  const std::string smoothing = sample.dir / "smoothing.yaml";
  std::ofstream(smoothing) << "label_smoothing: 0.2\n";
  auto changed = run_command(sample.trainer("--train_steps=24 --hparams_file=" + smoothing));
  CHECK(changed.exit_code != 0);
  CHECK(changed.output.find("label_smoothing: 0.1 -> 0.2") != std::string::npos);

  drop_hparam(sample.run, "sampling_keep_top_k");
  const std::string src = sample.dir / "src.en";
  std::ofstream(src) << "a sentence\n";
  auto decoded = run_command(sample.decoder(
      "--hparams=sampling_method=random,sampling_keep_top_k=2 --random_seed=3 "
      "--decode_hparams=beam_size=1 --decode_from_file=" + src +
      " --decode_to_file=" + std::string(sample.dir / "out.zh")));
  INFO(decoded.output);
  CHECK(decoded.exit_code == 0);
}
