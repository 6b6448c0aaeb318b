#include "t2t/translate/word_alignment.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>

#include "t2t/core/error.h"
#include "t2t/text/token_spans.h"

namespace t2t {

namespace {

std::vector<std::string> texts_of(std::string_view text, const std::vector<WordSpan>& words) {
  std::vector<std::string> out;
  for (std::string_view w : word_texts(text, words)) out.emplace_back(w);
  return out;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

WordAlignment align_words(std::string_view source_text,
                          const std::vector<WordSpan>& source_token_spans,
                          std::string_view target_text,
                          const std::vector<WordSpan>& target_token_spans,
                          const std::vector<std::vector<float>>& attention, double threshold) {
  if (!(threshold > 0 && threshold <= 1))  // NaN too
    throw Error("word alignment threshold " + short_number(threshold) +
                " is not in (0, 1]: use 1 to align each target word to its most attended "
                "source word, or a value below 1 (e.g. 0.3) to align it to every source word "
                "with at least that share of its attention");
  const auto source_words = alignment_words(source_text);
  const auto target_words = alignment_words(target_text);
  const auto source_of = token_words(source_text, source_token_spans, source_words, "source");
  const auto target_of = token_words(target_text, target_token_spans, target_words, "target");
  const size_t num_source = source_token_spans.size(), num_target = target_token_spans.size();
  if (attention.size() < num_target)
    throw Error("the attention matrix has " + std::to_string(attention.size()) + " rows for " +
                std::to_string(num_target) +
                " target tokens: it needs a row per target token (rows are target tokens, "
                "columns source tokens)");
  for (size_t t = 0; t < num_target; ++t)
    if (attention[t].size() < num_source)
      throw Error("row " + std::to_string(t) + " of the attention matrix has " +
                  std::to_string(attention[t].size()) + " columns for " +
                  std::to_string(num_source) +
                  " source tokens: it needs a column per source token (rows are target tokens, "
                  "columns source tokens)");

  // Summed, not averaged over the word's tokens: the mean's 1/n cancels in
  // the normalisation.
  std::vector<std::vector<double>> sums(target_words.size(),
                                        std::vector<double>(source_words.size(), 0.0));
  // Attention on tokens in no word (EOS): where a head looks when it
  // aligns a word to nothing.
  std::vector<double> null(target_words.size(), 0.0);
  for (size_t t = 0; t < num_target; ++t) {
    if (target_of[t].empty()) continue;
    for (size_t s = 0; s < num_source; ++s) {
      const double a = attention[t][s];
      for (size_t j : target_of[t]) {
        if (source_of[s].empty()) null[j] += a;
        for (size_t i : source_of[s]) sums[j][i] += a;
      }
    }
  }

  WordAlignment out;
  out.source_words = texts_of(source_text, source_words);
  out.target_words = texts_of(target_text, target_words);
  out.soft.assign(target_words.size(), std::vector<float>(source_words.size(), 0.0f));
  for (size_t j = 0; j < target_words.size(); ++j) {
    double total = 0;
    for (double v : sums[j]) total += v;
    if (!(total > 0) || total == std::numeric_limits<double>::infinity()) continue;
    for (size_t i = 0; i < source_words.size(); ++i)
      out.soft[j][i] = static_cast<float>(sums[j][i] / total);
  }

  // Hard links weigh each source word's share of all the target word's
  // attention, the no-word tokens' included, as Marian reads attention
  // over every source position. Compared as float, so a weight printed as
  // 0.3 meets a threshold of 0.3.
  const float cut = static_cast<float>(threshold);
  for (size_t j = 0; j < sums.size(); ++j) {
    const auto& row = sums[j];
    double total = null[j];
    for (double v : row) total += v;
    if (!(total > 0) || !std::isfinite(total)) continue;
    if (threshold >= 1) {
      size_t best = 0;
      for (size_t i = 1; i < row.size(); ++i)
        if (row[i] > row[best]) best = i;
      if (!row.empty() && row[best] > 0 && row[best] >= null[j])
        out.hard.emplace_back(static_cast<int64_t>(best), static_cast<int64_t>(j));
    } else {
      for (size_t i = 0; i < row.size(); ++i)
        if (static_cast<float>(row[i] / total) >= cut)
          out.hard.emplace_back(static_cast<int64_t>(i), static_cast<int64_t>(j));
    }
  }
  std::sort(out.hard.begin(), out.hard.end());
  out.hard.erase(std::unique(out.hard.begin(), out.hard.end()), out.hard.end());
  return out;
}

std::string soft_alignment_text(const std::vector<std::vector<float>>& soft) {
  std::string out;
  for (size_t j = 0; j < soft.size(); ++j) {
    if (j > 0) out += ' ';
    for (size_t i = 0; i < soft[j].size(); ++i) {
      if (i > 0) out += ',';
      out += short_number(soft[j][i]);
    }
  }
  return out;
}

}  // namespace t2t
