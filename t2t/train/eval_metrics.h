// The metrics an evaluation reports, with their TensorBoard tags and
// directions, and the file that keeps every evaluation of a run, so early
// stopping survives a restart.
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
  bool decoded = false;   // scores translations: only an ExtraEvaluation reports it
};

// loss, bleu, chrf, chrf++, ter, accuracy, accuracy_top5,
// neg_log_perplexity, approx_bleu_score. bleu, chrf, chrf++ and ter score
// decoded translations (0..100), tagged "BLEU" as in T2T's decode hooks and
// as sacreBLEU names the others; the rest are T2T's teacher-forced metrics.
const std::vector<EvalMetricInfo>& eval_metrics();

// nullptr when `name` is none of eval_metrics().
const EvalMetricInfo* find_eval_metric(const std::string& name);

// "loss, bleu, accuracy, ..." for error messages.
std::string eval_metric_names();

// One evaluation's values by metric name.
using EvalMetrics = std::map<std::string, double>;

// Metrics added to the teacher-forced ones by code t2t/train does not
// depend on (decoded BLEU). Called on the chief at each evaluation with the
// training model under no_grad; it may leave the model in eval mode.
using ExtraEvaluation =
    std::function<EvalMetrics(const std::shared_ptr<T2TModel>& model, int64_t step)>;

// Every evaluation of a run in step order, in <output_dir>/eval/history.yaml
// (rewritten atomically).
class EvalHistory {
 public:
  EvalHistory() = default;
  // Reads `path` when it exists, dropping entries after `up_to_step`.
  // Throws t2t::Error naming the file when it is not such a history.
  EvalHistory(std::string path, int64_t up_to_step);

  // Adds or replaces the step's entry and writes the file, if any.
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
