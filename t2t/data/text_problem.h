// Text-to-text problems: a problem declares its vocabulary and a generator of
// (source, target) text pairs per split; generate_data() does the rest
// (vocabulary learning, parallel encoding, sharding, shuffling).
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
  // At most this many sentences per vocabulary are sampled (uniformly, from
  // the whole training split) for learning it. SentencePiece's unigram
  // training time grows with the sample; 100k sentences (a few million
  // words) is plenty for a 32k vocabulary and keeps a WMT-sized job to a
  // minute or two on two cores.
  virtual int64_t vocab_sample_sentences() const { return 100000; }

  // The (source, target) pairs of `split`, read from raw data in tmp_dir,
  // downloading or extracting what is missing.
  virtual std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                         const std::string& tmp_dir) const = 0;

  void generate_data(const std::string& data_dir, const std::string& tmp_dir,
                     const GenerateOptions& options) override;

  // The vocabulary actually used in data_dir: vocab_spec(), unless data_dir
  // already holds T2T subword vocabularies for this problem, which are then
  // used as they are so that an existing T2T data directory gives T2T's ids.
  VocabSpec vocab_spec_in(const std::string& data_dir) const;

  // The vocabulary file paths in data_dir: one, or source and target.
  std::string source_vocab_path(const std::string& data_dir) const;
  std::string target_vocab_path(const std::string& data_dir) const;

 protected:
  // Suffixes of the two vocabulary files when they are separate.
  virtual std::string source_suffix() const { return "inputs"; }
  virtual std::string target_suffix() const { return "targets"; }

  FeatureEncoders load_encoders(const std::string& data_dir) const override;

 private:
  void learn_vocabularies(const std::string& data_dir, const std::string& tmp_dir,
                          const GenerateOptions& options) const;
  // True when every shard of `split` is in data_dir.
  bool split_complete(const std::string& data_dir, const std::string& split) const;
  // The splits still to write and their estimated text, for the disk space
  // check; empty when a stream cannot tell its size.
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
