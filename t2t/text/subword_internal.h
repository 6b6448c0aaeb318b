// Internal to the subword encoder and its builder.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "t2t/core/hash.h"
#include "t2t/text/subword_text_encoder.h"

namespace t2t {
namespace subword_internal {

// One bit per code point: the alphabet plus the escape characters.
std::vector<uint64_t> alphabet_bitmap(std::u32string_view alphabet);
// Sorted distinct characters of `strings`, plus the escape characters.
std::u32string collect_alphabet(const std::vector<std::u32string_view>& strings);
// Appends the escaped form of `token` (see escape_token) to `out`.
void escape_into(std::u32string_view token, const std::vector<uint64_t>& alphabet,
                 std::u32string& out);

// The subtokens as a trie: node 0 is the root, edges live in one
// open-addressing table keyed by (node, character).
class SubtokenTrie {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFF;

  // Indexes subtokens[first..] with id = position. Empty subtokens are
  // skipped, and a subtoken listed twice answers to its last id.
  void build(const std::vector<std::u32string>& subtokens, size_t first);

  uint32_t child(uint32_t node, char32_t c) const {
    for (size_t i = murmur_mix64(node * kGoldenGamma + c) & mask_;; i = (i + 1) & mask_) {
      const Edge& e = edges_[i];
      if (e.child == kNone) return kNone;
      if (e.parent == node && e.ch == c) return e.child;
    }
  }
  // The id of the subtoken ending at `node`, or -1.
  int64_t id(uint32_t node) const { return ids_[node]; }

 private:
  struct Edge {
    uint32_t parent;
    char32_t ch;
    uint32_t child;  // kNone: empty slot
  };
  uint32_t add_child(uint32_t node, char32_t c);

  std::vector<Edge> edges_;
  std::vector<int64_t> ids_;  // per node
  size_t mask_ = 0;
};

// T2T's greedy segmentation of an escaped token: from the left, always the
// longest subtoken that matches. Calls on_piece(start, end, id) per piece;
// false when some position matches no subtoken.
template <class F>
bool greedy_split(const SubtokenTrie& trie, std::u32string_view e, F&& on_piece) {
  const size_t n = e.size();
  size_t start = 0;
  while (start < n) {
    uint32_t node = 0;
    size_t best_end = start;
    int64_t best_id = -1;
    for (size_t i = start; i < n; ++i) {
      node = trie.child(node, e[i]);
      if (node == SubtokenTrie::kNone) break;
      if (trie.id(node) >= 0) {
        best_end = i + 1;
        best_id = trie.id(node);
      }
    }
    if (best_id < 0) return false;
    on_piece(start, best_end, best_id);
    start = best_end;
  }
  return true;
}

}  // namespace subword_internal

struct SubwordTextEncoder::Index {
  subword_internal::SubtokenTrie trie;
};

}  // namespace t2t
