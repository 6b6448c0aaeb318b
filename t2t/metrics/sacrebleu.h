// Corpus BLEU for text: corpus_bleu is sacreBLEU 2.x's BLEU-4 to the same
// digits, with one reference stream or several (n-grams clipped by their
// most frequent reference, the closest reference length), and a signature
// naming t2t as the scorer; t2t_bleu is T2T's bleu_hook.bleu_wrapper.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t2t/metrics/references.h"

namespace t2t {

struct SacreBleuOptions {
  std::string tokenize = "13a";  // 13a | intl | zh | char | none
  bool lowercase = false;
  std::string smooth_method = "exp";   // exp | floor | add-k | none
  std::optional<double> smooth_value;  // floor: 0.1, add-k: 1 when not given
  // Leave out the orders past the last with any n-gram, as sacreBLEU's
  // sentence-level BLEU does.
  bool effective_order = false;
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

// Throws t2t::Error on a size mismatch or an unknown tokenizer or smoothing.
SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const References& references, const SacreBleuOptions& options = {});
// One reference per hypothesis.
SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const SacreBleuOptions& options = {});
// One hypothesis against its references (set options.effective_order, as
// sacreBLEU's sentence_bleu does, unless comparing with corpus BLEU).
SacreBleuResult sentence_bleu(const std::string& hypothesis,
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
