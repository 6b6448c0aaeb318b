#include "t2t/translate/decode_options.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/search_request.h"

namespace t2t {
namespace {

// A decode hparam that is "auto" (unset) or an integer.
std::optional<int64_t> probe_index(const HParams& dp, const std::string& key) {
  const std::string value = dp.get_string(key);
  if (value == "auto") return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < -64 || n > 1024)
    throw OptionError(key, "{" + key + "} must be auto or a layer/head index (negative layers "
                           "count from the last; head -1: the mean over heads), got '" + value +
                           "'");
  return n;
}

}  // namespace

HParams default_decode_hparams() {
  HParams hp;
  hp.add("beam_size", 4);
  hp.add("alpha", 0.6);
  hp.add("extra_length", 100);
  // t2t's own: T2T's decode length (the batch's padded input width +
  // extra_length for every sentence of the batch) instead of each input's.
  hp.add("batch_decode_length", false);
  // t2t's own: > 0 also stops a sentence as CTranslate2's patience does
  // (SearchOptions::patience); 0 keeps T2T's stopping test alone.
  hp.add("patience", 0.0);
  hp.add("batch_size", 0);  // 0: 32 sentences when decoding from a file
  hp.add("return_beams", false);
  hp.add("write_beam_scores", false);
  // T2T decodes every input whole (its default, -1); one pathological line
  // of thousands of words then stalls a whole file. Cut at 1,024 tokens, as
  // Marian's --max-length and CTranslate2's max_input_length do by default;
  // -1 (or 0) decodes whole inputs, as T2T.
  hp.add("max_input_size", kDefaultMaxInputSize);
  hp.add("num_samples", -1);
  hp.add("delimiter", "\n");
  hp.add("eos_penalty", 0.0);
  hp.add("min_length_ratio", 0.0);
  hp.add("skip_eos_postprocess", false);
  hp.add("log_results", true);
  // t2t's own, off by default: repetition guards (SearchOptions).
  hp.add("no_repeat_ngram_size", 0);
  hp.add("repetition_penalty", 1.0);
  // t2t's own: word alignments with each translation: "" (none), "hard"
  // (each target word's likeliest source word), a threshold such as "0.3"
  // (every pair with at least that weight) or "soft" (the weights); read
  // from decoder layer alignment_layer and head alignment_head ("auto": the
  // ones guided alignment trained, else the last layer's mean over heads).
  hp.add("alignment", "");
  hp.add("alignment_layer", "auto");
  hp.add("alignment_head", "auto");
  // t2t's own: > 0 counts a batch in tokens instead: sentences join it while
  // sentences x its longest source stays within this (Marian's
  // --mini-batch-words, CTranslate2's batch_type=tokens).
  hp.add("batch_tokens", 0);
  return hp;
}

