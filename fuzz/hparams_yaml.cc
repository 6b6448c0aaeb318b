// hparams files (--hparams_file, a run's hparams.yaml) and --hparams text.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"

T2T_FUZZ_TARGET(hparams_yaml) {
  const std::string text(data);
  try {
    t2t::HParams::from_yaml_string(text, "fuzz.yaml");
  } catch (const t2t::Error&) {
  }
  t2t::HParams hp;
  hp.add("hidden_size", int64_t{512}).add("learning_rate", 0.2).add("name", std::string("x"));
  try {
    hp.apply_yaml_string(text, "fuzz.yaml");
  } catch (const t2t::Error&) {
  }
  try {
    hp.parse(text, "--hparams");
  } catch (const t2t::Error&) {
  }
}
