// The Problem API. A Problem names a dataset, knows how to fetch and encode
// it into sharded TFRecord files of tf.train.Example, and hands the trainer
// and decoder the same files and vocabularies later. Concrete problems live
// in problems/ and register with T2T_REGISTER_PROBLEM(ClassName), keyed by
// T2T's snake_case rule (TranslateEnzhWmt32k -> translate_enzh_wmt32k).
//
//   Problem -> Text2TextProblem -> TranslateProblem -> concrete problems
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "t2t/core/registry.h"

namespace t2t {

class TextEncoder;  // t2t/text/text_encoder.h

// A dataset split and how many shard files it is written to.
struct SplitSpec {
  std::string name;  // "train", "dev" (T2T's EVAL), "test"
  int shards = 1;
};

struct GenerateOptions {
  int threads = 0;              // 0: all cores
  uint64_t seed = 429459;       // T2T's datagen default
  int64_t max_cases = 0;        // per split; 0: all
  int64_t max_line_bytes = -1;  // -1: the problem's own limit; 0: none
};

// The encoders of the "inputs" and "targets" features. `shared` is true
// when both are the very same vocabulary (then the model may tie its
// embeddings); two vocabularies that merely have the same size are not.
struct FeatureEncoders {
  std::shared_ptr<TextEncoder> inputs;
  std::shared_ptr<TextEncoder> targets;
  bool shared = false;
};

class Problem {
 public:
  virtual ~Problem() = default;

  // The registered name, without the "_rev" suffix.
  const std::string& name() const { return name_; }
  // True when asked for as "<name>_rev": inputs and targets swap places,
  // reading the very same files and vocabularies.
  bool reversed() const { return reversed_; }

  // One line for --registry_help.
  virtual std::string description() const = 0;

  // T2T's defaults: 100 train shards, 1 dev shard.
  virtual std::vector<SplitSpec> dataset_splits() const;

  // Downloads (into tmp_dir) what is missing, learns or loads the
  // vocabularies and writes every split's shards into data_dir. Complete
  // shards from an earlier run are kept; nothing half-written ever carries
  // a final shard name.
  virtual void generate_data(const std::string& data_dir, const std::string& tmp_dir,
                             const GenerateOptions& options) = 0;

  // The shard files of `split` in data_dir, named as T2T names them:
  // <problem>-<split>-00000-of-00100.
  std::vector<std::string> data_filepaths(const std::string& data_dir,
                                          const std::string& split) const;

  // The encoders for the model's features, loaded from data_dir; swapped
  // for a "_rev" problem.
  FeatureEncoders feature_encoders(const std::string& data_dir) const;

 protected:
  // The encoders in the direction the data was generated.
  virtual FeatureEncoders load_encoders(const std::string& data_dir) const = 0;

 private:
  friend std::unique_ptr<Problem> create_problem(const std::string& name);
  std::string name_;
  bool reversed_ = false;
};

using ProblemFactory = std::function<std::unique_ptr<Problem>()>;
Registry<ProblemFactory>& problem_registry();

// Looks `name` up, accepting T2T's "_rev" suffix on any registered problem.
// Throws t2t::Error with suggestions when unknown.
std::unique_ptr<Problem> create_problem(const std::string& name);

}  // namespace t2t

#define T2T_REGISTER_PROBLEM(Class)                                                 \
  static ::t2t::Registrar<::t2t::ProblemFactory> T2T_CONCAT(t2t_problem_registrar_, \
                                                            Class)(                 \
      ::t2t::problem_registry(), ::t2t::camelcase_to_snakecase(#Class),             \
      [] { return std::unique_ptr<::t2t::Problem>(new Class()); }, {#Class, __FILE__})
