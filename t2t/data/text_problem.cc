#include "t2t/data/text_problem.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/data/alignment_feature.h"
#include "t2t/data/disk_space.h"
#include "t2t/data/shard_writer.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

namespace fs = std::filesystem;

VocabSpec Text2TextProblem::vocab_spec_in(const std::string& data_dir) const {
  VocabSpec spec = vocab_spec();
  if (spec.type == VocabType::kSubword || spec.type == VocabType::kByte) return spec;
  VocabSpec t2t_spec = spec;
  t2t_spec.type = VocabType::kSubword;
  std::string lang = separate_vocabularies() ? source_suffix() : "";
  if (fs::exists(fs::path(data_dir) / vocab_filename(name(), t2t_spec, lang))) return t2t_spec;
  return spec;
}

std::string Text2TextProblem::source_vocab_path(const std::string& data_dir) const {
  std::string lang = separate_vocabularies() ? source_suffix() : "";
  return (fs::path(data_dir) / vocab_filename(name(), vocab_spec_in(data_dir), lang)).string();
}

std::string Text2TextProblem::target_vocab_path(const std::string& data_dir) const {
  std::string lang = separate_vocabularies() ? target_suffix() : "";
  return (fs::path(data_dir) / vocab_filename(name(), vocab_spec_in(data_dir), lang)).string();
}

FeatureEncoders Text2TextProblem::load_encoders(const std::string& data_dir) const {
  const VocabSpec spec = vocab_spec_in(data_dir);
  FeatureEncoders enc;
  const std::string src = source_vocab_path(data_dir);
  if (!vocab_exists(src, spec))
    throw Error("no vocabulary for problem " + name() + " at '" + src + "'. Run " +
                command_suggestion("t2t-datagen", {{"problem", name()}, {"data_dir", data_dir}}) +
                " first.");
  if (separate_vocabularies()) {
    const std::string tgt = target_vocab_path(data_dir);
    if (!vocab_exists(tgt, spec))
      throw Error("no target vocabulary for problem " + name() + " at '" + tgt + "'. Run " +
                  command_suggestion("t2t-datagen", {{"problem", name()}}) + " first.");
    // The two side by side: loading a SentencePiece model is a noticeable
    // part of what a decoder waits before its first sentence.
    auto target = std::async(std::launch::async, [&] { return load_vocab(tgt, spec); });
    enc.inputs = load_vocab(src, spec);
    enc.targets = target.get();
  } else {
    enc.inputs = load_vocab(src, spec);
    enc.targets = enc.inputs;
    enc.shared = true;
  }
  return enc;
}

namespace {

// Keeps a uniform random sample of at most `capacity` sentences from a
// stream of unknown length (reservoir sampling), so that learning a
// vocabulary never needs the whole corpus in memory.
class Reservoir {
 public:
  Reservoir(size_t capacity, uint64_t seed) : capacity_(capacity), rng_(seed) {}
  void add(const std::string& s) {
    ++seen_;
    if (sample_.size() < capacity_) {
      sample_.push_back(s);
      return;
    }
    std::uniform_int_distribution<uint64_t> pick(0, seen_ - 1);
    uint64_t j = pick(rng_);
    if (j < capacity_) sample_[j] = s;
  }
  const std::vector<std::string>& sample() const { return sample_; }

 private:
  size_t capacity_;
  uint64_t seen_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::string> sample_;
};

// A training part's pairs with its tag before each source sentence.
class TaggedStream : public SampleStream {
 public:
  TaggedStream(std::unique_ptr<SampleStream> inner, std::string tag)
      : inner_(std::move(inner)), prefix_(std::move(tag) + " ") {}
  bool next(TextPair* pair) override {
    if (!inner_->next(pair)) return false;
    // An empty source stays empty, to be dropped as such.
    if (!pair->source.empty()) pair->source.insert(0, prefix_);
    return true;
  }
  int64_t text_bytes() const override { return inner_->text_bytes(); }

 private:
  std::unique_ptr<SampleStream> inner_;
  std::string prefix_;
};

// Whether the first record of the shard at `path` has `feature`.
bool has_feature(const std::string& path, const std::string& feature) {
  TFRecordReader reader(path);
  std::string record;
  return reader.next(&record) && parse_example(record).count(feature) > 0;
}

}  // namespace

