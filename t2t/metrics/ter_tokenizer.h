// sacreBLEU's TercomTokenizer (its port of Tercom's Normalizer) on code
// points, for TER: each rule is one of its re.sub passes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "t2t/metrics/ter.h"

namespace t2t::ter_tok {

// The words TercomTokenizer makes of `line`, which the caller has already
// decoded and rstripped.
std::vector<std::u32string> tercom_words(std::u32string_view line, const TerOptions& options);

}  // namespace t2t::ter_tok
