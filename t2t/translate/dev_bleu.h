// BLEU at evaluation time (t2t-trainer --eval_bleu): the model being
// trained decodes the dev set, as t2t-decoder would, and the built-in
// sacreBLEU scores it against the references. The source is a file with
// its references (--decode_from_file, --decode_reference), or else the
// problem's dev split, whose targets are the references. The trainer calls
// it through its ExtraEvaluation hook (t2t/train/eval_metrics.h), so that
// training does not depend on decoding.
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
  // --decode_hparams; num_samples caps the dev-split sentences decoded (a
  // file is decoded whole: num_samples with a file is refused);
  // log_results is best left off.
  DecodeOptions decode;
  std::string source_file;     // "" = the problem's dev split
  std::string reference_file;  // with source_file only
  // Where each evaluation's translations go (overwritten); must end in
  // ".decodes". With the dev split, .inputs and .targets go beside it.
  std::string decodes_path;
};

class DevBleu {
 public:
  // Loads the vocabularies and checks the inputs now (the files readable,
  // as many references as sources; the dev shards present), so that a
  // mistake shows before training rather than at the first evaluation.
  // Throws t2t::Error naming the flag or file at fault.
  DevBleu(const std::string& problem, const std::string& data_dir, DevBleuOptions options,
          torch::Device device);

  // Decodes with `model` (on `device`; left in eval mode) and returns
  // sacreBLEU's corpus score, 0..100, with the tokenizer sacreBLEU picks for
  // the references' language (zh for Chinese, else 13a). Logs the score,
  // its signature and the time decoding took.
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
