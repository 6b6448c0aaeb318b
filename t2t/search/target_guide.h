// What a caller asks of one sentence's output beyond the search options: a
// prefix the output starts with, and phrases it must contain (lexically
// constrained decoding). Target ids, without EOS. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t2t/search/constraint_state.h"
#include "t2t/search/search_options.h"

namespace t2t {

struct TargetGuide {
  // The output's first ids; the search continues from them.
  std::vector<int64_t> prefix;
  // Phrases that must each appear in the output, in any order (met inside
  // the prefix too). Dynamic beam allocation (constrained_beams.h) keeps
  // hypotheses that meet some of them in the beam, and a hypothesis ends
  // only once it meets all.
  std::vector<std::vector<int64_t>> constraints;
  // The phrases' texts, where the caller knows them (constraint_state.h):
  // then a phrase is met however the output's tokens spell it.
  PhraseTexts constraint_texts;

  bool empty() const { return prefix.empty() && constraints.empty(); }
  // Constraint ids over all phrases.
  int64_t constraint_tokens() const;
};

// Throws OptionError when `options` cannot honour `guide` for a sentence of
// `input_length` ids (EOS included): constraints need beam_size >= their
// number + 1 (one bank of the beam per count of phrases met, plus the
// hypotheses that meet none) and random sampling off; prefix and
// constraints together must fit the decode length with room for EOS; no
// phrase may be empty or hold EOS or padding. `where` names the sentence.
void check_target_guide(const TargetGuide& guide, const SearchOptions& options,
                        int64_t input_length, const std::string& where);

}  // namespace t2t
