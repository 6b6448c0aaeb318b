#include "t2t/translate/glossary.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "t2t/core/error.h"
#include "t2t/text/alignment_words.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

constexpr const char* kLineFormat = "each line must be 'source term<TAB>target term'";

// `s` without the whitespace (Python's isspace) around it; `s` is valid UTF-8.
std::string_view strip_space(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size()) {
    const Utf8Char u = decode_utf8_front(s.substr(begin));
    if (!is_python_space(u.cp)) break;
    begin += u.len;
  }
  size_t end = begin;
  for (size_t i = begin; i < s.size();) {
    const Utf8Char u = decode_utf8_front(s.substr(i));
    i += u.len;
    if (!is_python_space(u.cp)) end = i;
  }
  return s.substr(begin, end - begin);
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view w : word_texts(text, alignment_words(text))) out.emplace_back(w);
  return out;
}

}  // namespace

void Glossary::add(GlossaryEntry entry, const std::string& where) {
  for (std::string* side : {&entry.source, &entry.target}) {
    const char* name = side == &entry.source ? "source" : "target";
    if (!is_valid_utf8(*side))
      throw Error(where + ": the " + name + " term is not valid UTF-8: save the glossary as UTF-8");
    *side = std::string(strip_space(*side));
    if (side->empty())
      throw Error(where + ": the " + name + " term is empty; every entry needs both terms");
  }
  entries_.push_back(std::move(entry));
}

void Glossary::build_index() {
  // Entries with the same words (spacing aside) share one term.
  std::vector<std::pair<std::vector<std::string>, size_t>> keyed;
  keyed.reserve(entries_.size());
  for (size_t e = 0; e < entries_.size(); ++e) keyed.emplace_back(words_of(entries_[e].source), e);
  std::sort(keyed.begin(), keyed.end());  // equal words stay in entry order
  terms_.clear();
  for (auto& [words, e] : keyed) {
    if (terms_.empty() || terms_.back().words != words) terms_.push_back({std::move(words), {}});
    terms_.back().entries.push_back(e);
  }
  by_first_word_.clear();
  for (size_t t = 0; t < terms_.size(); ++t) {
    Range& r = by_first_word_[terms_[t].words.front()];
    if (r.begin == r.end) r.begin = t;
    r.end = t + 1;
  }
}

Glossary Glossary::from_entries(std::vector<GlossaryEntry> entries) {
  Glossary g;
  g.entries_.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    g.add(std::move(entries[i]), "glossary entry " + std::to_string(i + 1));
  g.build_index();
  return g;
}

Glossary Glossary::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw Error("cannot read glossary file '" + path + "': " +
                (in ? std::string("it is a directory") : std::string(std::strerror(errno))) +
                "; give a UTF-8 file of 'source term<TAB>target term' lines");
  Glossary g;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view text = line;
    if (number == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    const std::string where = path + ":" + std::to_string(number);
    if (!text.empty() && text.front() == '#') continue;
    if (!is_valid_utf8(text))
      throw Error(where + ": the line is not valid UTF-8: save the glossary as UTF-8");
    if (strip_space(text).empty()) continue;  // blank (TABs are blanks too)
    const size_t tab = text.find('\t');
    if (tab == std::string_view::npos) throw Error(where + ": the line has no TAB: " + kLineFormat);
    if (text.find('\t', tab + 1) != std::string_view::npos)
      throw Error(where + ": the line has more than one TAB: " + kLineFormat);
    g.add({std::string(text.substr(0, tab)), std::string(text.substr(tab + 1))}, where);
  }
  if (in.bad()) throw Error("cannot read glossary file '" + path + "': " + std::strerror(errno));
  g.build_index();
  return g;
}

void Glossary::match_at(const std::vector<std::string_view>& words, size_t p,
                        std::vector<size_t>& found) const {
  const auto it = by_first_word_.find(std::string(words[p]));
  if (it == by_first_word_.end()) return;
  size_t lo = it->second.begin, hi = it->second.end;
  for (size_t k = 1;; ++k) {
    // The terms in [lo, hi) all begin with words[p, p + k); one of exactly
    // k words sorts first.
    if (terms_[lo].words.size() == k) found.push_back(lo++);
    if (lo == hi || p + k == words.size()) return;
    const std::string_view next = words[p + k];
    const auto first = terms_.begin() + static_cast<std::ptrdiff_t>(lo);
    const auto last = terms_.begin() + static_cast<std::ptrdiff_t>(hi);
    const auto lower = std::lower_bound(first, last, next, [k](const Term& t, std::string_view w) {
      return std::string_view(t.words[k]) < w;
    });
    const auto upper = std::upper_bound(lower, last, next, [k](std::string_view w, const Term& t) {
      return w < std::string_view(t.words[k]);
    });
    lo = static_cast<size_t>(lower - terms_.begin());
    hi = static_cast<size_t>(upper - terms_.begin());
    if (lo == hi) return;
  }
}

std::vector<std::string> Glossary::targets_for(std::string_view source) const {
  if (terms_.empty()) return {};
  const auto words = word_texts(source, alignment_words(source));
  struct Match {
    size_t start, length, term;
  };
  std::vector<Match> matches;
  std::vector<size_t> found;
  for (size_t p = 0; p < words.size(); ++p) {
    found.clear();
    match_at(words, p, found);
    for (size_t t : found) matches.push_back({p, terms_[t].words.size(), t});
  }
  // Longest first, then leftmost: each match is kept unless a kept one
  // already covers one of its words.
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return a.length != b.length ? a.length > b.length : a.start < b.start;
  });
  std::vector<char> covered(words.size(), 0);
  std::vector<Match> kept;
  for (const Match& m : matches) {
    const auto from = covered.begin() + static_cast<std::ptrdiff_t>(m.start);
    const auto to = from + static_cast<std::ptrdiff_t>(m.length);
    if (std::find(from, to, 1) != to) continue;
    std::fill(from, to, 1);
    kept.push_back(m);
  }
  std::sort(kept.begin(), kept.end(),
            [](const Match& a, const Match& b) { return a.start < b.start; });
  std::vector<std::string> targets;
  std::unordered_set<std::string_view> listed;
  for (const Match& m : kept)
    for (size_t e : terms_[m.term].entries)
      if (listed.insert(entries_[e].target).second) targets.push_back(entries_[e].target);
  return targets;
}

}  // namespace t2t
