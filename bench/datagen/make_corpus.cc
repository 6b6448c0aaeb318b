// Writes a synthetic English-Chinese parallel corpus of news-length
// sentences, fast enough for WMT's full size (25M pairs, ~8 GB, in about a
// minute): the statistics of make_corpus.py (Zipf-distributed vocabularies
// of 30k English word forms made of syllables and 30k Chinese words of one
// to four characters from 4,000 CJK characters, written without spaces;
// sentences of 24 +- 10 words; commas, numbers, final punctuation), drawn
// with a faster generator. The sentences mean nothing.
//
//   g++ -O2 -std=c++17 -I. -o make_corpus bench/datagen/make_corpus.cc   # from the root
//   ./make_corpus --pairs 25000000 --out DIR   # DIR/train.en, train.zh, dev.en, dev.zh
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "t2t/core/hash.h"

namespace {

// t2t's SplitMix64: fast, and good enough for made-up text.
struct Rng {
  t2t::SplitMix64 bits;
  double uniform() { return (bits.next() >> 11) * 0x1.0p-53; }
  int below(int n) { return static_cast<int>(uniform() * n); }
  double gauss(double mean, double sd) {  // Box-Muller
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return mean + sd * std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

// Draws ranks 0..n-1 with probability proportional to 1 / (rank+1)^s.
class Zipf {
 public:
  Zipf(int n, double s) : cum_(n) {
    double total = 0;
    for (int k = 0; k < n; ++k) cum_[k] = total += 1.0 / std::pow(k + 1, s);
    for (auto& c : cum_) c /= total;
  }
  int operator()(Rng& rng) const {
    return static_cast<int>(std::lower_bound(cum_.begin(), cum_.end(), rng.uniform()) -
                            cum_.begin());
  }

 private:
  std::vector<double> cum_;
};

std::vector<std::string> english_words(Rng& rng, int n) {
  const char* onsets[] = {"",   "b",  "c",  "d",  "f",  "g",  "h",  "l",  "m",  "n",
                          "p",  "r",  "s",  "t",  "v",  "w",  "br", "ch", "cl", "cr",
                          "dr", "fr", "gr", "pl", "pr", "sh", "st", "th", "tr"};
  const char* vowels[] = {"a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "ou"};
  const char* codas[] = {"", "", "n", "r", "s", "t", "l", "nd", "nt", "st", "ng", "rk", "ck"};
  const int syllables[] = {1, 1, 1, 2, 2, 3};
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  while (static_cast<int>(words.size()) < n) {
    std::string w;
    for (int i = syllables[rng.below(6)]; i > 0; --i)
      w += std::string(onsets[rng.below(29)]) + vowels[rng.below(10)] + codas[rng.below(13)];
    if (seen.insert(w).second) words.push_back(w);
  }
  return words;
}

void append_utf8(std::string& s, uint32_t c) {  // BMP only
  s += static_cast<char>(0xE0 | (c >> 12));
  s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  s += static_cast<char>(0x80 | (c & 0x3F));
}

std::vector<std::string> chinese_words(Rng& rng, int n) {
  std::vector<uint32_t> chars;
  std::unordered_set<uint32_t> used;
  while (chars.size() < 4000) {
    const uint32_t c = 0x4E00 + rng.below(0x5000);
    if (used.insert(c).second) chars.push_back(c);
  }
  const Zipf pick(static_cast<int>(chars.size()), 0.9);
  const int lengths[] = {1, 1, 2, 2, 2, 2, 3, 4};
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  while (static_cast<int>(words.size()) < n) {
    std::string w;
    for (int i = lengths[rng.below(8)]; i > 0; --i) append_utf8(w, chars[pick(rng)]);
    if (seen.insert(w).second) words.push_back(w);
  }
  return words;
}

struct Generator {
  Rng rng;
  std::vector<std::string> en, zh;
  Zipf en_pick{30000, 1.07}, zh_pick{30000, 1.07};

  void pair(std::string& e, std::string& z) {
    const int n = std::max(4, std::min(80, static_cast<int>(rng.gauss(24, 10))));
    const int comma = 6 + rng.below(7);
    const int number_at = rng.uniform() < 0.15 ? rng.below(n) : -1;
    e.clear();
    for (int i = 0; i < n; ++i) {
      if (i) e += ' ';
      if (i == number_at) e += std::to_string(1 + rng.below(2025)) + ' ';
      const std::string& w = en[en_pick(rng)];
      const size_t at = e.size();
      e += w;
      if (i == 0) e[at] = static_cast<char>(e[at] - 'a' + 'A');
      if (i >= 3 && i < n - 1 && (i - 3) % comma == 0) e += ',';
    }
    static const char* en_end[] = {".", ".", ".", "?", "!"};
    e += en_end[rng.below(5)];
    const int m = std::max(3, static_cast<int>(n * (0.8 + 0.4 * rng.uniform())));
    const int zh_comma = 5 + rng.below(6);
    z.clear();
    for (int i = 0; i < m; ++i) {
      z += zh[zh_pick(rng)];
      if (i >= 4 && i < m - 1 && (i - 4) % zh_comma == 0) z += "，";
    }
    static const char* zh_end[] = {"。", "。", "。", "？", "！"};
    z += zh_end[rng.below(5)];
  }
};

void write_split(Generator& g, const std::string& out, const std::string& split, int64_t count) {
  const std::string en_path = out + "/" + split + ".en", zh_path = out + "/" + split + ".zh";
  std::FILE* fe = std::fopen(en_path.c_str(), "wb");
  std::FILE* fz = std::fopen(zh_path.c_str(), "wb");
  if (!fe || !fz) {
    std::fprintf(stderr, "make_corpus: cannot write into %s\n", out.c_str());
    std::exit(1);
  }
  static char ebuf[1 << 22], zbuf[1 << 22];
  std::setvbuf(fe, ebuf, _IOFBF, sizeof ebuf);
  std::setvbuf(fz, zbuf, _IOFBF, sizeof zbuf);
  std::string e, z;
  for (int64_t i = 0; i < count; ++i) {
    g.pair(e, z);
    e += '\n';
    z += '\n';
    std::fwrite(e.data(), 1, e.size(), fe);
    std::fwrite(z.data(), 1, z.size(), fz);
  }
  if (std::fclose(fe) != 0 || std::fclose(fz) != 0) {
    std::fprintf(stderr, "make_corpus: writing %s failed (disk full?)\n", out.c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t pairs = 250000, dev = 2000;
  uint64_t seed = 1;
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--pairs") pairs = std::atoll(value.c_str());
    else if (flag == "--dev") dev = std::atoll(value.c_str());
    else if (flag == "--seed") seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--out") out = value;
    else {
      std::fprintf(stderr, "make_corpus: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (out.empty() || pairs < 1) {
    std::fprintf(stderr, "usage: make_corpus --pairs N [--dev N] [--seed S] --out DIR\n");
    return 2;
  }
  Generator g{Rng{t2t::SplitMix64(seed)}, {}, {}};
  g.en = english_words(g.rng, 30000);
  g.zh = chinese_words(g.rng, 30000);
  write_split(g, out, "train", pairs);
  write_split(g, out, "dev", dev);
  return 0;
}
