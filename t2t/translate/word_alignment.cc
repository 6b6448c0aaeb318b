#include "t2t/translate/word_alignment.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "t2t/core/error.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

namespace {

std::vector<int64_t> without_reserved(const std::vector<int64_t>& ids) {
  std::vector<int64_t> kept;
  kept.reserve(ids.size());
  for (int64_t id : ids)
    if (!TextEncoder::is_reserved(id)) kept.push_back(id);
  return kept;
}

std::string span_text(const WordSpan& s) {
  return "[" + std::to_string(s.begin) + ", " + std::to_string(s.end) + ")";
}

// For each token, the words its span overlaps. `words` are sorted and
// disjoint, so they are found by binary search.
std::vector<std::vector<size_t>> words_of_tokens(std::string_view text,
                                                 const std::vector<WordSpan>& tokens,
                                                 const std::vector<WordSpan>& words,
                                                 const char* side) {
  std::vector<std::vector<size_t>> out(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    const WordSpan& s = tokens[t];
    if (s.begin > s.end || s.end > text.size())
      throw Error(std::string(side) + " token " + std::to_string(t) + "'s span " + span_text(s) +
                  " does not lie within the " + std::to_string(text.size()) + "-byte " + side +
                  " text: token spans must come from token_spans() on the ids of that text");
    if (s.begin == s.end) continue;
    auto w = std::upper_bound(words.begin(), words.end(), s.begin,
                              [](size_t pos, const WordSpan& word) { return pos < word.end; });
    for (; w != words.end() && w->begin < s.end; ++w)
      out[t].push_back(static_cast<size_t>(w - words.begin()));
  }
  return out;
}

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

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// A non-negative decimal index, or false.
bool parse_index(std::string_view digits, int64_t& out) {
  if (digits.empty()) return false;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::string alignment_text(const TextEncoder& encoder, const std::vector<int64_t>& ids) {
  return encoder.decode(without_reserved(ids));
}

std::vector<WordSpan> token_spans(const TextEncoder& encoder, const std::vector<int64_t>& ids) {
  const std::string whole = alignment_text(encoder, ids);
  std::vector<WordSpan> spans;
  spans.reserve(ids.size());
  std::vector<int64_t> prefix;
  prefix.reserve(ids.size());
  size_t done = 0;  // bytes of `whole` owned by the ids so far
  for (int64_t id : ids) {
    if (TextEncoder::is_reserved(id)) {
      spans.push_back({done, done});
      continue;
    }
    prefix.push_back(id);
    const std::string text = encoder.decode(prefix);
    const bool extends = text.size() > done && text.size() <= whole.size() &&
                         whole.compare(0, text.size(), text) == 0;
    if (extends) {
      spans.push_back({done, text.size()});
      done = text.size();
    } else {
      spans.push_back({done, done});
    }
  }
  return spans;
}

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
  const auto source_of = words_of_tokens(source_text, source_token_spans, source_words, "source");
  const auto target_of = words_of_tokens(target_text, target_token_spans, target_words, "target");
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
  for (size_t t = 0; t < num_target; ++t) {
    if (target_of[t].empty()) continue;
    for (size_t s = 0; s < num_source; ++s) {
      const double a = attention[t][s];
      for (size_t j : target_of[t])
        for (size_t i : source_of[s]) sums[j][i] += a;
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

  // Compared as float, so a weight printed as 0.3 meets a threshold of 0.3.
  const float cut = static_cast<float>(threshold);
  for (size_t j = 0; j < out.soft.size(); ++j) {
    const auto& row = out.soft[j];
    if (threshold >= 1) {
      size_t best = 0;
      for (size_t i = 1; i < row.size(); ++i)
        if (row[i] > row[best]) best = i;
      if (!row.empty() && row[best] > 0)
        out.hard.emplace_back(static_cast<int64_t>(best), static_cast<int64_t>(j));
    } else {
      for (size_t i = 0; i < row.size(); ++i)
        if (row[i] >= cut) out.hard.emplace_back(static_cast<int64_t>(i), static_cast<int64_t>(j));
    }
  }
  std::sort(out.hard.begin(), out.hard.end());
  out.hard.erase(std::unique(out.hard.begin(), out.hard.end()), out.hard.end());
  return out;
}

std::string pharaoh(const std::vector<std::pair<int64_t, int64_t>>& hard) {
  std::string out;
  for (const auto& [i, j] : hard) {
    if (!out.empty()) out += ' ';
    out += std::to_string(i) + '-' + std::to_string(j);
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> parse_pharaoh(std::string_view line,
                                                       const std::string& where) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  size_t pos = 0;
  while (pos < line.size()) {
    if (is_blank(line[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && !is_blank(line[end])) ++end;
    const std::string_view item = line.substr(pos, end - pos);
    const size_t dash = item.find('-');
    int64_t i = 0, j = 0;
    if (dash == std::string_view::npos || !parse_index(item.substr(0, dash), i) ||
        !parse_index(item.substr(dash + 1), j)) {
      const std::string shown =
          item.size() > 40 ? std::string(item.substr(0, 40)) + "..." : std::string(item);
      throw Error(where + ": '" + shown +
                  "' is not an alignment pair: Pharaoh lines hold SOURCE-TARGET pairs of "
                  "0-based word indices separated by spaces, e.g. '0-0 1-2 2-1'");
    }
    pairs.emplace_back(i, j);
    pos = end;
  }
  return pairs;
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
