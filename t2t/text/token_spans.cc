#include "t2t/text/token_spans.h"

#include <algorithm>

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

std::vector<std::vector<size_t>> token_words(std::string_view text,
                                             const std::vector<WordSpan>& tokens,
                                             const std::vector<WordSpan>& words, const char* side) {
  std::vector<std::vector<size_t>> out(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    const WordSpan& s = tokens[t];
    if (s.begin > s.end || s.end > text.size())
      throw Error(std::string(side) + " token " + std::to_string(t) + "'s span " + span_text(s) +
                  " does not lie within the " + std::to_string(text.size()) + "-byte " + side +
                  " text: token spans must come from token_spans() on the ids of that text");
    if (s.begin == s.end) continue;
    // Binary search: the words are sorted and disjoint.
    auto w = std::upper_bound(words.begin(), words.end(), s.begin,
                              [](size_t pos, const WordSpan& word) { return pos < word.end; });
    for (; w != words.end() && w->begin < s.end; ++w)
      out[t].push_back(static_cast<size_t>(w - words.begin()));
  }
  return out;
}

}  // namespace t2t
