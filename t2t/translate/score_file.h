// T2T's t2t-decoder --score_file: how likely the model finds each given
// translation, for a file of "input<TAB>target" lines.
#pragma once

#include <string>
#include <vector>

#include "t2t/translate/word_alignment.h"

namespace t2t {

class BatchTranslator;

// One "input<TAB>target" pair a line, each side stripped. A line without
// exactly one TAB or with an empty side is a t2t::Error naming the file
// and line. Returns per line the target's log-probability, EOS included
// (<= 0). Logs a summary.
// With the decoder's alignment on, `alignments` (may be null) receives each
// pair's word alignment.
std::vector<double> score_file(BatchTranslator& decoder, const std::string& path,
                               std::vector<WordAlignment>* alignments = nullptr);

// The scores as t2t-decoder writes them: "%.6f", one a line, as T2T does;
// with `alignments` (one per score) each followed by a tab and the pair's
// alignment (Pharaoh's format, or Marian's soft one).
std::string format_scores(const std::vector<double>& scores,
                          const std::vector<WordAlignment>& alignments = {}, bool soft = false);

}  // namespace t2t
