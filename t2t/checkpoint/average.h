// Checkpoint averaging, as T2T's t2t-avg-all and avg_checkpoints.py.
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

// Averages `checkpoints` into <output_dir>/model.ckpt-<highest step>.pt:
// floating-point tensors are the mean (summed in float64), others the
// latest's; no optimizer state. Inputs must match in tensor names, shapes,
// types and hparams, else a t2t::Error names the files and what differs.
// Writes hparams.yaml beside it (from `hparams_yaml_path` when it exists,
// else the checkpoints'), so it loads as a run. `output_dir` must not hold
// an input, whose file name the result would take.
AverageResult average_checkpoints(const std::vector<std::string>& checkpoints,
                                  const std::string& output_dir,
                                  const std::string& hparams_yaml_path = "");

// Averages TensorFlow checkpoints (prefixes such as "dir/model.ckpt-900")
// as T2T's t2t-avg-all does, into <output_dir>/model.ckpt-<newest step> and
// its `checkpoint` file. Floating-point variables are the mean (float64
// sums, written float32), optimizer slots included; integer variables are
// the newest input's (T2T would turn them into floats). The newest input's
// hparams.json and flags are copied beside it. Inputs must match in
// variables, shapes and dtypes, else a t2t::Error names the files and what
// differs. `output_dir` must not hold an input.
AverageResult average_tf_checkpoints(const std::vector<std::string>& prefixes,
                                     const std::string& output_dir);

}  // namespace t2t
