// Where one hypothesis stands with its sentence's constraint phrases
// (target_guide.h): which it has met, and how far into one it is. Phrases
// are met in any order; a hypothesis that leaves a phrase midway starts it
// over. A phrase that occurs only overlapping another one's start may not
// be seen (a trie would), in which case the search writes it once more.
// No LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace t2t {

using Phrases = std::vector<std::vector<int64_t>>;

// The phrases as text, so that a hypothesis meets one however its tokens
// spell it: a subword vocabulary splits a term in context otherwise than
// alone ("新鲜空气" may be one token, and no token sequence of "新鲜" then
// occurs). Texts have their whitespace removed, and so does the output's
// text before it is searched. Empty `terms`: ids alone decide.
struct PhraseTexts {
  std::vector<std::string> terms;  // per phrase
  // Per target id, its text (whitespace removed); ids beyond it add none.
  std::shared_ptr<const std::vector<std::string>> id_texts;
  bool empty() const { return terms.empty() || !id_texts; }
};

// `text` without its whitespace (ASCII and the Unicode spaces a tokenizer
// writes: U+3000, U+2581 "▁").
std::string without_spaces(const std::string& text);

struct ConstraintState {
  std::vector<char> met;  // per phrase
  int64_t phrase = -1;    // the phrase under way, or -1
  int64_t position = 0;   // its ids produced so far (0 < position < its length)
  // With PhraseTexts: the end of the output's text, as long as the longest
  // term less one byte, where a term may be under way.
  std::string tail;

  static ConstraintState start(const Phrases& phrases);
  // The state after producing `id`; with `texts` (may be null or empty) a
  // phrase is met too once its text occurs in the output's.
  ConstraintState advance(const Phrases& phrases, int64_t id,
                          const PhraseTexts* texts = nullptr) const;
  bool all_met() const;
  // Constraint ids produced: of the phrases met, and of the one under way.
  // What dynamic beam allocation groups hypotheses by.
  int64_t progress(const Phrases& phrases) const;
  // The ids that make progress from here: the next id of the phrase under
  // way, else the first id of each phrase not met yet (no duplicates).
  std::vector<int64_t> next_ids(const Phrases& phrases) const;

 private:
  ConstraintState advance_ids(const Phrases& phrases, int64_t id) const;
};

}  // namespace t2t
