// End-to-end checks of the command-line front ends: the real binaries, run
// with good and bad flags.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "t2t/core/hparams.h"
#include "t2t/data/problem.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;

TEST_CASE("help explains the flags and exits 0", "[cli]") {
  for (std::string tool : {"t2t-datagen", "t2t-trainer", "t2t-decoder"}) {
    auto r = run_command("./" + tool + " --help");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("--problem"));
    CHECK_THAT(r.output, Catch::Contains("--t2t_usr_dir"));
    CHECK_THAT(r.output, Catch::Contains("--threads"));
  }
  auto r = run_command("./t2t-trainer --help");
  for (auto flag : {"--hparams_set", "--hparams ", "--hparams_file", "--train_steps",
                    "--output_dir", "--device", "--random_seed", "--log_level"})
    CHECK_THAT(r.output, Catch::Contains(flag));
  r = run_command("./t2t-decoder --help");
  for (auto flag : {"--decode_hparams", "--decode_from_file", "--decode_to_file",
                    "--decode_interactive", "--checkpoint_path"})
    CHECK_THAT(r.output, Catch::Contains(flag));
}

TEST_CASE("registry_help lists the registered hparams sets", "[cli]") {
  for (std::string tool : {"t2t-datagen", "t2t-trainer", "t2t-decoder"}) {
    auto r = run_command("./" + tool + " --registry_help");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("Problems ("));
    CHECK_THAT(r.output, Catch::Contains("Models ("));
    CHECK_THAT(r.output, Catch::Contains("transformer_base "));
    CHECK_THAT(r.output, Catch::Contains("transformer_tiny "));
  }
}

TEST_CASE("an unknown flag is a usage error with exit status 2", "[cli]") {
  auto r = run_command("./t2t-trainer --hparam_set=transformer_base");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("t2t-trainer: error:"));
  CHECK_THAT(r.output, Catch::Contains("hparam_set"));
  CHECK_THAT(r.output, Catch::Contains("--help"));
  r = run_command("./t2t-datagen stray_argument");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("unexpected argument 'stray_argument'"));
  r = run_command("./t2t-trainer --threads=many");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("threads"));
}

TEST_CASE("a missing required flag names the flag and an example", "[cli]") {
  auto r = run_command("./t2t-trainer --model=transformer --hparams_set=transformer_tiny");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--problem is required, e.g. --problem="));
  r = run_command("./t2t-datagen");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--problem is required"));
}

TEST_CASE("unknown names fail with suggestions", "[cli]") {
  auto r = run_command(
      "./t2t-trainer --problem=p --model=transformer --hparams_set=transformer_bse "
      "--data_dir=/nonexistent --output_dir=/nonexistent");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("unknown hparams set 'transformer_bse'"));
  CHECK_THAT(r.output, Catch::Contains("Did you mean transformer_base"));
}

TEST_CASE("bad --hparams name the key and the expected type", "[cli]") {
  auto r = run_command(
      "./t2t-trainer --problem=p --model=transformer --hparams_set=transformer_tiny "
      "--hparams='batch_size=lots' --data_dir=/nonexistent --output_dir=/nonexistent");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("'batch_size' (from --hparams) expects int, got 'lots'"));
  r = run_command(
      "./t2t-trainer --problem=p --model=transformer --hparams_set=transformer_tiny "
      "--hparams='hiden_size=3' --data_dir=/nonexistent --output_dir=/nonexistent");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("unknown hyperparameter 'hiden_size'"));
  CHECK_THAT(r.output, Catch::Contains("Did you mean hidden_size"));
}

TEST_CASE("runtime flags are checked", "[cli]") {
  auto r = run_command("./t2t-trainer --log_level=chatty --registry_help");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--log_level=chatty"));
  r = run_command(
      "./t2t-trainer --problem=p --model=transformer --hparams_set=transformer_tiny "
      "--device=tpu --data_dir=/nonexistent --output_dir=/nonexistent");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--device=tpu is not a device"));
  r = run_command("./t2t-trainer --t2t_usr_dir=/nonexistent/plugins --registry_help");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--t2t_usr_dir=/nonexistent/plugins does not exist"));
}

TEST_CASE("datagen refuses _rev names and lists problems", "[cli]") {
  auto r = run_command("./t2t-datagen --problem=translate_enzh_wmt32k_rev --data_dir=/tmp");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("the _rev variant reads the same files"));
  r = run_command("./t2t-datagen --only_list");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  // One registered name per line, sorted, nothing else: the built-in
  // problems are there, and every line names a problem this process knows
  // too (it links the same library, plus a few test-only problems).
  std::vector<std::string> listed;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) listed.push_back(line);
  for (const char* problem : {"translate_enzh_sample", "translate_enzh_tatoeba",
                              "translate_enzh_wmt32k", "translate_enzh_wmt8k"})
    CHECK(std::count(listed.begin(), listed.end(), problem) == 1);
  CHECK(std::is_sorted(listed.begin(), listed.end()));
  for (const auto& name : listed) {
    INFO("listed: '" << name << "'");
    CHECK(t2t::problem_registry().contains(name));
  }
}
