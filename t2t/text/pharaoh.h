// Pharaoh word alignments, as fast_align and eflomal write them and
// Marian reads them: "i-j" pairs of 0-based source and target word indices
// separated by spaces, one line per sentence pair. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t {

// (source, target) pairs as one line, in the given order; "" for none.
std::string pharaoh(const std::vector<std::pair<int64_t, int64_t>>& pairs);

// One line back to pairs, in the order written; blanks (spaces, tabs, a
// final '\r') separate them. Throws t2t::Error naming `where` (e.g.
// "align.txt line 3") and the bad pair.
std::vector<std::pair<int64_t, int64_t>> parse_pharaoh(std::string_view line,
                                                       const std::string& where);

}  // namespace t2t
