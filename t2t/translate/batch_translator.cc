#include "t2t/translate/batch_translator.h"

#include <ATen/Parallel.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/allocator.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/translate/decode_batches.h"
#include "t2t/translate/int8_checkpoint.h"
#include "t2t/translate/parallel_batches.h"
#include "t2t/search/score.h"
#include "t2t/io/mapped_file.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/kernels/cpu_features.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/skip_init.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/alignment_words.h"
#include "t2t/search/constraint_state.h"
#include "t2t/text/sentencepiece_encoder.h"
#include "t2t/text/subword_text_encoder.h"
#include "t2t/text/text_encoder.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// When a long translate() or score() says how far it got: every
// `every` seconds, and not once all `total` items are done.
class ProgressTimer {
 public:
  ProgressTimer(double every, int64_t total) : every_(every), total_(total) {}
  // Seconds since the start when a progress line is due after `done`
  // items; 0 when none is.
  double due(int64_t done) {
    const double now = clock_.seconds();
    if (now - last_ < every_ || done >= total_) return 0.0;
    last_ = now;
    return now;
  }

 private:
  const Stopwatch clock_;
  const double every_;
  const int64_t total_;
  double last_ = 0.0;
};

}  // namespace

BatchTranslator::BatchTranslator(std::shared_ptr<T2TModel> model, std::shared_ptr<TextEncoder> input_encoder,
                 std::shared_ptr<TextEncoder> target_encoder, DecodeOptions options,
                 torch::Device device)
    : model_(std::move(model)),
      input_encoder_(std::move(input_encoder)),
      target_encoder_(std::move(target_encoder)),
      options_(std::move(options)),
      device_(device) {
  model_->eval();
}

std::vector<int64_t> BatchTranslator::encode_source(const std::string& line, const std::string& where) {
  std::string text = line;
  if (!is_valid_utf8(text)) {
    {
      std::lock_guard<std::mutex> lock(counts_mutex_);
      ++counts_.invalid_utf8;
    }
    text = utf8_replace_invalid(text);
  }
  std::vector<int64_t> ids = encode_text(text);
  if (ids.empty()) return ids;
  return fit_source(std::move(ids), where);
}

std::vector<int64_t> BatchTranslator::encode_text(const std::string& utf8) const {
  const std::string text = u32_to_utf8(python_strip(utf8_to_u32(utf8)));
  if (text.empty()) return {};
  std::vector<int64_t> ids = input_encoder_->encode(text);
  ids.push_back(kEosId);
  return ids;
}

std::vector<int64_t> BatchTranslator::fit_source(std::vector<int64_t> ids, const std::string& where) {
  if (ids.empty() || ids.back() != kEosId) ids.push_back(kEosId);
  const int64_t limit = options_.max_input_length;
  if (limit > 0 && static_cast<int64_t>(ids.size()) > limit) {
    {
      std::lock_guard<std::mutex> lock(counts_mutex_);
      ++counts_.truncated;
    }
    spdlog::warn("{}: {} tokens, more than the decode hparam max_input_size={} (EOS included); "
                 "decoding the first {} only (max_input_size=-1 decodes inputs whole)",
                 where, ids.size(), limit, limit - 1);
    ids.resize(limit - 1);
    ids.push_back(kEosId);
  }
  return ids;
}

namespace {

// Target text as the encoders take it: invalid UTF-8 replaced, stripped.
std::string clean_target_text(const std::string& text) {
  return u32_to_utf8(python_strip(utf8_to_u32(utf8_replace_invalid(text))));
}

}  // namespace

std::vector<int64_t> BatchTranslator::encode_target(const std::string& line) {
  if (!is_valid_utf8(line)) {
    std::lock_guard<std::mutex> lock(counts_mutex_);
    ++counts_.invalid_utf8;
  }
  const std::string text = clean_target_text(line);
  if (text.empty()) return {};
  std::vector<int64_t> ids = target_encoder_->encode(text);
  ids.push_back(kEosId);
  return ids;
}

std::vector<int64_t> BatchTranslator::encode_target_fragment(const std::string& text,
                                                             bool term) const {
  const std::string stripped = clean_target_text(text);
  const std::u32string u = utf8_to_u32(stripped);
  const auto* subword = dynamic_cast<const SubwordTextEncoder*>(target_encoder_.get());
  if (subword && !u.empty() && is_cjk_word_char(u.back())) return subword->encode_open(stripped);
  std::vector<int64_t> ids = target_encoder_->encode(stripped);
  if (term && ids.size() > 1 && is_cjk_word_char(u.front()) &&
      dynamic_cast<const SentencePieceEncoder*>(target_encoder_.get()) &&
      without_spaces(target_encoder_->decode({ids.front()})).empty())
    ids.erase(ids.begin());
  return ids;
}

