// A T2T run's hparams.json, applied onto an hparams set.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/io/t2t_hparams_json.h"

T2T_FUZZ_TARGET(hparams_json) {
  const std::string path = t2t::fuzz::scratch_file("hparams.json", data);
  t2t::HParams hp;
  hp.add("hidden_size", int64_t{512})
      .add("learning_rate", 0.2)
      .add("layer_prepostprocess_dropout", 0.1)
      .add("shared_embedding_and_softmax_weights", true)
      .add("optimizer", std::string("adam"))
      .add("problem_hparams_list", std::vector<int64_t>{1, 2});
  try {
    t2t::apply_t2t_hparams_json(hp, path);
  } catch (const t2t::Error&) {
  }
}
