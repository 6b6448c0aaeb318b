#include "t2t/train/eval_metrics.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"

namespace t2t {

const std::vector<EvalMetricInfo>& eval_metrics() {
  static const std::vector<EvalMetricInfo> all{
      {"loss", "loss", false},
      {"bleu", "BLEU", true, true},
      {"chrf", "chrF2", true, true},
      {"chrf++", "chrF2++", true, true},
      {"ter", "TER", false, true},
      {"accuracy", "metrics/accuracy", true},
      {"accuracy_top5", "metrics/accuracy_top5", true},
      {"neg_log_perplexity", "metrics/neg_log_perplexity", true},
      {"approx_bleu_score", "metrics/approx_bleu_score", true},
  };
  return all;
}

const EvalMetricInfo* find_eval_metric(const std::string& name) {
  for (const auto& m : eval_metrics())
    if (m.name == name) return &m;
  return nullptr;
}

std::string eval_metric_names() {
  std::string out;
  for (const auto& m : eval_metrics()) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

EvalHistory::EvalHistory(std::string path, int64_t up_to_step) : path_(std::move(path)) {
  if (!std::filesystem::exists(path_)) return;
  try {
    const YAML::Node root = YAML::LoadFile(path_);
    if (!root.IsSequence()) throw Error("not a list of evaluations");
    for (const auto& entry : root) {
      if (!entry.IsMap() || !entry["step"]) throw Error("an entry without a step");
      const int64_t step = entry["step"].as<int64_t>();
      if (step > up_to_step) continue;
      EvalMetrics metrics;
      for (const auto& kv : entry) {
        const std::string key = kv.first.as<std::string>();
        if (key != "step") metrics[key] = kv.second.as<double>();
      }
      entries_[step] = std::move(metrics);
    }
  } catch (const std::exception& e) {
    throw Error("cannot read the evaluation history " + path_ + " (" + e.what() +
                "): delete it to start the history afresh");
  }
}

void EvalHistory::record(int64_t step, const EvalMetrics& metrics) {
  entries_[step] = metrics;
  if (!path_.empty()) save();
}

std::vector<std::pair<int64_t, double>> EvalHistory::series(const std::string& metric) const {
  std::vector<std::pair<int64_t, double>> out;
  for (const auto& [step, metrics] : entries_) {
    auto it = metrics.find(metric);
    if (it != metrics.end()) out.emplace_back(step, it->second);
  }
  return out;
}

void EvalHistory::save() const {
  YAML::Emitter out;
  out << YAML::BeginSeq;
  for (const auto& [step, metrics] : entries_) {
    out << YAML::BeginMap << YAML::Key << "step" << YAML::Value << step;
    for (const auto& [name, value] : metrics) out << YAML::Key << name << YAML::Value << value;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  write_file_atomic(path_, std::string("# Every evaluation of this run, by step (t2t-trainer).\n") +
                               out.c_str() + "\n");
}

}  // namespace t2t
