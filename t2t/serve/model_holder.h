// The model a server translates with, and swapping it for a newer
// checkpoint while it serves. A request holds the ServingModel it was
// encoded for until it is answered, so a swap never changes a request
// midway: requests in flight finish on the model they started with, and the
// old model is freed when the last of them is done.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "t2t/core/hparams.h"
#include "t2t/decode/decode_options.h"
#include "t2t/decode/decoder.h"

namespace t2t {

class Problem;

// Everything needed to build and load the model, read once from the flags.
struct ModelSpec {
  std::shared_ptr<const Problem> problem;
  std::string model_name;
  HParams hparams;
  std::string data_dir;
  std::string output_dir;
  std::string checkpoint_path;  // a file, a run directory, or empty: output_dir's latest
  torch::Device device = torch::kCPU;
  std::string quantize = "none";
  bool cuda_graphs = false;  // --cuda_graphs
  DecodeOptions options;  // the server's decode settings
};

struct ServingModel {
  LoadedModel loaded;
  std::unique_ptr<Decoder> decoder;
};

struct ReloadResult {
  bool reloaded = false;  // false: the newest checkpoint is the one serving
  std::string checkpoint;
  int64_t step = 0;
  int64_t previous_step = 0;
};

class ModelHolder {
 public:
  explicit ModelHolder(ModelSpec spec) : spec_(std::move(spec)) {}

  // Loads the checkpoint the spec names. Throws t2t::Error saying why.
  void load_initial();

  // Loads the newest checkpoint of the directory the serving one is in,
  // unless it is the one serving, and swaps it in. On failure throws
  // t2t::Error saying why, and the current model goes on serving. One
  // reload at a time: others wait for it.
  ReloadResult reload();

  // The newest checkpoint beside the serving one when it is another file
  // than the serving one, else "": what reload() would load now.
  std::string newer_checkpoint() const;

  // The model to use now; null before load_initial() succeeded.
  std::shared_ptr<const ServingModel> current() const;
  const ModelSpec& spec() const { return spec_; }

 private:
  std::shared_ptr<const ServingModel> load(const std::string& checkpoint_path) const;
  // The newest checkpoint in the directory of `serving`'s ("" when none),
  // and whether it is the file `serving` came from.
  static std::string newest_beside(const ServingModel& serving);
  static bool is_serving(const ServingModel& serving, const std::string& checkpoint);

  ModelSpec spec_;
  std::mutex reload_mutex_;
  mutable std::mutex current_mutex_;
  std::shared_ptr<const ServingModel> current_;
};

}  // namespace t2t
