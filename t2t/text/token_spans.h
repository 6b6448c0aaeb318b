// Where each token of an encoded sentence lies in its text, and which
// words (alignment_words.h) it covers: how token-level attention becomes
// word alignments, and word alignments (Pharaoh files) become token-level
// training targets. No LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "t2t/text/alignment_words.h"

namespace t2t {

class TextEncoder;

// The text token_spans() places the ids in: decode() of the ids less the
// reserved ones (padding, EOS).
std::string alignment_text(const TextEncoder& encoder, const std::vector<int64_t>& ids);

// The byte span of each id's text within alignment_text(encoder, ids).
// Found by decoding growing prefixes: id k spans from the end of the last
// prefix that was a prefix of the whole text to the end of ids[0..k]'s
// decode. Where that decode is no prefix of the whole (half of a UTF-8
// character from a byte encoder), or adds nothing, the id gets an empty
// span at the end of the previous one and the id that completes the text
// owns it. Reserved ids get empty spans too. Quadratic in ids.size():
// meant for sentences.
std::vector<WordSpan> token_spans(const TextEncoder& encoder, const std::vector<int64_t>& ids);

// For each token span, the indices of the `words` of `text` it overlaps
// (none for an empty span). `words` must be sorted and disjoint, as
// alignment_words() returns them. Throws t2t::Error naming `side` ("source",
// "target") for a span outside the text or reversed.
std::vector<std::vector<size_t>> token_words(std::string_view text,
                                             const std::vector<WordSpan>& tokens,
                                             const std::vector<WordSpan>& words, const char* side);

}  // namespace t2t
