// Corpus BLEU for text: corpus_bleu is sacreBLEU 2.x's BLEU-4 (exponential
// smoothing, no effective order) to the same digits, with a signature
// naming t2t as the scorer; t2t_bleu is T2T's bleu_hook.bleu_wrapper. One
// hypothesis and one reference per line, as many of each.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

struct SacreBleuOptions {
  std::string tokenize = "13a";  // 13a | intl | zh | none
  bool lowercase = false;
};

struct SacreBleuResult {
  double score = 0.0;                 // 0..100
  std::array<double, 4> precisions{};  // 0..100, smoothed as reported by sacreBLEU
  double bp = 0.0;
  double ratio = 0.0;
  int64_t hyp_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, 4> counts{};  // matching n-grams per order
  std::array<int64_t, 4> totals{};  // hypothesis n-grams per order
  std::string signature;            // nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:t2t-...

  // "BLEU = 23.45 56.7/30.1/18.2/11.0 (BP = 1.000 ratio = 1.012 hyp_len = 9 ref_len = 9)"
  std::string to_string() const;
};

// Throws t2t::Error on a size mismatch or an unknown tokenizer.
SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const SacreBleuOptions& options = {});

// What sacreBLEU's tokenizer `name` makes of line.rstrip(): tokens joined by
// single spaces (the line itself for `none`). No lowercasing.
std::string sacrebleu_tokenize(const std::string& line, const std::string& name);

// "zh" when the references are Chinese (as sacreBLEU's default for a zh
// target), else "13a".
std::string default_tokenizer_for(const std::vector<std::string>& references);

// T2T's bleu_hook.bleu_wrapper: its unicode-aware tokenizer, then T2T's
// compute_bleu. In 0..100. `case_sensitive=false` lowercases both sides.
double t2t_bleu(const std::vector<std::string>& hypotheses,
                const std::vector<std::string>& references, bool case_sensitive = true);

// The lines of a file, without "\n" or "\r\n". Throws t2t::Error naming the
// path when it is missing, a directory or unreadable.
std::vector<std::string> read_bleu_lines(const std::string& path);

// T2T's bleu_hook.bleu_tokenize on one line.
std::vector<std::string> t2t_bleu_tokenize(const std::string& line);

}  // namespace t2t
