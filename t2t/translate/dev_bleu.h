// BLEU (and chrF, TER) at evaluation time: the model being trained decodes
// a source file or the dev split, scored as sacreBLEU scores it against the
// references (one or several for a source file). The trainer
// calls it through ExtraEvaluation (eval_metrics.h), so that training does
// not depend on decoding.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t2t/data/problem.h"
#include "t2t/translate/decode_options.h"

namespace t2t {

class T2TModel;

struct DevBleuOptions {
  // num_samples caps the dev-split sentences (refused with a file).
  DecodeOptions decode;
  std::string source_file;                   // "" = the problem's dev split
  std::vector<std::string> reference_files;  // with source_file only; several allowed
  // What to compute: bleu, chrf, chrf++, ter (metric_spec names), each under
  // its name in the evaluation's metrics.
  std::vector<std::string> metrics{"bleu"};
  // Each evaluation's translations (overwritten); ends in ".decodes".
  std::string decodes_path;
};

class DevBleu {
 public:
  // Loads the vocabularies and checks the inputs now, so a mistake shows
  // before training. Throws t2t::Error naming the option or file at fault.
  DevBleu(const std::string& problem, const std::string& data_dir, DevBleuOptions options,
          torch::Device device);

  // Decodes with `model` (on `device`; left in eval mode) and returns each
  // metric's corpus score by name, 0..100 (BLEU's tokenizer zh for Chinese
  // references, else 13a). Logs the scores and their signatures.
  std::map<std::string, double> score(const std::shared_ptr<T2TModel>& model, int64_t step);

 private:
  std::unique_ptr<Problem> problem_;
  std::string data_dir_;
  DevBleuOptions options_;
  torch::Device device_;
  FeatureEncoders encoders_;
  std::vector<std::vector<std::string>> references_;  // of source_file, per file
};

}  // namespace t2t
