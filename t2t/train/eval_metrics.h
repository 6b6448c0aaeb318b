// The metrics an evaluation reports, under the names the flags use
// (--best_metric, --eval_early_stopping_metric), with each one's tag in the
// eval TensorBoard events and the direction in which it improves; and the
// file that keeps every evaluation of a run, so that decisions which look
// back over several evaluations (early stopping) survive a restart.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

class T2TModel;

struct EvalMetricInfo {
  std::string name;       // "accuracy": what the flags say
  std::string event_tag;  // "metrics/accuracy": what TensorBoard shows
  bool higher_is_better = false;
};

// loss, bleu, accuracy, accuracy_top5, neg_log_perplexity, approx_bleu_score.
// bleu is the real, decoded BLEU (0..100) of --eval_bleu, tagged "BLEU" as
// T2T's decode hooks tag it; the others are T2T's teacher-forced metrics.
const std::vector<EvalMetricInfo>& eval_metrics();

// nullptr when `name` is none of eval_metrics().
const EvalMetricInfo* find_eval_metric(const std::string& name);

// "loss, bleu, accuracy, ..." for error messages.
std::string eval_metric_names();

// One evaluation's values by metric name.
using EvalMetrics = std::map<std::string, double>;

// Metrics an evaluation adds to the teacher-forced ones, computed by code
// the trainer does not depend on: BLEU of the decoded dev set, which
// t2t-trainer builds from t2t/translate and hands over (t2t/train does not
// include decoding). Called on the chief at each evaluation with the
// training model, on its device, under no_grad; it may put the model in
// eval mode, and the trainer puts it back in train mode afterwards. Returns
// values by metric name ("bleu").
using ExtraEvaluation =
    std::function<EvalMetrics(const std::shared_ptr<T2TModel>& model, int64_t step)>;

// Every evaluation of a run in step order, kept in a small YAML file
// (<output_dir>/eval/history.yaml) rewritten atomically after each one.
class EvalHistory {
 public:
  EvalHistory() = default;
  // Reads `path` when it exists; entries after `up_to_step` (left by a run
  // that went further than the checkpoint it now resumes from) are dropped.
  // Throws t2t::Error naming the file when it is not such a history.
  EvalHistory(std::string path, int64_t up_to_step);

  // Adds (or, for an evaluated step already present, replaces) an entry and
  // writes the file when the history has one.
  void record(int64_t step, const EvalMetrics& metrics);

  // (step, value) of `metric` in step order, over the entries that have it.
  std::vector<std::pair<int64_t, double>> series(const std::string& metric) const;

  size_t size() const { return entries_.size(); }

 private:
  void save() const;

  std::string path_;
  std::map<int64_t, EvalMetrics> entries_;
};

}  // namespace t2t