std::vector<std::string> Text2TextProblem::training_splits() const {
  const auto parts = training_parts();
  if (parts.empty()) return {"train"};
  check_training_parts(parts, "problem " + name());
  std::vector<std::string> splits;
  for (const TrainingPart& p : parts) splits.push_back(training_part_split(p.name));
  return splits;
}

std::unique_ptr<SampleStream> Text2TextProblem::split_samples(const std::string& split,
                                                              const std::string& tmp_dir) const {
  std::unique_ptr<SampleStream> samples = generate_samples(split, tmp_dir);
  for (const TrainingPart& p : training_parts())
    if (training_part_split(p.name) == split && !p.tag.empty())
      return std::make_unique<TaggedStream>(std::move(samples), p.tag);
  return samples;
}

void Text2TextProblem::learn_vocabularies(const std::string& data_dir, const std::string& tmp_dir,
                                          const GenerateOptions& options) const {
  VocabSpec spec = vocab_spec_in(data_dir);
  if (spec.type == VocabType::kByte) return;
  for (const TrainingPart& p : training_parts())
    if (!p.tag.empty()) spec.whole_words.push_back(p.tag);
  const std::string src_path = source_vocab_path(data_dir);
  const std::string tgt_path = target_vocab_path(data_dir);
  const bool separate = separate_vocabularies();
  if (vocab_exists(src_path, spec) && (!separate || vocab_exists(tgt_path, spec))) {
    spdlog::info("using the existing {} vocabularies in {}", vocab_type_name(spec.type), data_dir);
    return;
  }
  const Stopwatch timer;
  const size_t capacity = static_cast<size_t>(vocab_sample_sentences());
  Reservoir source(capacity, options.seed), target(capacity, options.seed + 1);
  int64_t kept = 0;
  std::string dropped;
  // Every training part's pairs, in proportion to their sizes.
  for (const std::string& split : training_splits()) {
    FilteredStream stream(split_samples(split, tmp_dir), name() + " " + split + " (vocabulary)",
                          options.max_line_bytes < 0 ? max_line_bytes() : options.max_line_bytes,
                          options.max_cases);
    TextPair pair;
    while (stream.next(&pair)) {
      source.add(pair.source);
      (separate ? target : source).add(pair.target);
    }
    kept += stream.stats().kept();
    dropped += (dropped.empty() ? "" : "; ") + split + ": " + stream.stats().summary();
  }
  if (kept == 0)
    throw Error("problem " + name() + " produced no training pairs to learn a vocabulary from (" +
                dropped + ")");
  spdlog::info("learning {} vocabulary of ~{} from {} sentences{}", vocab_type_name(spec.type),
               spec.size, source.sample().size(), separate ? " per language" : "");
  learn_vocab(source.sample(), spec, src_path, options.threads);
  if (separate) learn_vocab(target.sample(), spec, tgt_path, options.threads);
  spdlog::info("vocabularies written to {} in {:.1f} s", data_dir, timer.seconds());
}

bool Text2TextProblem::split_complete(const std::string& data_dir, const std::string& split) const {
  for (const auto& p : data_filepaths(data_dir, split))
    if (!fs::exists(p)) return false;
  return true;
}

std::vector<SplitSize> Text2TextProblem::splits_to_write(const std::string& data_dir,
                                                         const std::string& tmp_dir,
                                                         const GenerateOptions& options) const {
  // The mean pair of the first ones, times the text's size, gives the count.
  constexpr int64_t kPeekPairs = 1000;
  std::vector<SplitSize> out;
  for (const SplitSpec& split : dataset_splits()) {
    if (split_complete(data_dir, split.name)) continue;
    auto stream = split_samples(split.name, tmp_dir);
    const int64_t bytes = stream->text_bytes();
    if (bytes < 0) return {};  // a stream that cannot tell: no estimate
    int64_t seen = 0, seen_bytes = 0;
    TextPair pair;
    while (seen < kPeekPairs && stream->next(&pair)) {
      ++seen;
      seen_bytes += static_cast<int64_t>(pair.source.size() + pair.target.size() + 2);
    }
    SplitSize size{split.name, split.shards, seen, seen_bytes};
    if (seen == kPeekPairs) {
      const double mean = static_cast<double>(seen_bytes) / seen;
      size.pairs = std::max(seen, static_cast<int64_t>(bytes / mean));
      if (options.max_cases > 0) size.pairs = std::min(size.pairs, options.max_cases);
      size.text_bytes = static_cast<int64_t>(size.pairs * mean);
    }
    out.push_back(size);
  }
  return out;
}

