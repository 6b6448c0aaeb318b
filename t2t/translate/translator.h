// The one way into translating with a trained model: checks the options,
// loads and readies the checkpoint (quantization, packed weights, CUDA
// graphs), swaps in newer checkpoints while callers translate, and keeps
// the queue in which concurrent callers' sentences share batches.
//
// Each call works on the model current when it began (current()): a reload
// never changes a translation midway.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t2t/data/problem.h"
#include "t2t/translate/batch_queue.h"
#include "t2t/translate/decode_modes.h"
#include "t2t/translate/glossary.h"
#include "t2t/translate/search_request.h"
#include "t2t/translate/source_guides.h"
#include "t2t/translate/translator_options.h"

namespace t2t {

class BatchTranslator;
class LexicalShortlist;
class T2TModel;

// A checkpoint loaded and ready to translate, and where it came from.
struct LoadedModel {
  std::shared_ptr<T2TModel> model;
  FeatureEncoders encoders;
  std::string checkpoint;  // the file (or T2T's prefix) it was read from
  int64_t step = 0;
  bool int8_checkpoint = false;  // its weights were saved in int8
  // Text in, text out over `model`; set once the model is ready.
  std::shared_ptr<BatchTranslator> batch_translator;
};

struct ReloadResult {
  bool reloaded = false;  // false: the newest checkpoint is the one loaded
  std::string checkpoint;
  int64_t step = 0;
  int64_t previous_step = 0;
};

class Translator {
 public:
  enum class Load { kNow, kLater };

  // Checks the options (OptionError naming the one at fault) and builds the
  // problem; with Load::kNow also load()s.
  explicit Translator(TranslatorOptions options, Load when = Load::kNow);
  // A model the caller built, readied as a loaded one is. `encoders` may be
  // empty: then only ids can be translated.
  Translator(TranslatorOptions options, std::shared_ptr<T2TModel> model, FeatureEncoders encoders);
  // Closes the queue and waits for its workers.
  ~Translator();
  // How many batches of the shared queue are decoded side by side.
  int queue_workers() const;
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // Loads the checkpoint the options name. Throws t2t::Error naming what is
  // missing or does not match the hparams.
  void load();
  // Loads the newest checkpoint beside the current one, unless it is the
  // current one, and swaps it in. On failure throws t2t::Error and the
  // current model stays. One at a time.
  ReloadResult reload();
  // What reload() would load now, or "".
  std::string newer_checkpoint() const;

  // The model to use now; null before a load succeeded.
  std::shared_ptr<const LoadedModel> current() const;
  const TranslatorOptions& options() const { return options_; }
  c10::Device device() const { return device_; }
  const Problem& problem() const { return *problem_; }

  // One Translation per text, in their order. A list of at least a batch,
  // or with its own batch size, is batched on its own; a shorter one shares
  // the queue with other callers' sentences. Thread-safe.
  // `guides`: one per text (its prefix and terms), or none; the glossary's
  // terms (the translator's and the request's) are added to each text's.
  // Throws OptionError naming the field at fault, before anything is
  // decoded.
  std::vector<Translation> translate(const std::vector<std::string>& texts,
                                     const SearchRequest& request = {},
                                     std::optional<int64_t> batch_size = std::nullopt,
                                     const std::vector<SourceGuide>& guides = {});
  // The guides of `texts`, encoded as `sources` for `model`: their own
  // (one per text, or none) with the terms of the translator's glossary and
  // of `glossary` (the call's). What translate() and a server's requests
  // share. Throws OptionError naming the field at fault.
  GuidedSources guide(const LoadedModel& model, const std::vector<std::string>& texts,
                      const std::vector<std::vector<int64_t>>& sources,
                      const std::vector<SourceGuide>& guides,
                      const std::vector<GlossaryEntry>& glossary,
                      const SearchOptions& search) const;
  // decode_modes.h's three modes with the current model; the file mode
  // with the translator's glossary.
  DecodeOutcome translate_file(const std::string& source, const std::string& target,
                               const ProgressFn& progress = nullptr,
                               FileDecodeExtras extras = {});
  // translate_file() in pieces of `piece_lines` lines that survive a kill
  // (decode_pieces.h): a run started again with the same model and options
  // goes on after the last finished piece.
  DecodeOutcome translate_file_in_pieces(const std::string& source, const std::string& target,
                                         int64_t piece_lines, const ProgressFn& progress = nullptr,
                                         FileDecodeExtras extras = {});
  int64_t translate_stream(std::istream& in, std::ostream& out);
  DecodeOutcome translate_dev_split(const std::string& decodes_path);
  // Teacher-forced log-probabilities of targets[i] given sources[i]
  // (BatchTranslator::score); a pair needs both sides.
  // With `alignments`, also each pair's word alignment.
  std::vector<double> score(const std::vector<std::string>& sources,
                            const std::vector<std::string>& targets,
                            std::vector<WordAlignment>* alignments = nullptr);
  // t2t-decoder --score_file (score_file.h); `alignments` as there.
  std::vector<double> score_file(const std::string& path,
                                 std::vector<WordAlignment>* alignments = nullptr);

  using OnBatch = std::function<void(int64_t sentences, int64_t output_tokens)>;
  // Called after each batch the queue's workers decode; set it before the
  // first submit().
  void on_batch(OnBatch observer);
  // Queues a request encoded for current(), answered through
  // PendingRequest::wait(). Starts the workers on first use.
  BatchQueue::Admission submit(const std::shared_ptr<PendingRequest>& request);
  int64_t queue_depth() const;
  // No more submissions; what is queued is still decoded.
  void close_queue();
  // Fails every request still waiting (not those being decoded) with `why`.
  int64_t cancel_waiting(const std::string& why);
  // After close_queue(): waits for the workers to finish what is queued.
  void join_workers();

 private:
  std::shared_ptr<const LoadedModel> ready(LoadedModel loaded) const;
  std::shared_ptr<const LoadedModel> load_checkpoint(const std::string& checkpoint) const;
  std::shared_ptr<const LoadedModel> require_current() const;
  std::vector<std::vector<int64_t>> encode(BatchTranslator& decoder,
                                           const std::vector<std::string>& texts) const;
  // Encoded sources through the model's own batches or the shared queue.
  std::vector<Translation> translate_encoded(const std::shared_ptr<const LoadedModel>& model,
                                             std::vector<std::vector<int64_t>> sources,
                                             const SearchOptions& search,
                                             std::optional<int64_t> batch_size,
                                             std::vector<TargetGuide> guides);
  // The main checkpoint with options_.ensemble's members, as one model.
  LoadedModel load_ensemble(const std::string& checkpoint) const;
  // options_.shortlist's, read on the first call: it depends only on the
  // vocabularies, which a checkpoint reload keeps.
  std::shared_ptr<const LexicalShortlist> shortlist(const FeatureEncoders& encoders) const;

  TranslatorOptions options_;
  c10::Device device_;
  std::shared_ptr<const Problem> problem_;
  Glossary glossary_;  // options_.glossary's
  std::mutex reload_mutex_;
  mutable std::mutex current_mutex_;
  std::shared_ptr<const LoadedModel> current_;
  mutable std::mutex shortlist_mutex_;
  mutable std::optional<std::shared_ptr<const LexicalShortlist>> shortlist_;

  struct Queue;  // the queue and its workers, started on first submit()
  std::unique_ptr<Queue> queue_;
};

}  // namespace t2t
