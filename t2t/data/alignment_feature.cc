#include "t2t/data/alignment_feature.h"

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/text/alignment_words.h"
#include "t2t/text/token_spans.h"

namespace t2t {

namespace {

// For each word of the encoder's text of `ids`, the positions of its
// tokens; nullopt when that text has another number of words than
// `expected`.
std::optional<std::vector<std::vector<int64_t>>> tokens_of_words(const TextEncoder& encoder,
                                                                 const std::vector<int64_t>& ids,
                                                                 size_t expected,
                                                                 const char* side) {
  const std::string text = alignment_text(encoder, ids);
  const auto words = alignment_words(text);
  if (words.size() != expected) return std::nullopt;
  const auto per_token = token_words(text, token_spans(encoder, ids), words, side);
  std::vector<std::vector<int64_t>> out(words.size());
  for (size_t t = 0; t < per_token.size(); ++t)
    for (size_t w : per_token[t]) out[w].push_back(static_cast<int64_t>(t));
  return out;
}

}  // namespace

std::optional<std::vector<int64_t>> token_alignment(
    const TextEncoder& source_encoder, std::string_view source,
    const std::vector<int64_t>& source_ids, const TextEncoder& target_encoder,
    std::string_view target, const std::vector<int64_t>& target_ids,
    const std::vector<std::pair<int64_t, int64_t>>& word_pairs, const std::string& where) {
  const auto num_source = static_cast<int64_t>(alignment_words(source).size());
  const auto num_target = static_cast<int64_t>(alignment_words(target).size());
  for (const auto& [i, j] : word_pairs)
    if (i >= num_source || j >= num_target)
      throw Error(where + ": the pair " + std::to_string(i) + "-" + std::to_string(j) + " names " +
                  (i >= num_source ? "source word " + std::to_string(i) + " of " +
                                         std::to_string(num_source)
                                   : "target word " + std::to_string(j) + " of " +
                                         std::to_string(num_target)) +
                  ": alignments must count words as t2t does (letters and digits run together, "
                  "each Chinese character is a word, punctuation stands apart; "
                  "t2t.alignment_words() in Python splits a line so), and the file must have one "
                  "line per training pair, in order");
  const auto source_tokens =
      tokens_of_words(source_encoder, source_ids, static_cast<size_t>(num_source), "source");
  const auto target_tokens =
      tokens_of_words(target_encoder, target_ids, static_cast<size_t>(num_target), "target");
  if (!source_tokens || !target_tokens) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> links;
  for (const auto& [i, j] : word_pairs)
    for (int64_t s : (*source_tokens)[static_cast<size_t>(i)])
      for (int64_t t : (*target_tokens)[static_cast<size_t>(j)]) links.emplace_back(s, t);
  if (!links.empty()) {
    const auto eos_source = static_cast<int64_t>(source_ids.size());
    // Tokens in no word (a character's leading bytes, a lone space) are
    // left alone; EOS (the last position) is linked like an unaligned word.
    std::vector<char> in_word(target_ids.size() + 1, 0), linked(target_ids.size() + 1, 0);
    in_word.back() = 1;
    for (const auto& tokens : *target_tokens)
      for (int64_t t : tokens) in_word[static_cast<size_t>(t)] = 1;
    for (const auto& [s, t] : links) linked[static_cast<size_t>(t)] = 1;
    for (size_t t = 0; t < linked.size(); ++t)
      if (in_word[t] && !linked[t]) links.emplace_back(eos_source, static_cast<int64_t>(t));
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  std::vector<int64_t> flat;
  flat.reserve(links.size() * 2);
  for (const auto& [s, t] : links) {
    flat.push_back(s);
    flat.push_back(t);
  }
  return flat;
}

}  // namespace t2t
