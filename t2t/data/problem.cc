#include "t2t/data/problem.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/io/tfrecord.h"

namespace t2t {

Registry<ProblemFactory>& problem_registry() {
  static Registry<ProblemFactory> registry("problem");
  return registry;
}

std::unique_ptr<Problem> create_problem(const std::string& name) {
  auto& registry = problem_registry();
  std::string base = name;
  bool reversed = false;
  if (!registry.contains(name) && ends_with(name, "_rev")) {
    base = name.substr(0, name.size() - 4);
    reversed = true;
  }
  if (!registry.contains(base)) throw registry.unknown(name);
  std::unique_ptr<Problem> problem = registry.get(base)();
  problem->name_ = base;
  problem->reversed_ = reversed;
  return problem;
}

std::vector<SplitSpec> Problem::dataset_splits() const { return {{"train", 100}, {"dev", 1}}; }

std::vector<std::string> Problem::data_filepaths(const std::string& data_dir,
                                                 const std::string& split) const {
  int shards = 0;
  for (const auto& s : dataset_splits())
    if (s.name == split) shards = s.shards;
  if (shards == 0) throw Error("problem " + name() + " has no split '" + split + "'");
  std::vector<std::string> paths;
  for (int i = 0; i < shards; ++i) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d", i, shards);
    paths.push_back((std::filesystem::path(data_dir) / (name() + "-" + split + suffix)).string());
  }
  return paths;
}

std::vector<std::string> Problem::training_filepaths(const std::string& data_dir) const {
  const auto parts = training_parts();
  if (parts.empty()) return data_filepaths(data_dir, "train");
  std::vector<std::string> files;
  for (const TrainingPart& p : parts) {
    const auto part = data_filepaths(data_dir, training_part_split(p.name));
    files.insert(files.end(), part.begin(), part.end());
  }
  return files;
}

DataMix Problem::training_mix(const std::string& data_dir) const {
  const auto parts = training_parts();
  if (parts.empty()) return {{"train", data_filepaths(data_dir, "train"), 1}};
  check_training_parts(parts, "problem " + name());
  for (const SplitSpec& s : dataset_splits())
    if (s.name == "train")
      throw Error("problem " + name() + " lists a 'train' split beside its training parts: its "
                  "training data is the parts' splits (train-<part>) alone");
  DataMix mix;
  for (const TrainingPart& p : parts) {
    if (reversed_ && !p.tag.empty())
      throw Error("problem " + name() + "_rev: training part '" + p.name + "' tags its sources "
                  "with '" + p.tag + "', which the reversed problem would learn to write as "
                  "targets; train " + name() + " itself, or declare the part without a tag");
    MixPart m{p.name, data_filepaths(data_dir, training_part_split(p.name)), p.weight};
    for (const std::string& f : m.files)
      if (!std::filesystem::exists(f))
        throw Error("problem " + name() + ": no shard " + f + " of training part '" + p.name +
                    "'; run t2t-datagen for it first");
    if (p.epochs > 0) {
      int64_t examples = 0;
      for (const std::string& f : m.files) examples += static_cast<int64_t>(count_tfrecords(f));
      m.weight = p.epochs * static_cast<double>(std::max<int64_t>(examples, 1));
    }
    mix.push_back(std::move(m));
  }
  return mix;
}

FeatureEncoders Problem::feature_encoders(const std::string& data_dir) const {
  FeatureEncoders enc = load_encoders(data_dir);
  if (reversed_) std::swap(enc.inputs, enc.targets);
  return enc;
}

}  // namespace t2t
