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

  DecodeCounts& operator+=(const DecodeCounts& other);
};

class BatchTranslator {
 public:
  // The model must already be on `device`; the decoder puts it in eval mode.
  BatchTranslator(std::shared_ptr<T2TModel> model, std::shared_ptr<TextEncoder> input_encoder,
          std::shared_ptr<TextEncoder> target_encoder, DecodeOptions options,
          torch::Device device = torch::kCPU);

  // A source line as T2T feeds it: surrounding whitespace stripped, invalid
  // UTF-8 replaced (and counted), encoded, cut to max_input_length (with a
  // warning naming `where`, e.g. "in.en line 7"), EOS appended. An empty
  // line gives no ids at all.
  std::vector<int64_t> encode_source(const std::string& line, const std::string& where);

  // What encode_source() does to valid UTF-8, without the cut: stripped,
  // encoded, EOS appended; empty for an empty line. For callers that refuse
  // long inputs instead of cutting them (the server), then fit_source().
  std::vector<int64_t> encode_text(const std::string& utf8) const;

  // Already encoded source ids (EOS-terminated, or not): cut to
  // max_input_length with the same warning, EOS kept last.
  std::vector<int64_t> fit_source(std::vector<int64_t> ids, const std::string& where);

  // Translates encoded sources (each ending in EOS, or empty) and returns one
  // Translation per source, in their order. Sources are decoded longest
  // first in batches of batch_size (several at once on the CPU, see
  // parallel_batches); an empty source gets one empty text without running
  // the model. Logs progress (sentences/s, output tokens/s) every
  // progress_seconds. With random sampling, sources[i] draws as sentence
  // first_key + i (sampling.h): a caller that feeds one input in several
  // calls (interactive lines) passes the position of its first source.
  std::vector<Translation> translate(const std::vector<std::vector<int64_t>>& sources,
                                     int64_t first_key = 0);

  // The same with another search and batch size (>= 1) than the options'
  // (a caller's per-call settings), and `progress` (may be empty) called
  // after each batch with the sentences done so far and the total, one call
  // at a time. Safe to call from several threads at once.
  std::vector<Translation> translate(const std::vector<std::vector<int64_t>>& sources,
                                     const SearchOptions& search, int64_t batch_size,
                                     int64_t first_key = 0,
                                     const ProgressFn& progress = nullptr);

  // The sources at `rows` (none empty) decoded as one batch with `search`,
  // on the calling thread: one Translation per row, in their order. What
  // translate() runs per batch, and what a server runs on the batches it
  // forms itself. Safe to call from several threads at once; adds what it
  // did to `counts` (may be null), not to counts(). With random sampling
  // the source at rows[r] draws as sentence first_key + rows[r].
  std::vector<Translation> decode_batch(const std::vector<std::vector<int64_t>>& sources,
                                        const std::vector<int64_t>& rows,
                                        const SearchOptions& search,
                                        DecodeCounts* counts = nullptr,
                                        int64_t first_key = 0) const;

  // Decodes synthetic batches of sizes up to the options' batch_size (each
  // up to 8, then an eighth apart), three steps each at two source lengths,
  // and discards them: what a fresh process makes on first use (memory,
  // and oneDNN's or FBGEMM's kernels, one per row count, where they run) is
  // then ready before the first real request. For servers, which should
  // answer their first requests as fast as the later ones. Returns the
  // seconds it took.
  double warm_up();

  // A target as score() takes it: surrounding whitespace stripped, invalid
  // UTF-8 replaced (counted with the sources'), encoded by the target
  // vocabulary, EOS appended; no ids at all for an empty line.
  std::vector<int64_t> encode_target(const std::string& line);

  // Teacher-forced (score.h): per pair (sources[i], targets[i]), both
  // encoded and ending in EOS, the sum of the log-probabilities of the
  // target's ids, in the pairs' order. Batches of batch_size pairs, longest
  // source first; a progress line every progress_seconds.
  std::vector<double> score(const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets);

  // One output record without the delimiter: the best text, or with
  // return_beams every hypothesis tab-separated, each followed by
  // "\t<score>" (%.2f) when write_beam_scores. Tabs and line breaks inside
  // a text become spaces so that the record keeps its columns and line.
  std::string format(const Translation& translation) const;

  const DecodeOptions& options() const { return options_; }
  void set_log_results(bool on) { options_.log_results = on; }
  DecodeCounts counts() const;
  const TextEncoder& input_encoder() const { return *input_encoder_; }
  const TextEncoder& target_encoder() const { return *target_encoder_; }

 private:
  std::shared_ptr<T2TModel> model_;
  std::shared_ptr<TextEncoder> input_encoder_;
  std::shared_ptr<TextEncoder> target_encoder_;
  DecodeOptions options_;
  torch::Device device_;
  // encode_source() and fit_source() may run on several threads (a server's
  // request handlers): counts_ is kept under this lock.
  mutable std::mutex counts_mutex_;
  DecodeCounts counts_;
};

}  // namespace t2t
