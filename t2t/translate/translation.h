// What decoding one source gives back, and what a caller may ask of its
// output beyond the search; free of LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t2t/translate/word_alignment.h"

namespace t2t {

// One source's wishes for its output, as text in the target language.
struct SourceGuide {
  // The output starts with this text (encoded as the target side; its last
  // word is left open in scripts written without spaces, so that the model
  // may continue it).
  std::string prefix;
  // Terms that must appear in the output (lexically constrained decoding).
  std::vector<std::string> constraints;

  bool empty() const { return prefix.empty() && constraints.empty(); }
};

// One source's result: `texts` and `scores` per returned hypothesis, best first.
struct Translation {
  std::vector<std::string> texts;
  std::vector<double> scores;
  // Asked for (SearchRequest::alignment): per hypothesis, its words
  // aligned to the source's.
  std::vector<WordAlignment> alignments;
  // The terms the output was constrained to hold (a guide's and a
  // glossary's), and per hypothesis whether it holds each.
  std::vector<std::string> constraints;
  std::vector<std::vector<char>> constraints_met;
};

// A caller's progress through a translation: sentences done, and the total.
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

}  // namespace t2t