std::shared_ptr<const std::vector<std::string>> BatchTranslator::target_id_texts() const {
  std::call_once(id_texts_once_, [this] {
    if (dynamic_cast<const ByteTextEncoder*>(target_encoder_.get())) return;
    auto texts = std::make_shared<std::vector<std::string>>();
    const int64_t n = target_encoder_->vocab_size();
    texts->reserve(static_cast<size_t>(n));
    for (int64_t id = 0; id < n; ++id)
      texts->push_back(TextEncoder::is_reserved(id) ? std::string()
                                                    : without_spaces(target_encoder_->decode({id})));
    id_texts_ = std::move(texts);
  });
  return id_texts_;
}

TargetGuide BatchTranslator::encode_guide(const SourceGuide& guide,
                                          const std::vector<std::string>& terms,
                                          std::vector<std::string>* kept) const {
  TargetGuide out;
  if (!guide.prefix.empty()) {
    out.prefix = encode_target_fragment(guide.prefix);
    if (out.prefix.empty())
      throw OptionError("prefix", "the {prefix} '" + guide.prefix + "' gives no target tokens");
  }
  auto add = [&](const std::string& term) {
    auto ids = encode_target_fragment(term, /*term=*/true);
    if (ids.empty())
      throw OptionError("constraints", "the term '" + term + "' of {constraints} gives no target "
                                       "tokens: give it some text");
    if (std::find(out.constraints.begin(), out.constraints.end(), ids) != out.constraints.end())
      return;
    out.constraints.push_back(std::move(ids));
    out.constraint_texts.terms.push_back(without_spaces(term));
    if (kept) kept->push_back(term);
  };
  for (const std::string& term : guide.constraints) add(term);
  for (const std::string& term : terms) add(term);
  if (!out.constraints.empty()) out.constraint_texts.id_texts = target_id_texts();
  return out;
}

WordAlignment BatchTranslator::align(const std::vector<int64_t>& source, const Hypothesis& h,
                                     const std::string& text, double threshold) const {
  std::vector<int64_t> target = h.ids;
  if (h.finished) target.push_back(kEosId);
  return align_words(alignment_text(*input_encoder_, source), token_spans(*input_encoder_, source),
                     text,
                     token_spans(*target_encoder_, target), h.attention, threshold);
}

std::vector<double> BatchTranslator::score(const std::vector<std::vector<int64_t>>& sources,
                                   const std::vector<std::vector<int64_t>>& targets,
                                   std::vector<WordAlignment>* alignments) {
  if (sources.size() != targets.size())
    throw Error("BatchTranslator::score: " + std::to_string(sources.size()) + " sources but " +
                std::to_string(targets.size()) + " targets");
  const int64_t n = static_cast<int64_t>(sources.size());
  for (int64_t i = 0; i < n; ++i)
    if (is_empty_source(sources[i]) || targets[i].empty() || targets[i].back() != kEosId)
      throw Error("BatchTranslator::score: pair " + std::to_string(i + 1) + " needs a non-empty source "
                  "and a target ending in EOS");
  std::vector<double> out(n, 0.0);
  const bool align_pairs = alignments != nullptr;
  if (align_pairs) alignments->assign(n, WordAlignment());
  ProgressTimer progress(options_.progress_seconds, n);
  int64_t done = 0, tokens = 0;
  for (const auto& rows : decode_batches(sources, options_.batch_size, options_.batch_tokens)) {
    at::Tensor attention;
    // One read of the device per batch, not one per sentence.
    const at::Tensor scores =
        target_log_probs(*model_, padded_batch(sources, rows).to(device_),
                         padded_batch(targets, rows).to(device_),
                         align_pairs ? &options_.search.alignment_probe : nullptr, &attention)
            .to(torch::kCPU, torch::kFloat64)
            .contiguous();
    const double* score = scores.data_ptr<double>();
    for (size_t r = 0; r < rows.size(); ++r) {
      out[rows[r]] = score[r];
      tokens += static_cast<int64_t>(targets[rows[r]].size());
      if (!align_pairs) continue;
      // The target as a finished hypothesis: its ids, then EOS.
      const auto& target = targets[rows[r]];
      Hypothesis h;
      h.ids.assign(target.begin(), target.end() - 1);
      h.finished = true;
      const auto row = attention[static_cast<int64_t>(r)];
      const auto source_length = static_cast<int64_t>(sources[rows[r]].size());
      for (size_t t = 0; t < target.size(); ++t) {
        const float* p = row[static_cast<int64_t>(t)].data_ptr<float>();
        h.attention.emplace_back(p, p + source_length);
      }
      (*alignments)[rows[r]] =
          align(sources[rows[r]], h, target_encoder_->decode(h.ids), options_.search.alignment_threshold);
    }
    done += static_cast<int64_t>(rows.size());
    if (const double now = progress.due(done)) {
      spdlog::info("scored {}/{} pairs: {:.1f} pairs/s, {:.0f} target tokens/s", done, n,
                   done / now, tokens / now);
    }
  }
  return out;
}