void Text2TextProblem::generate_data(const std::string& data_dir, const std::string& tmp_dir,
                                     const GenerateOptions& options) {
  if (!options.train_alignments.empty() && !training_parts().empty())
    throw OptionError("train_alignments",
                      "problem " + name() + " reads its training data in parts (" +
                          join(training_splits(), ", ") + "); {train_alignments} goes with a "
                          "problem whose training data is one 'train' split");
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec)
    throw OptionError("data_dir", "cannot create {data_dir} '" + data_dir + "': " + ec.message());
  // Before anything is written: will the shards fit?
  const int workers = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  check_disk_space(data_dir, splits_to_write(data_dir, tmp_dir, options),
                   vocab_spec_in(data_dir).type == VocabType::kByte, workers);
  learn_vocabularies(data_dir, tmp_dir, options);
  const FeatureEncoders enc = load_encoders(data_dir);

  // Each pair becomes a tf.train.Example with int64 features "inputs" and
  // "targets", EOS appended to both, as T2T writes them; an aligned pair
  // adds "alignment" (alignment_feature.h), empty where its text cannot be
  // placed on its words.
  std::atomic<int64_t> unplaced{0};
  auto encode = [&enc, &unplaced](const TextPair& pair) {
    std::vector<int64_t> inputs = enc.inputs->encode(pair.source);
    std::vector<int64_t> targets = enc.targets->encode(pair.target);
    Int64Features features;
    if (pair.aligned) {
      auto links = token_alignment(*enc.inputs, pair.source, inputs, *enc.targets, pair.target,
                                   targets, pair.alignment, pair.alignment_where);
      if (!links) ++unplaced;
      features["alignment"] = links ? std::move(*links) : std::vector<int64_t>();
    }
    inputs.push_back(kEosId);
    targets.push_back(kEosId);
    const auto lengths = std::make_pair(static_cast<int64_t>(inputs.size()),
                                        static_cast<int64_t>(targets.size()));
    features["inputs"] = std::move(inputs);
    features["targets"] = std::move(targets);
    return EncodedExample{serialize_example(features), lengths.first, lengths.second};
  };

  uint64_t split_seed = options.seed;
  for (const SplitSpec& split : dataset_splits()) {
    ++split_seed;
    const auto paths = data_filepaths(data_dir, split.name);
    if (split_complete(data_dir, split.name)) {
      if (split.name == "train" && !options.train_alignments.empty() &&
          !has_feature(paths.front(), "alignment"))
        throw OptionError("train_alignments",
                          "the training shards in '" + data_dir +
                              "' exist without word alignments, and t2t-datagen never overwrites "
                              "shards: remove " + name() + "-train-* there (or give another "
                              "{data_dir}) to write them with {train_alignments}");
      spdlog::info("{} {}: all {} shards exist, skipping", name(), split.name, paths.size());
      continue;
    }
    const bool aligned = split.name == "train" && !options.train_alignments.empty();
    std::unique_ptr<SampleStream> samples = split_samples(split.name, tmp_dir);
    if (aligned)
      samples = std::make_unique<AlignedStream>(std::move(samples), options.train_alignments);
    FilteredStream stream(std::move(samples), name() + " " + split.name,
                          options.max_line_bytes < 0 ? max_line_bytes() : options.max_line_bytes,
                          options.max_cases);
    unplaced = 0;
    ShardWriteResult r = write_shuffled_shards(stream, encode, paths, options.threads, split_seed);
    spdlog::info("{} {}: wrote {} examples into {} shards in {:.1f} s ({:.0f} pairs/s); {}", name(),
                 split.name, r.examples, paths.size(), r.seconds,
                 r.seconds > 0 ? r.examples / r.seconds : 0.0, stream.stats().summary());
    if (r.examples == 0)
      throw Error("problem " + name() + " produced no " + split.name + " examples (" +
                  stream.stats().summary() + ")");
    if (aligned)
      spdlog::info("{} {}: word alignments from {} in the shards{}", name(), split.name,
                   options.train_alignments,
                   unplaced > 0 ? " (" + std::to_string(unplaced.load()) +
                                      " pairs without: a vocabulary normalises their text into "
                                      "other words)"
                                : std::string());
  }
}

}  // namespace t2t
