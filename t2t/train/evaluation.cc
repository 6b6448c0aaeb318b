#include "t2t/train/evaluation.h"

#include <vector>

#include "t2t/data/batch_reader.h"
#include "t2t/data/problem.h"
#include "t2t/metrics/bleu.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/loss.h"

namespace t2t {

EvalResult evaluate(T2TModel& model, const Problem& problem, const std::string& data_dir,
                    const HParams& hp, int64_t max_batches, uint64_t seed,
                    const torch::Device& device) {
  BatchReader reader(problem.data_filepaths(data_dir, "dev"), batching_scheme(hp),
                     reader_options(hp, false, problem.reversed(), seed));
  model.eval();
  torch::NoGradGuard no_grad;
  double loss_sum = 0, weight = 0, correct = 0, correct5 = 0;
  BleuStats bleu;
  for (int64_t i = 0; i < max_batches; ++i) {
    auto batch = reader.next();
    if (!batch) break;
    auto inputs = batch->inputs.to(device), targets = batch->targets.to(device);
    auto logits = model.forward(inputs, targets);
    auto l = smoothed_cross_entropy(logits, targets, 0.0);
    loss_sum += l.loss_sum.item<double>();
    weight += l.weight_sum.item<double>();
    correct += padded_accuracy(logits, targets).correct.item<double>();
    correct5 += padded_accuracy_topk(logits, targets, 5).correct.item<double>();
    // T2T's approx_bleu_score: BLEU-4 of each row's argmax ids against its
    // labels, teacher-forced, padding left out.
    const auto predicted = logits.argmax(-1).to(torch::kCPU).contiguous();
    const auto labels = targets.to(torch::kCPU).contiguous();
    const auto p = predicted.accessor<int64_t, 2>();
    const auto y = labels.accessor<int64_t, 2>();
    for (int64_t row = 0; row < y.size(0); ++row) {
      std::vector<int64_t> ref, hyp;
      for (int64_t t = 0; t < y.size(1); ++t) {
        if (y[row][t] == 0) continue;
        ref.push_back(y[row][t]);
        hyp.push_back(p[row][t]);
      }
      bleu.add(ref, hyp);
    }
  }
  model.train();
  EvalResult r;
  r.tokens = static_cast<int64_t>(weight);
  if (weight > 0) {
    r.loss = loss_sum / weight;
    r.accuracy = correct / weight;
    r.accuracy_top5 = correct5 / weight;
    r.approx_bleu = bleu.score();
  }
  return r;
}

}  // namespace t2t
