// Where one hypothesis stands with its sentence's constraint phrases
// (target_guide.h): which it has met, and how far into one it is. Phrases
// are met in any order; a hypothesis that leaves a phrase midway starts it
// over. A phrase that occurs only overlapping another one's start may not
// be seen (a trie would), in which case the search writes it once more.
// No LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace t2t {

using Phrases = std::vector<std::vector<int64_t>>;

struct ConstraintState {
  std::vector<char> met;  // per phrase
  int64_t phrase = -1;    // the phrase under way, or -1
  int64_t position = 0;   // its ids produced so far (0 < position < its length)

  static ConstraintState start(const Phrases& phrases);
  // The state after producing `id`.
  ConstraintState advance(const Phrases& phrases, int64_t id) const;
  bool all_met() const;
  // Constraint ids produced: of the phrases met, and of the one under way.
  // What dynamic beam allocation groups hypotheses by.
  int64_t progress(const Phrases& phrases) const;
  // The ids that make progress from here: the next id of the phrase under
  // way, else the first id of each phrase not met yet (no duplicates).
  std::vector<int64_t> next_ids(const Phrases& phrases) const;
};

}  // namespace t2t
