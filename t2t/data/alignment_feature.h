// The "alignment" feature of a training example, which guided-alignment
// training reads: a text pair's word alignment (Pharaoh pairs over the
// words of alignment_words.h, as an aligner such as eflomal writes them)
// carried to the pair's tokens. Flattened as source position, target
// position, source position, ... (0-based, into the "inputs" and "targets"
// features, whose last token is EOS). A source and a target token are
// linked when their words are; a token spanning several words takes the
// links of each. A target token of some word left without links, and the
// target's EOS, are linked to the source's EOS, as alignment models link a word they
// leave unaligned to NULL: the head then learns where no word is aligned.
// A pair without any word link gets no links at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t {

class TextEncoder;

// `word_pairs` (source word, target word) for the texts `source` and
// `target`, whose encodings are `source_ids` and `target_ids` (without
// EOS: it comes at position size()). nullopt when
// an encoder normalises a text into another number of words (e.g. NFKC
// turning "½" into "1⁄2"): its tokens cannot be placed on the file's words.
// Throws t2t::Error naming `where` (e.g. "align.txt line 7") for an index
// beyond the text's words.
std::optional<std::vector<int64_t>> token_alignment(
    const TextEncoder& source_encoder, std::string_view source,
    const std::vector<int64_t>& source_ids, const TextEncoder& target_encoder,
    std::string_view target, const std::vector<int64_t>& target_ids,
    const std::vector<std::pair<int64_t, int64_t>>& word_pairs, const std::string& where);

}  // namespace t2t