DecodeOptions decode_options(const HParams& dp) {
  // Keys T2T has whose effect this decoder does not implement: refuse a
  // changed value rather than ignore it.
  if (dp.get_float("eos_penalty") != 0.0)
    throw OptionError("eos_penalty", "{eos_penalty} is not supported by t2t's decoder; leave it "
                                     "at 0");
  if (dp.get_float("min_length_ratio") != 0.0)
    throw OptionError("min_length_ratio", "{min_length_ratio} is not supported by t2t's decoder; "
                                          "leave it at 0");
  if (dp.get_bool("skip_eos_postprocess"))
    throw OptionError("skip_eos_postprocess", "{skip_eos_postprocess} is not supported by t2t's "
                                              "decoder; outputs always stop at EOS");

  DecodeOptions o;
  o.search.beam_size = dp.get_int("beam_size");
  o.search.alpha = dp.get_float("alpha");
  o.search.extra_length = dp.get_int("extra_length");
  o.search.batch_decode_length = dp.get_bool("batch_decode_length");
  if (o.search.beam_size < 1)
    throw OptionError("beam_size", "{beam_size} must be at least 1, got " +
                                       std::to_string(o.search.beam_size));
  o.search.patience = dp.get_float("patience");
  if (!(o.search.patience >= 0) || o.search.patience > 1000)
    throw OptionError("patience", "{patience} must be 0 (T2T's stopping test alone) or a positive "
                                  "number of beams' worth of ended hypotheses such as 1 or 2, got " +
                                      std::to_string(o.search.patience));
  if (o.search.extra_length < 0)
    throw OptionError("extra_length", "{extra_length} must be >= 0, got " +
                                          std::to_string(o.search.extra_length));
  o.return_beams = dp.get_bool("return_beams");
  o.write_beam_scores = dp.get_bool("write_beam_scores");
  if (o.write_beam_scores && !o.return_beams)
    spdlog::warn("decode hparam write_beam_scores only applies with return_beams=true (as in "
                 "T2T); no scores will be written");
  // As T2T: all beams are wanted, so the search may not stop once the best
  // one is settled (return_hypotheses says how).
  return_hypotheses(o.search, o.return_beams ? o.search.beam_size : 1);

  const int64_t batch = dp.get_int("batch_size");
  if (batch < 0)
    throw OptionError("batch_size", "{batch_size} must be >= 0 (0: 32), got " +
                                        std::to_string(batch));
  o.batch_size = batch == 0 ? 32 : batch;

  // The model's max_length limits training examples, not what it may
  // decode: only max_input_size cuts inputs.
  const int64_t limit = dp.get_int("max_input_size");
  o.max_input_length = std::max<int64_t>(0, limit);
  if (o.max_input_length == 1)
    throw OptionError("max_input_size", "an input limit of 1 token leaves room for EOS only; raise "
                                        "{max_input_size}");
  o.delimiter = dp.get_string("delimiter");
  if (o.delimiter.empty()) throw OptionError("delimiter", "{delimiter} must not be empty");
  o.num_samples = dp.get_int("num_samples");
  o.log_results = dp.get_bool("log_results");

  o.search.no_repeat_ngram_size = dp.get_int("no_repeat_ngram_size");
  o.search.repetition_penalty = dp.get_float("repetition_penalty");
  const std::string alignment = dp.get_string("alignment");
  if (!alignment.empty()) {
    o.search.alignment = true;
    if (alignment == "soft") {
      o.soft_alignment = true;
    } else if (alignment != "hard") {
      char* end = nullptr;
      o.search.alignment_threshold = std::strtod(alignment.c_str(), &end);
      if (end == alignment.c_str() || *end != '\0')
        throw OptionError("alignment", "{alignment} must be hard, soft or a threshold in (0, 1] "
                                       "such as 0.3, got '" + alignment + "'");
    }
  }
  o.alignment_layer = probe_index(dp, "alignment_layer");
  o.alignment_head = probe_index(dp, "alignment_head");
  o.batch_tokens = dp.get_int("batch_tokens");
  if (o.batch_tokens < 0)
    throw OptionError("batch_tokens", "{batch_tokens} must be >= 0 (0: batches counted in "
                                      "sentences), got " + std::to_string(o.batch_tokens));
  check_search_options(o.search);
  return o;
}

AttentionProbe alignment_probe(const DecodeOptions& options, const HParams& model_hparams) {
  const bool guided = model_hparams.has("guided_alignment_weight") &&
                      model_hparams.get_float("guided_alignment_weight") > 0;
  AttentionProbe probe;
  if (options.alignment_layer)
    probe.layer = *options.alignment_layer;
  else if (guided && model_hparams.has("guided_alignment_layer"))
    probe.layer = model_hparams.get_int("guided_alignment_layer");
  if (options.alignment_head)
    probe.head = *options.alignment_head;
  else if (guided && model_hparams.has("guided_alignment_head"))
    probe.head = model_hparams.get_int("guided_alignment_head");
  return probe;
}

SamplingOptions sampling_options(const HParams& hp, uint64_t seed) {
  SamplingOptions o;
  o.seed = seed;
  const std::string method = hp.has("sampling_method") ? hp.get_string("sampling_method") : "argmax";
  if (method != "argmax" && method != "random")
    throw Error("hparam sampling_method=" + method + " is not one of argmax, random");
  o.random = method == "random";
  if (hp.has("sampling_temp")) o.temperature = hp.get_float("sampling_temp");
  if (!(o.temperature >= 0))
    throw Error("hparam sampling_temp=" + std::to_string(o.temperature) + " must be >= 0 (0: "
                "always the likeliest token)");
  if (hp.has("sampling_keep_top_k")) o.keep_top_k = hp.get_int("sampling_keep_top_k");
  if (o.keep_top_k == 0 || o.keep_top_k < -1)
    throw Error("hparam sampling_keep_top_k=" + std::to_string(o.keep_top_k) + " must be -1 "
                "(every token) or at least 1");
  return o;
}

void check_sampling_search(const SearchOptions& search) {
  if (search.sampling.random && search.beam_size > 1)
    throw OptionError("beam_size", "hparam sampling_method=random samples in greedy decoding only, "
                                   "as in T2T, but {beam_size} is " +
                                       std::to_string(search.beam_size) + ": set {beam_size}=1, "
                                       "or leave sampling_method at argmax for beam search");
}

}  // namespace t2t
