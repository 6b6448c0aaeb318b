#include "hparams/decode_hparams.h"

namespace t2t {

HParams default_decode_hparams() {
  HParams hp;
  hp.add("beam_size", 4);
  hp.add("alpha", 0.6);
  hp.add("extra_length", 100);
  hp.add("batch_size", 0);  // 0: 32 sentences when decoding from a file
  hp.add("return_beams", false);
  hp.add("write_beam_scores", false);
  hp.add("max_input_size", -1);
  hp.add("num_samples", -1);
  hp.add("delimiter", "\n");
  hp.add("eos_penalty", 0.0);
  hp.add("min_length_ratio", 0.0);
  hp.add("skip_eos_postprocess", false);
  hp.add("log_results", true);
  return hp;
}

}  // namespace t2t
