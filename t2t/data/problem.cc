#include "t2t/data/problem.h"

#include <cstdio>
#include <filesystem>

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

FeatureEncoders Problem::feature_encoders(const std::string& data_dir) const {
  FeatureEncoders enc = load_encoders(data_dir);
  if (reversed_) std::swap(enc.inputs, enc.targets);
  return enc;
}

}  // namespace t2t
