// T2T's t2t-decoder --score_file: how likely the model finds each given
// translation, for a file of "input<TAB>target" lines.
#pragma once

#include <string>
#include <vector>

namespace t2t {

class BatchTranslator;

// One "input<TAB>target" pair a line, each side stripped. A line without
// exactly one TAB or with an empty side is a t2t::Error naming the file
// and line. Returns per line the target's log-probability, EOS included
// (<= 0). Logs a summary.
std::vector<double> score_file(BatchTranslator& decoder, const std::string& path);

// The scores as t2t-decoder writes them: "%.6f", one a line, as T2T does.
std::string format_scores(const std::vector<double>& scores);

}  // namespace t2t
