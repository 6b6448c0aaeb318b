#include "t2t/train/best_checkpoint.h"

#include <cmath>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRecordFile = "best.yaml";

}  // namespace

bool improves_on(const std::optional<BestRecord>& best, double value, bool higher_is_better) {
  if (!std::isfinite(value)) return false;
  if (!best) return true;
  return higher_is_better ? value > best->value : value < best->value;
}

std::string BestCheckpoint::dir_of(const std::string& output_dir) {
  return (fs::path(output_dir) / "best").string();
}

BestCheckpoint::BestCheckpoint(std::string output_dir, const EvalMetricInfo& metric)
    : output_dir_(std::move(output_dir)), metric_(metric) {
  const std::string path = (fs::path(dir_of(output_dir_)) / kRecordFile).string();
  if (!fs::exists(path)) return;
  BestRecord r;
  try {
    const YAML::Node node = YAML::LoadFile(path);
    r.metric = node["metric"].as<std::string>();
    r.value = node["value"].as<double>();
    r.step = node["step"].as<int64_t>();
    r.checkpoint = node["checkpoint"].as<std::string>();
  } catch (const std::exception& e) {
    throw Error("cannot read " + path + " (" + e.what() + "): delete " + dir_of(output_dir_) +
                " to start keeping the best checkpoint afresh");
  }
  if (r.metric != metric_.name) {
    spdlog::info("{} holds the best checkpoint by {}, this run keeps the best by {}: the next "
                 "evaluation replaces it",
                 dir_of(output_dir_), r.metric, metric_.name);
    return;
  }
  best_ = r;
  spdlog::info("best checkpoint so far: step {} with {} {:.4f} ({})", r.step, r.metric, r.value,
               dir_of(output_dir_));
}

std::string BestCheckpoint::record(const std::string& checkpoint, int64_t step, double value) {
  const std::string dir = dir_of(output_dir_);
  const std::string copy = copy_checkpoint(checkpoint, dir);
  const fs::path hparams = fs::path(output_dir_) / "hparams.yaml";
  if (fs::exists(hparams)) write_file_atomic((fs::path(dir) / "hparams.yaml").string(),
                                             read_file(hparams.string()));
  BestRecord r{metric_.name, value, step, fs::path(copy).filename().string()};
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "metric" << YAML::Value << r.metric << YAML::Key
      << "value" << YAML::Value << r.value << YAML::Key << "step" << YAML::Value << r.step
      << YAML::Key << "checkpoint" << YAML::Value << r.checkpoint << YAML::EndMap;
  write_file_atomic((fs::path(dir) / kRecordFile).string(),
                    std::string("# The best checkpoint of this run by its best_metric "
                                "(t2t-trainer's option).\n") + out.c_str() + "\n");
  best_ = r;
  return copy;
}

}  // namespace t2t
