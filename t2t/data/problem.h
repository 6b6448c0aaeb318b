// A Problem names a dataset, fetches and encodes it into sharded TFRecord
// files of tf.train.Example, and gives the trainer and decoder those files
// and vocabularies. T2T_REGISTER_PROBLEM(ClassName) registers one under
// T2T's snake_case name (TranslateEnzhWmt32k -> translate_enzh_wmt32k).
//
//   Problem -> Text2TextProblem -> TranslateProblem -> concrete problems
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "t2t/core/registry.h"
#include "t2t/data/data_mix.h"

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
  // A Pharaoh word-alignment file, one line per raw training pair: written
  // into the training shards as the "alignment" feature that
  // guided-alignment training reads. "": none.
  std::string train_alignments;
};

// The encoders of the "inputs" and "targets" features. `shared`: the very
// same vocabulary (the model may then tie its embeddings), not merely one
// of the same size.
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
  // Asked for as "<name>_rev": inputs and targets swap places.
  bool reversed() const { return reversed_; }

  // One line for --registry_help.
  virtual std::string description() const = 0;

  // T2T's defaults: 100 train shards, 1 dev shard. A problem with training
  // parts lists a split "train-<part>" for each instead of "train".
  virtual std::vector<SplitSpec> dataset_splits() const;

  // Training data in parts mixed by weight as it is read (data_mix.h);
  // none: the "train" split alone.
  virtual std::vector<TrainingPart> training_parts() const { return {}; }

  // What training reads: every training part's shards with its weight (a
  // part given in epochs weighs epochs x its examples, counted in its
  // shards), or one part "train" of the train split. Throws t2t::Error for
  // parts that do not fit the splits, tagged parts of a "_rev" problem
  // (the tags would become targets), or missing shards.
  DataMix training_mix(const std::string& data_dir) const;
  // The training shards, part after part.
  std::vector<std::string> training_filepaths(const std::string& data_dir) const;

  // Downloads into tmp_dir what is missing, learns or loads the
  // vocabularies and writes the shards into data_dir. Complete shards are
  // kept; nothing half-written carries a final name.
  virtual void generate_data(const std::string& data_dir, const std::string& tmp_dir,
                             const GenerateOptions& options) = 0;

  // T2T's shard names: <problem>-<split>-00000-of-00100.
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
