// Checkpoint averaging, as T2T's t2t-avg-all and avg_checkpoints.py: the
// mean of the last few checkpoints of a run usually translates better than
// any one of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

struct AverageResult {
  std::string path;                  // the checkpoint written
  int64_t step = 0;                  // the latest input's step, which it carries
  std::vector<std::string> inputs;  // the checkpoints averaged, oldest first
};

// The last `n` checkpoints of `model_dir`, oldest first: all of them (with a
// warning) when there are fewer. Throws t2t::Error when there is none or n < 1.
std::vector<std::string> last_checkpoints(const std::string& model_dir, int n);

// Averages `checkpoints` into <output_dir>/model.ckpt-<step>.pt, `step` being
// the highest step among them: every floating-point tensor is the elementwise
// mean (summed in float64, cast back to its type); other tensors are the
// latest checkpoint's. The result has no optimizer state. All inputs must
// hold the same tensor names, shapes and types and the same hparams;
// otherwise a t2t::Error names the files and what differs. <output_dir> also
// gets the run's hparams.yaml (from `hparams_yaml_path` when it exists, else
// from the checkpoints), so t2t-decoder --output_dir=<output_dir> loads it
// like a training run. `output_dir` must not hold any of the inputs, since
// the result would take the latest one's file name.
AverageResult average_checkpoints(const std::vector<std::string>& checkpoints,
                                  const std::string& output_dir,
                                  const std::string& hparams_yaml_path = "");

// Averages checkpoints Tensor2Tensor wrote (TensorFlow prefixes such as
// "dir/model.ckpt-900") as T2T's t2t-avg-all does, into a TensorFlow
// checkpoint again: <output_dir>/model.ckpt-<step> (the newest input's
// global_step) and <output_dir>/checkpoint naming it. Every floating-point
// variable is the mean (summed in float64, written float32 as T2T writes
// it), optimizer slots included; integer variables (global_step, step
// counters) are the newest input's, where T2T would turn them into floats.
// The newest input's hparams.json and flags files are copied beside it, so
// that t2t-decoder, t2t-serve and T2T itself load <output_dir> as a run.
// The inputs must hold the same variables, shapes and dtypes; otherwise a
// t2t::Error names the files and what differs. `output_dir` must not hold
// an input.
AverageResult average_tf_checkpoints(const std::vector<std::string>& prefixes,
                                     const std::string& output_dir);

}  // namespace t2t
