#include "t2t/search/constraint_state.h"

#include <algorithm>

namespace t2t {

ConstraintState ConstraintState::start(const Phrases& phrases) {
  ConstraintState s;
  s.met.assign(phrases.size(), 0);
  return s;
}

std::string without_spaces(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') continue;
    if (text.compare(i, 3, "\xE3\x80\x80") == 0 || text.compare(i, 3, "\xE2\x96\x81") == 0) {
      i += 2;  // U+3000 ideographic space, U+2581 SentencePiece's space
      continue;
    }
    out += text[i];
  }
  return out;
}

ConstraintState ConstraintState::advance(const Phrases& phrases, int64_t id,
                                         const PhraseTexts* texts) const {
  ConstraintState s = advance_ids(phrases, id);
  if (!texts || texts->empty()) return s;
  const auto& id_texts = *texts->id_texts;
  if (id >= 0 && static_cast<size_t>(id) < id_texts.size()) s.tail += id_texts[id];
  size_t longest = 0;
  for (size_t q = 0; q < texts->terms.size() && q < s.met.size(); ++q) {
    const std::string& term = texts->terms[q];
    longest = std::max(longest, term.size());
    if (s.met[q] || term.empty() || s.tail.find(term) == std::string::npos) continue;
    s.met[q] = 1;
    if (s.phrase == static_cast<int64_t>(q)) {
      s.phrase = -1;
      s.position = 0;
    }
  }
  // Only a term's first bytes less one can still be waiting for the rest.
  if (longest > 0 && s.tail.size() > longest - 1) s.tail.erase(0, s.tail.size() - (longest - 1));
  return s;
}

ConstraintState ConstraintState::advance_ids(const Phrases& phrases, int64_t id) const {
  ConstraintState s = *this;
  if (phrase >= 0) {
    const auto& p = phrases[phrase];
    if (p[position] == id) {
      if (++s.position == static_cast<int64_t>(p.size())) {
        s.met[phrase] = 1;
        s.phrase = -1;
        s.position = 0;
      }
      return s;
    }
    // Left midway: the phrase counts from nothing again, and `id` may
    // start one afresh (this very one included).
    s.phrase = -1;
    s.position = 0;
  }
  // `id` starts the phrases not met yet that begin with it: one of one id
  // is met at once (so that phrases sharing a first id are all reachable),
  // else the first such phrase is under way.
  int64_t start = -1;
  for (size_t q = 0; q < phrases.size(); ++q) {
    if (s.met[q] || phrases[q].empty() || phrases[q][0] != id) continue;
    if (phrases[q].size() == 1) {
      s.met[q] = 1;
      return s;
    }
    if (start < 0) start = static_cast<int64_t>(q);
  }
  if (start >= 0) {
    s.phrase = start;
    s.position = 1;
  }
  return s;
}

bool ConstraintState::all_met() const {
  return std::all_of(met.begin(), met.end(), [](char m) { return m != 0; });
}

int64_t ConstraintState::progress(const Phrases& phrases) const {
  int64_t n = phrase >= 0 ? position : 0;
  for (size_t q = 0; q < phrases.size(); ++q)
    if (met[q]) n += static_cast<int64_t>(phrases[q].size());
  return n;
}

std::vector<int64_t> ConstraintState::next_ids(const Phrases& phrases) const {
  if (phrase >= 0) return {phrases[phrase][position]};
  std::vector<int64_t> ids;
  for (size_t q = 0; q < phrases.size(); ++q)
    if (!met[q] && !phrases[q].empty() &&
        std::find(ids.begin(), ids.end(), phrases[q][0]) == ids.end())
      ids.push_back(phrases[q][0]);
  return ids;
}

}  // namespace t2t
