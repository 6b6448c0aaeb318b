// A BatchTranslator translates with one loaded model on one device: it turns
// source lines into output lines the way T2T's utils/decoding.py does
// (inputs sorted by length and batched, results back in the caller's order,
// detokenized, EOS stripped). Callers reach it through Translator
// (translator.h), which loads it and shares it between threads; the modes
// built on it (file, interactive, dev split) are in decode_modes.h.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "t2t/core/hparams.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/search/beam_search.h"
#include "t2t/search/lexical_shortlist.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/translation.h"

namespace t2t {

class T2TModel;
class TextEncoder;

struct DecodeCounts {
  int64_t sentences = 0;
  int64_t empty = 0;         // answered with an empty line, no model run
  int64_t invalid_utf8 = 0;  // lines with bytes replaced by U+FFFD
  int64_t truncated = 0;     // inputs cut to max_input_length
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;  // of the best hypotheses, EOS included
  int64_t search_row_steps = 0;
  // With a shortlist: batches decoded and the target ids their steps
  // computed, summed over batches.
  int64_t shortlist_batches = 0;
  int64_t shortlist_columns = 0;

  DecodeCounts& operator+=(const DecodeCounts& other);
};

class BatchTranslator {
 public:
  // The model must already be on `device`; the decoder puts it in eval mode.
  BatchTranslator(std::shared_ptr<T2TModel> model, std::shared_ptr<TextEncoder> input_encoder,
          std::shared_ptr<TextEncoder> target_encoder, DecodeOptions options,
          torch::Device device = torch::kCPU);

  // A source line as T2T feeds it: stripped, invalid UTF-8 replaced
  // (counted), encoded, cut to max_input_length (with a warning naming
  // `where`, e.g. "in.en line 7"), EOS appended. An empty line gives no ids.
  std::vector<int64_t> encode_source(const std::string& line, const std::string& where);

  // encode_source() for valid UTF-8, without the cut (for callers that
  // refuse long inputs instead).
  std::vector<int64_t> encode_text(const std::string& utf8) const;

  // Already encoded source ids (EOS-terminated, or not): cut to
  // max_input_length with the same warning, EOS kept last.
  std::vector<int64_t> fit_source(std::vector<int64_t> ids, const std::string& where);

  // Encoded sources (each ending in EOS, or empty) -> one Translation each,
  // in their order; decoded longest first in batches of batch_size. An
  // empty source gets an empty text without running the model. Logs
  // progress every progress_seconds. With random sampling, sources[i] draws
  // as sentence first_key + i (sampling.h).
  std::vector<Translation> translate(const std::vector<std::vector<int64_t>>& sources,
                                     int64_t first_key = 0);

  // The same with this search and batch size (>= 1); `progress` (may be
  // empty) is called after each batch, one call at a time. Thread-safe.
  // `guides`: one per source (target_guide.h), or none.
  std::vector<Translation> translate(const std::vector<std::vector<int64_t>>& sources,
                                     const SearchOptions& search, int64_t batch_size,
                                     int64_t first_key = 0,
                                     const ProgressFn& progress = nullptr,
                                     const std::vector<TargetGuide>& guides = {});

  // The sources at `rows` (none empty) decoded as one batch on the calling
  // thread: one Translation per row, in their order. Thread-safe; adds to
  // `counts` (may be null), not to counts(). With random sampling rows[r]
  // draws as sentence first_key + rows[r].
  // `guides` as translate()'s, indexed as `sources`.
  std::vector<Translation> decode_batch(const std::vector<std::vector<int64_t>>& sources,
                                        const std::vector<int64_t>& rows,
                                        const SearchOptions& search,
                                        DecodeCounts* counts = nullptr,
                                        int64_t first_key = 0,
                                        const std::vector<TargetGuide>& guides = {}) const;
  // A source's wishes in target ids: the prefix, and the guide's
  // constraints with `terms` (a glossary's) added, each once. Throws
  // OptionError naming prefix or constraints for text the target
  // vocabulary gives no ids for. `kept` (may be null) receives the text of
  // each constraint kept, in the guide's order.
  TargetGuide encode_guide(const SourceGuide& guide, const std::vector<std::string>& terms,
                           std::vector<std::string>* kept = nullptr) const;

  // Decodes and discards synthetic batches of sizes up to batch_size, so
  // what a fresh process makes on first use (memory, kernels per row count)
  // is ready before a server's first request. Returns the seconds it took.
  double warm_up();

  // A target as score() takes it: encode_source()'s steps with the target
  // vocabulary and no cut.
  std::vector<int64_t> encode_target(const std::string& line);
  // Target text inside an output (a prefix, a term): encoded as the target
  // side, its last word left open where the script has no spaces between
  // words (SubwordTextEncoder::encode_open), without EOS. A `term` that
  // starts in such a script loses a SentencePiece word start ("▁") of its
  // own: inside a Chinese sentence no space precedes it.
  std::vector<int64_t> encode_target_fragment(const std::string& text, bool term = false) const;

  // Teacher-forced (score.h): per pair (sources[i], targets[i]), both
  // encoded and ending in EOS, the sum of the target ids' log-probabilities.
  // With `alignments` given, also each pair's word alignment, read from the
  // teacher-forced attention the search's alignment_probe picks.
  std::vector<double> score(const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets,
                            std::vector<WordAlignment>* alignments = nullptr);

  // One output record without the delimiter: the best text, or with
  // return_beams every hypothesis tab-separated, each followed by
  // "\t<score>" (%.2f) when write_beam_scores. Tabs and line breaks inside
  // a text become spaces.
  std::string format(const Translation& translation) const;

  // Each batch from now on computes the logits of the target ids
  // `shortlist` gives its sources (with `limits`), and of the ids its
  // guides ask for; null: every id. Not while batches are being decoded.
  void set_shortlist(std::shared_ptr<const LexicalShortlist> shortlist, ShortlistLimits limits);
  // The target ids a batch of sources[rows] with `guides` (one per row, or
  // none) decodes over: whole() without a shortlist.
  OutputColumns output_columns(const std::vector<std::vector<int64_t>>& sources,
                               const std::vector<int64_t>& rows,
                               const std::vector<TargetGuide>& guides = {}) const;

  const DecodeOptions& options() const { return options_; }
  void set_log_results(bool on) { options_.log_results = on; }
  DecodeCounts counts() const;
  const TextEncoder& input_encoder() const { return *input_encoder_; }
  const TextEncoder& target_encoder() const { return *target_encoder_; }

 private:
  std::shared_ptr<T2TModel> model_;
  std::shared_ptr<const LexicalShortlist> shortlist_;
  ShortlistLimits shortlist_limits_;
  // Hypothesis h of `source` as word alignments (word_alignment.h).
  WordAlignment align(const std::vector<int64_t>& source, const Hypothesis& h,
                      const std::string& text, double threshold) const;

  // Each target id's text without whitespace (PhraseTexts), made on first
  // use; null for a byte vocabulary, whose ids spell text one way only.
  std::shared_ptr<const std::vector<std::string>> target_id_texts() const;

  std::shared_ptr<TextEncoder> input_encoder_;
  std::shared_ptr<TextEncoder> target_encoder_;
  mutable std::once_flag id_texts_once_;
  mutable std::shared_ptr<const std::vector<std::string>> id_texts_;
  DecodeOptions options_;
  torch::Device device_;
  // Guards counts_: encode_source() and fit_source() may run concurrently.
  mutable std::mutex counts_mutex_;
  DecodeCounts counts_;
};

}  // namespace t2t
