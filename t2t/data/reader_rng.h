// The batch reader's random generators: SplitMix64, whose one word of state
// saves into a reader state as a number, and the seed derivation that gives
// each worker, epoch and shuffle a generator of its own.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "t2t/core/error.h"
#include "t2t/core/hash.h"

namespace t2t {

class ReaderRng : public SplitMix64 {
 public:
  using SplitMix64::SplitMix64;

  std::string save() const { return std::to_string(state()); }

  // Throws t2t::Error naming the state's `key` when `text` is not a saved
  // state.
  static ReaderRng load(const std::string& text, const std::string& key) {
    try {
      size_t used = 0;
      const uint64_t v = std::stoull(text, &used);
      if (used == text.size()) return ReaderRng(v);
    } catch (const std::exception&) {
    }
    throw Error("reader state: " + key + " '" + text + "' is not a generator state");
  }
};

// A seed for one purpose (`b`) drawn from another seed (`a`): the first
// output of a generator seeded with both, so nearby inputs give unrelated
// seeds.
inline uint64_t reader_seed(uint64_t a, uint64_t b) {
  ReaderRng r(a ^ (b * 0xd1342543de82ef95ULL));
  return r.next();
}

}  // namespace t2t