DecodeCounts& DecodeCounts::operator+=(const DecodeCounts& other) {
  sentences += other.sentences;
  empty += other.empty;
  invalid_utf8 += other.invalid_utf8;
  truncated += other.truncated;
  input_tokens += other.input_tokens;
  output_tokens += other.output_tokens;
  search_row_steps += other.search_row_steps;
  shortlist_batches += other.shortlist_batches;
  shortlist_columns += other.shortlist_columns;
  return *this;
}

OutputColumns BatchTranslator::output_columns(const std::vector<std::vector<int64_t>>& sources,
                                              const std::vector<int64_t>& rows,
                                              const std::vector<TargetGuide>& guides) const {
  if (!shortlist_) return OutputColumns();
  std::vector<const std::vector<int64_t>*> batch_sources;
  for (int64_t row : rows) batch_sources.push_back(&sources[row]);
  std::vector<int64_t> wished;  // what the guides ask for must be in reach
  for (const auto& g : guides) {
    wished.insert(wished.end(), g.prefix.begin(), g.prefix.end());
    for (const auto& phrase : g.constraints) wished.insert(wished.end(), phrase.begin(), phrase.end());
  }
  return shortlist_->columns(batch_sources, wished, shortlist_limits_);
}

void BatchTranslator::set_shortlist(std::shared_ptr<const LexicalShortlist> shortlist,
                                    ShortlistLimits limits) {
  if (shortlist && shortlist->target_vocab_size() != target_encoder_->vocab_size())
    throw Error("the shortlist is for a target vocabulary of " +
                std::to_string(shortlist->target_vocab_size()) + " ids, this model's has " +
                std::to_string(target_encoder_->vocab_size()));
  shortlist_ = std::move(shortlist);
  shortlist_limits_ = limits;
}

DecodeCounts BatchTranslator::counts() const {
  std::lock_guard<std::mutex> lock(counts_mutex_);
  return counts_;
}

std::vector<Translation> BatchTranslator::decode_batch(const std::vector<std::vector<int64_t>>& sources,
                                               const std::vector<int64_t>& rows,
                                               const SearchOptions& search,
                                               DecodeCounts* counts, int64_t first_key,
                                               const std::vector<TargetGuide>& guides) const {
  const at::Tensor batch = padded_batch(sources, rows);
  SearchStats stats;
  std::vector<int64_t> keys;
  if (search.sampling.draws())
    for (int64_t row : rows) keys.push_back(first_key + row);
  std::vector<TargetGuide> batch_guides;
  if (!guides.empty())
    for (int64_t row : rows) batch_guides.push_back(guides[row]);
  const OutputColumns columns = output_columns(sources, rows, batch_guides);
  const auto results =
      beam_search(*model_, batch.to(device_), search, &stats, keys, batch_guides, columns);
  std::vector<Translation> out(rows.size());
  DecodeCounts done;
  for (size_t r = 0; r < rows.size(); ++r) {
    done.input_tokens += static_cast<int64_t>(sources[rows[r]].size());
    for (const auto& h : results[r]) {
      out[r].texts.push_back(target_encoder_->decode(h.ids));
      out[r].scores.push_back(h.score);
      if (search.alignment)
        out[r].alignments.push_back(
            align(sources[rows[r]], h, out[r].texts.back(), search.alignment_threshold));
      if (!batch_guides.empty() && !batch_guides[r].constraints.empty())
        out[r].constraints_met.push_back(h.constraints_met);
    }
    if (!results[r].empty())
      done.output_tokens +=
          static_cast<int64_t>(results[r][0].ids.size()) + (results[r][0].finished ? 1 : 0);
  }
  done.sentences = static_cast<int64_t>(rows.size());
  done.search_row_steps = stats.row_steps;
  if (shortlist_) {
    done.shortlist_batches = 1;
    done.shortlist_columns = columns.whole() ? target_encoder_->vocab_size() : columns.size();
  }
  if (counts) *counts += done;
  return out;
}

