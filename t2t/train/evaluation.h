// Teacher-forced evaluation on a problem's dev split, with T2T's eval
// metrics: unsmoothed loss, accuracy, top-5 accuracy and approx_bleu_score.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace t2t {

class HParams;
class Problem;
class T2TModel;

struct EvalResult {
  double loss = 0, accuracy = 0, accuracy_top5 = 0;
  double approx_bleu = 0;  // argmax ids against the labels: not a real BLEU
  int64_t tokens = 0;      // non-padding target tokens evaluated
};

// Scores the model on at most `max_batches` batches of the dev split, in
// file order; leaves the model in train mode.
EvalResult evaluate(T2TModel& model, const Problem& problem, const std::string& data_dir,
                    const HParams& hp, int64_t max_batches, uint64_t seed,
                    const torch::Device& device);

}  // namespace t2t
