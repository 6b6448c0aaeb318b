// BLEU at evaluation time: the model being trained decodes a source file or
// the dev split, scored by sacreBLEU against the references. The trainer
// calls it through ExtraEvaluation (eval_metrics.h), so that training does
// not depend on decoding.
#pragma once

#include <torch/torch.h>

#include <cstdint>
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
  std::string source_file;     // "" = the problem's dev split
  std::string reference_file;  // with source_file only
  // Each evaluation's translations (overwritten); ends in ".decodes".
  std::string decodes_path;
};

class DevBleu {
 public:
  // Loads the vocabularies and checks the inputs now, so a mistake shows
  // before training. Throws t2t::Error naming the option or file at fault.
  DevBleu(const std::string& problem, const std::string& data_dir, DevBleuOptions options,
          torch::Device device);

  // Decodes with `model` (on `device`; left in eval mode) and returns
  // sacreBLEU's corpus score, 0..100 (tokenizer zh for Chinese references,
  // else 13a). Logs the score and its signature.
  double score(const std::shared_ptr<T2TModel>& model, int64_t step);

 private:
  std::unique_ptr<Problem> problem_;
  std::string data_dir_;
  DevBleuOptions options_;
  torch::Device device_;
  FeatureEncoders encoders_;
  std::vector<std::string> references_;  // of source_file
};

}  // namespace t2t
