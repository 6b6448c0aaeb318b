// chrF and chrF++ as sacreBLEU 2.x computes them: the F-beta score of
// character n-grams (whitespace removed), with word n-grams too for chrF++,
// each segment scored against the reference that gives it the best F, the
// statistics summed over the corpus.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t2t/metrics/references.h"

namespace t2t {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2: chrF++
  int beta = 2;        // recall weighs beta times as much as precision
  bool lowercase = false;
  bool whitespace = false;     // keep whitespace in the character n-grams
  bool eps_smoothing = false;  // chrF++.py's smoothing instead of the effective order
};

struct ChrfResult {
  double score = 0.0;  // 0..100
  std::string name;    // chrF2, chrF2++ (beta, then a + per word order)
  // Per order (characters, then words): hypothesis n-grams, reference
  // n-grams, matches.
  std::vector<int64_t> stats;
  std::string signature;  // nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:t2t-...

  // "chrF2 = 45.67", as sacreBLEU prints it.
  std::string to_string() const;
};

// "chrF2", "chrF2++": beta, then a + per word order, as sacreBLEU names it.
std::string chrf_name(const ChrfOptions& options);

// Throws t2t::Error when the references do not match the hypotheses or an
// option is out of range.
ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses, const References& references,
                       const ChrfOptions& options = {});

ChrfResult sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                         const ChrfOptions& options = {});

}  // namespace t2t
