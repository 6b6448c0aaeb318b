// Text-to-text problems: a vocabulary and a generator of text pairs per
// split; generate_data() does the rest.
#pragma once

#include <memory>
#include <string>

#include "t2t/data/disk_space.h"
#include "t2t/data/problem.h"
#include "t2t/data/samples.h"
#include "t2t/data/vocabulary.h"

namespace t2t {

class Text2TextProblem : public Problem {
 public:
  // The vocabulary: type and approximate size (T2T's approx_vocab_size).
  virtual VocabSpec vocab_spec() const { return VocabSpec{}; }
  // True for one vocabulary per side (T2T's translate_enzh problems);
  // false for one shared by inputs and targets.
  virtual bool separate_vocabularies() const { return false; }
  // Pairs with a side longer than this many bytes are dropped and counted.
  virtual int64_t max_line_bytes() const { return 4096; }
  // Sentences sampled uniformly from the training split to learn each
  // vocabulary; training time grows with the sample, and 100k is plenty
  // for a 32k vocabulary.
  virtual int64_t vocab_sample_sentences() const { return 100000; }

  // `split`'s pairs from raw data in tmp_dir, fetching what is missing. A
  // problem with training parts gives each part's as split "train-<part>"
  // (without its tag: generate_data() adds it).
  virtual std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                         const std::string& tmp_dir) const = 0;

  void generate_data(const std::string& data_dir, const std::string& tmp_dir,
                     const GenerateOptions& options) override;

  // vocab_spec(), unless data_dir holds T2T subword vocabularies for this
  // problem: those are used, so a T2T data directory gives T2T's ids.
  VocabSpec vocab_spec_in(const std::string& data_dir) const;

  // The vocabulary file paths in data_dir: one, or source and target.
  std::string source_vocab_path(const std::string& data_dir) const;
  std::string target_vocab_path(const std::string& data_dir) const;

 protected:
  virtual std::string source_suffix() const { return "inputs"; }
  virtual std::string target_suffix() const { return "targets"; }

  FeatureEncoders load_encoders(const std::string& data_dir) const override;

 private:
  // "train", or the training parts' splits.
  std::vector<std::string> training_splits() const;
  // generate_samples(split) with its part's tag on each source.
  std::unique_ptr<SampleStream> split_samples(const std::string& split,
                                              const std::string& tmp_dir) const;
  void learn_vocabularies(const std::string& data_dir, const std::string& tmp_dir,
                          const GenerateOptions& options) const;
  bool split_complete(const std::string& data_dir, const std::string& split) const;
  // Empty when a stream cannot tell its size.
  std::vector<SplitSize> splits_to_write(const std::string& data_dir, const std::string& tmp_dir,
                                         const GenerateOptions& options) const;
};

// Translation: the vocabulary suffixes are the language codes.
class TranslateProblem : public Text2TextProblem {
 public:
  virtual std::string source_language() const = 0;  // e.g. "en"
  virtual std::string target_language() const = 0;  // e.g. "zh"

 protected:
  std::string source_suffix() const override { return source_language(); }
  std::string target_suffix() const override { return target_language(); }
};

}  // namespace t2t
