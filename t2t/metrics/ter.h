// TER (translation edit rate) as sacreBLEU 2.x computes it: Tercom's
// tokenizer options, then the fewest word edits (insertions, deletions,
// substitutions and shifts of word runs) that turn the hypothesis into a
// reference, over the reference's length. Lower is better.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t2t/metrics/references.h"

namespace t2t {

struct TerOptions {
  bool normalized = false;     // Tercom's punctuation and entity normalisation
  bool no_punct = false;       // drop punctuation
  bool asian_support = false;  // with the above, split CJK characters / drop CJK punctuation
  bool case_sensitive = false; // sacreBLEU's TER lowercases by default
};

struct TerResult {
  double score = 0.0;       // 0..100 (above 100 when there are more edits than words)
  double num_edits = 0.0;   // summed over segments: each segment's best reference
  double ref_length = 0.0;  // summed over segments: each segment's mean reference length
  std::string signature;    // nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:t2t-...

  // "TER = 45.67", as sacreBLEU prints it.
  std::string to_string() const;
};

// Throws t2t::Error when the references do not match the hypotheses.
TerResult corpus_ter(const std::vector<std::string>& hypotheses, const References& references,
                     const TerOptions& options = {});

// One segment against its references.
TerResult sentence_ter(const std::string& hypothesis, const std::vector<std::string>& references,
                       const TerOptions& options = {});

// What sacreBLEU's TercomTokenizer makes of line.rstrip() (UTF-8 in and
// out; invalid bytes read as U+FFFD).
std::string tercom_tokenize(const std::string& line, const TerOptions& options);

// Tercom's edit count (shifts included) turning `hypothesis` into
// `reference`, both already tokenized into words.
int64_t ter_edits(const std::vector<std::u32string>& hypothesis,
                  const std::vector<std::u32string>& reference);

}  // namespace t2t
