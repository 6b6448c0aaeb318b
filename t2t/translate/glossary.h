// Terminology glossaries: which target terms a source sentence calls for,
// for constrained decoding or checking a translation's terminology. Terms
// are matched as sequences of alignment_words (alignment_words.h), so
// matching works the same for Chinese (one word per character) as for
// spaced languages, never inside a word ("cat" is not in "category"), and
// ignores spacing ("New  York" matches "New York"). No LibTorch.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace t2t {

struct GlossaryEntry {
  std::string source, target;
};

class Glossary {
 public:
  Glossary() = default;

  // A UTF-8 file of "source term<TAB>target term" lines, each side stripped
  // of surrounding whitespace; blank lines, lines starting with '#', a
  // final '\r' and a leading byte-order mark are skipped. Throws t2t::Error
  // naming path:line for a line without exactly one TAB, an empty side or
  // invalid UTF-8, and naming the path when it is missing or unreadable.
  static Glossary load(const std::string& path);
  // The same checks and stripping, errors naming "glossary entry N" (from 1).
  static Glossary from_entries(std::vector<GlossaryEntry> entries);

  // The target terms of the entries whose source term occurs in `source`
  // as a whole sequence of its words (case-sensitive, compared word by
  // word). Where matches overlap the one with more words wins (the earlier
  // one between equals); each target term is listed once, in order of its
  // first match in `source`, entries with the same source term in file
  // order. Fast for large glossaries: terms are looked up by their words,
  // not scanned.
  std::vector<std::string> targets_for(std::string_view source) const;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The entries as given, stripped.
  const std::vector<GlossaryEntry>& entries() const { return entries_; }

 private:
  // One distinct source term: its words and the entries that have it.
  struct Term {
    std::vector<std::string> words;
    std::vector<size_t> entries;
  };
  struct Range {
    size_t begin = 0, end = 0;
  };

  void add(GlossaryEntry entry, const std::string& where);
  void build_index();
  // Appends the index of each term that `words` hold from word p on.
  void match_at(const std::vector<std::string_view>& words, size_t p,
                std::vector<size_t>& found) const;

  std::vector<GlossaryEntry> entries_;
  // Sorted by their word sequences, so the terms that share their first k
  // words are a contiguous range: a trie in an array.
  std::vector<Term> terms_;
  std::unordered_map<std::string, Range> by_first_word_;
};

}  // namespace t2t
