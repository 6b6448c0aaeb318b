// Integer hashing, and SplitMix64 where a result must be the same on every
// platform and thread count (std:: distributions are not); its state is
// one word, so it saves as a single number.
#pragma once

#include <cstdint>
#include <string_view>

namespace t2t {

// 2^64 / golden ratio: SplitMix64's increment.
constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// SplitMix64's output function: a bijective 64-bit mixer.
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The first output of a SplitMix64 seeded with `seed`: a stateless hash.
inline uint64_t splitmix64(uint64_t seed) { return splitmix64_mix(seed + kGoldenGamma); }

// MurmurHash3's 64-bit finalizer, for indexing open-addressing tables.
inline uint64_t murmur_mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

// A 32-bit integer hash with full avalanche, cheap enough for vector units.
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352DU;
  x ^= x >> 15;
  x *= 0x846CA68BU;
  x ^= x >> 16;
  return x;
}

// FNV-1a's 64-bit offset basis.
constexpr uint64_t kFnv1aBasis = 0xCBF29CE484222325ULL;

// 64-bit FNV-1a: stable across platforms and runs, unlike std::hash.
inline uint64_t fnv1a64(std::string_view bytes, uint64_t basis = kFnv1aBasis) {
  uint64_t h = basis;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001B3ULL;
  return h;
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}

  uint64_t next() {
    state_ += kGoldenGamma;
    return splitmix64_mix(state_);
  }
  // Uniform in [0, n), without modulo bias (n > 0).
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }
  // next() % (hi - lo + 1) + lo: slightly biased, as the benchmarks' Python
  // references compute it.
  int64_t modulo_between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace t2t