double BatchTranslator::warm_up() {
  const Stopwatch clock;
  SearchOptions search = options_.search;
  search.batch_decode_length = false;
  search.num_return = 1;
  search.sampling = SamplingOptions();
  const int64_t vocab = std::max<int64_t>(1, input_encoder_->vocab_size() - 2);
  // Batches of the sizes a server forms, every one up to 8 and then an
  // eighth apart (as the row counts the kernels are compiled for: see
  // t2t/kernels/onednn_linear.h), at a short and a usual source length (the
  // encoder's row counts are batch x length); ids past the reserved ones
  // (PAD, EOS).
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n < options_.batch_size; n += std::max<int64_t>(1, n / 8)) sizes.push_back(n);
  sizes.push_back(options_.batch_size);
  for (const int64_t length : {6, 20}) {
    // Three steps: the first (a row per sentence), then beams x sentences.
    search.extra_length = 3 - (length + 1);
    std::vector<std::vector<int64_t>> sources;
    std::vector<int64_t> rows;
    for (const int64_t n : sizes) {
      while (static_cast<int64_t>(sources.size()) < n) {
        const int64_t s = static_cast<int64_t>(sources.size());
        std::vector<int64_t> ids;
        for (int64_t i = 0; i < length; ++i) ids.push_back(2 + (s * 7 + i * 13) % vocab);
        ids.push_back(kEosId);
        sources.push_back(std::move(ids));
        rows.push_back(s);
      }
      decode_batch(sources, rows, search);
    }
  }
  return clock.seconds();
}

std::vector<Translation> BatchTranslator::translate(const std::vector<std::vector<int64_t>>& sources,
                                           int64_t first_key) {
  return translate(sources, options_.search, options_.batch_size, first_key);
}

std::vector<Translation> BatchTranslator::translate(const std::vector<std::vector<int64_t>>& sources,
                                           const SearchOptions& search, int64_t batch_size,
                                           int64_t first_key, const ProgressFn& progress_fn,
                                           const std::vector<TargetGuide>& guides) {
  if (batch_size < 1) throw Error("batch_size must be at least 1, not " + std::to_string(batch_size));
  if (!guides.empty() && guides.size() != sources.size())
    throw Error("BatchTranslator::translate: " + std::to_string(guides.size()) + " guides for " +
                std::to_string(sources.size()) + " sources");
  const int64_t n = static_cast<int64_t>(sources.size());
  std::vector<Translation> out(n);
  int64_t done = 0;  // the empty sources are answered at once
  for (int64_t i = 0; i < n; ++i) {
    if (!is_empty_source(sources[i])) continue;
    out[i].texts = {""};
    out[i].scores = {0.0};
    ++done;
  }
  {
    std::lock_guard<std::mutex> lock(counts_mutex_);
    counts_.sentences += done;
    counts_.empty += done;
  }
  const auto batches = decode_batches(sources, batch_size, options_.batch_tokens);

  ProgressTimer progress(options_.progress_seconds, n);
  int64_t output_tokens = 0;
  const int threads = at::get_num_threads();
  const int64_t count = static_cast<int64_t>(batches.size());
  const int workers =
      device_.is_cpu() ? parallel_batches(options_.parallel_batches, threads, count) : 1;
  std::mutex mutex;  // logging and progress; each batch fills its own rows of `out`
  for_each_batch(count, workers, threads, [&](int64_t j) {
    const std::vector<int64_t>& rows = batches[static_cast<size_t>(j)];
    DecodeCounts batch_counts;
    auto results = decode_batch(sources, rows, search, &batch_counts, first_key, guides);
    for (size_t r = 0; r < rows.size(); ++r) out[rows[r]] = std::move(results[r]);
    {
      std::lock_guard<std::mutex> lock(counts_mutex_);
      counts_ += batch_counts;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (options_.log_results) {
      for (const int64_t index : rows) {
        spdlog::info("Inference results INPUT: {}", input_encoder_->decode(sources[index]));
        spdlog::info("Inference results OUTPUT: {}", out[index].texts.empty() ? "" : out[index].texts[0]);
      }
    }
    done += static_cast<int64_t>(rows.size());
    output_tokens += batch_counts.output_tokens;
    if (progress_fn) progress_fn(done, n);
    if (const double now = progress.due(done)) {
      spdlog::info("decoded {}/{} sentences: {:.2f} sentences/s, {:.1f} output tokens/s", done, n,
                   done / now, output_tokens / now);
    }
  });
  return out;
}

std::string BatchTranslator::format(const Translation& translation) const {
  auto clean = [](std::string s) {
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
  };
  if (!options_.return_beams) return translation.texts.empty() ? "" : clean(translation.texts[0]);
  std::string line;
  for (size_t k = 0; k < translation.texts.size(); ++k) {
    if (k > 0) line += '\t';
    line += clean(translation.texts[k]);
    if (options_.write_beam_scores) line += fmt::format("\t{:.2f}", translation.scores[k]);
  }
  return line;
}

}  // namespace t2t
