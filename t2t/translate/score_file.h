// T2T's t2t-decoder --score_file: how likely the model finds each given
// translation, for a file of "input<TAB>target" lines.
#pragma once

#include <string>
#include <vector>

namespace t2t {

class BatchTranslator;

// One pair a line, "input<TAB>target" ("\n" or "\r\n"; the last line break
// optional), each side stripped of surrounding whitespace. A line without
// a TAB, with more than one, or with an empty side is a t2t::Error naming
// the file and the line. Returns per line, in order, the sum of the
// log-probabilities of the target's tokens, EOS included, given the input
// (BatchTranslator::score: <= 0, higher is likelier). Logs a summary.
std::vector<double> score_file(BatchTranslator& decoder, const std::string& path);

// The scores as t2t-decoder writes them: "%.6f", one a line, as T2T does.
std::string format_scores(const std::vector<double>& scores);

}  // namespace t2t
