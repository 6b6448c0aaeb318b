#include "t2t/metrics/sacrebleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/metrics/bleu.h"
#include "t2t/metrics/bleu_tokenizers.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

using bleu_tok::Tokens;

// Gives each distinct token an id, so that an n-gram is the string of its
// ids: hashed and compared without joining the tokens.
class Vocab {
 public:
  std::u32string ids(const Tokens& tokens) {
    std::u32string out;
    out.reserve(tokens.size());
    for (const auto& t : tokens)
      out.push_back(static_cast<char32_t>(ids_.emplace(t, ids_.size()).first->second));
    return out;
  }

 private:
  std::unordered_map<std::u32string, size_t> ids_;
};

using NgramCounts = std::unordered_map<std::u32string, int64_t>;

void count_ngrams(const std::u32string& ids, NgramCounts* counts) {
  for (size_t n = 1; n <= 4; ++n)
    for (size_t i = 0; i + n <= ids.size(); ++i) ++(*counts)[ids.substr(i, n)];
}

// Invalid bytes become U+FFFD, as Python's errors="replace" reads them, so a
// stray byte costs a token rather than the whole score.
std::u32string decode(const std::string& line) { return utf8_to_u32(utf8_replace_invalid(line)); }

// For the scores that take one reference per hypothesis.
void check_sizes(const std::vector<std::string>& hypotheses,
                 const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size())
    throw Error("BLEU needs one reference per hypothesis: got " +
                std::to_string(hypotheses.size()) + " hypotheses and " +
                std::to_string(references.size()) + " references");
}

// sacreBLEU's sufficient statistics of one segment or a corpus.
struct BleuCounts {
  int64_t hyp_len = 0, ref_len = 0;
  std::array<int64_t, 4> correct{}, total{};

  void operator+=(const BleuCounts& o) {
    hyp_len += o.hyp_len;
    ref_len += o.ref_len;
    for (int n = 0; n < 4; ++n) {
      correct[n] += o.correct[n];
      total[n] += o.total[n];
    }
  }
};

// The reference length closest to the hypothesis's, the shorter on a tie.
int64_t closest_length(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t best = -1, best_diff = -1;
  for (int64_t len : ref_lens) {
    const int64_t diff = hyp_len > len ? hyp_len - len : len - hyp_len;
    if (best_diff < 0 || diff < best_diff || (diff == best_diff && len < best)) {
      best = len;
      best_diff = diff;
    }
  }
  return best;
}

class SegmentCounter {
 public:
  explicit SegmentCounter(const SacreBleuOptions& options) : options_(options) {}

  BleuCounts count(const std::string& hypothesis, const std::vector<std::string>& references) {
    // Each n-gram counts as often as in the reference that has it most.
    NgramCounts ref_max;
    std::vector<int64_t> ref_lens;
    for (const auto& reference : references) {
      const std::u32string ids = vocab_.ids(tokens(reference));
      ref_lens.push_back(static_cast<int64_t>(ids.size()));
      NgramCounts counts;
      count_ngrams(ids, &counts);
      for (const auto& [ngram, n] : counts) {
        int64_t& m = ref_max[ngram];
        m = std::max(m, n);
      }
    }
    const std::u32string hyp = vocab_.ids(tokens(hypothesis));
    NgramCounts hyp_counts;
    count_ngrams(hyp, &hyp_counts);
    BleuCounts c;
    c.hyp_len = static_cast<int64_t>(hyp.size());
    c.ref_len = closest_length(c.hyp_len, ref_lens);
    for (const auto& [ngram, n] : hyp_counts) {
      const size_t order = ngram.size() - 1;
      c.total[order] += n;
      auto it = ref_max.find(ngram);
      if (it != ref_max.end()) c.correct[order] += std::min(n, it->second);
    }
    return c;
  }

 private:
  Tokens tokens(const std::string& line) const {
    return bleu_tok::sacrebleu_tokens(decode(line), options_.tokenize, options_.lowercase);
  }

  const SacreBleuOptions& options_;
  Vocab vocab_;
};

std::string format_fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

// sacreBLEU floors log(0) to this instead of -inf.
constexpr double kLogZero = -9999999999.0;

double smooth_value(const SacreBleuOptions& o) {
  if (o.smooth_value) return *o.smooth_value;
  return o.smooth_method == "floor" ? 0.1 : 1.0;
}

void check_options(const SacreBleuOptions& o) {
  const auto& names = bleu_tok::sacrebleu_tokenizer_names();
  if (std::find(names.begin(), names.end(), o.tokenize) == names.end())
    throw Error("unknown BLEU tokenizer '" + o.tokenize + "': use " +
                bleu_tok::sacrebleu_tokenizer_list());
  const std::string& m = o.smooth_method;
  if (m != "exp" && m != "floor" && m != "add-k" && m != "none")
    throw Error("unknown BLEU smoothing '" + m + "': use exp, floor, add-k or none");
  if (o.smooth_value && (m == "exp" || m == "none"))
    throw Error("a smoothing value applies to floor and add-k; '" + m + "' takes none");
}

std::string signature(const SacreBleuOptions& o, const std::string& nrefs) {
  std::string smooth = o.smooth_method;
  if (smooth == "floor" || smooth == "add-k") smooth += "[" + format_fixed(smooth_value(o), 2) + "]";
  return "nrefs:" + nrefs + "|case:" + (o.lowercase ? "lc" : "mixed") +
         "|eff:" + (o.effective_order ? "yes" : "no") + "|tok:" + o.tokenize +
         "|smooth:" + smooth + "|version:t2t-" + T2T_VERSION;
}

// sacreBLEU's compute_bleu on summed statistics.
SacreBleuResult compute(const BleuCounts& c, const SacreBleuOptions& o, const std::string& nrefs) {
  SacreBleuResult r;
  r.hyp_len = c.hyp_len;
  r.ref_len = c.ref_len;
  r.counts = c.correct;
  r.totals = c.total;
  r.ratio = r.ref_len ? static_cast<double>(r.hyp_len) / static_cast<double>(r.ref_len) : 0.0;
  r.bp = 1.0;
  if (r.hyp_len < r.ref_len)
    r.bp = r.hyp_len > 0
               ? std::exp(1.0 - static_cast<double>(r.ref_len) / static_cast<double>(r.hyp_len))
               : 0.0;
  r.signature = signature(o, nrefs);

  bool any_match = false;
  for (int64_t n : r.counts) any_match = any_match || n > 0;
  if (!any_match) return r;  // score and precisions 0, as sacreBLEU reports

  const double k = smooth_value(o);
  std::array<double, 4> correct{}, total{};
  for (int n = 0; n < 4; ++n) {
    correct[n] = static_cast<double>(c.correct[n]);
    total[n] = static_cast<double>(c.total[n]);
  }
  // Exponential ("NIST") smoothing: the k-th order without a match counts
  // as 1 / 2^k of a match. An order with no n-grams at all stays 0, which
  // the floored log turns into a score of 0 unless effective_order drops it.
  double mteval = 1.0;
  int orders = 4;
  for (int n = 0; n < 4; ++n) {
    if (o.smooth_method == "add-k" && n > 0) {
      correct[n] += k;
      total[n] += k;
    }
    if (total[n] == 0) break;
    if (o.effective_order) orders = n + 1;
    if (correct[n] == 0) {
      if (o.smooth_method == "exp") {
        mteval *= 2;
        r.precisions[n] = 100.0 / (mteval * total[n]);
      } else if (o.smooth_method == "floor") {
        r.precisions[n] = 100.0 * k / total[n];
      }
    } else {
      r.precisions[n] = 100.0 * correct[n] / total[n];
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < orders; ++n)
    log_sum += r.precisions[n] == 0.0 ? kLogZero : std::log(r.precisions[n]);
  r.score = r.bp * std::exp(log_sum / orders);
  return r;
}

}  // namespace

SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const References& references, const SacreBleuOptions& options) {
  check_options(options);
  references.check_hypotheses(hypotheses.size(), "BLEU");
  SegmentCounter counter(options);
  BleuCounts sum;
  for (size_t i = 0; i < hypotheses.size(); ++i)
    sum += counter.count(hypotheses[i], references.segment(i));
  return compute(sum, options, references.nrefs());
}

SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const SacreBleuOptions& options) {
  check_sizes(hypotheses, references);
  return corpus_bleu(hypotheses, References({references}), options);
}

SacreBleuResult sentence_bleu(const std::string& hypothesis,
                              const std::vector<std::string>& references,
                              const SacreBleuOptions& options) {
  return corpus_bleu({hypothesis}, References::one_segment(references), options);
}

std::string SacreBleuResult::to_string() const {
  std::string s = "BLEU = " + format_fixed(score, 2) + " ";
  for (size_t i = 0; i < precisions.size(); ++i) {
    if (i > 0) s += '/';
    s += format_fixed(precisions[i], 1);
  }
  s += " (BP = " + format_fixed(bp, 3) + " ratio = " + format_fixed(ratio, 3) +
       " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return s;
}

std::string sacrebleu_tokenize(const std::string& line, const std::string& name) {
  // sacreBLEU's `none` leaves the line alone; the others end by joining the
  // tokens with single spaces.
  if (name == "none") return u32_to_utf8(python_rstrip(decode(line)));
  if (name == "char") {
    const std::u32string text = decode(line);
    std::u32string spaced;
    for (char32_t c : python_rstrip(text)) {
      if (!spaced.empty()) spaced += U' ';
      spaced += c;
    }
    return u32_to_utf8(spaced);
  }
  std::u32string joined;
  for (const auto& token : bleu_tok::sacrebleu_tokens(decode(line), name, false)) {
    if (!joined.empty()) joined += U' ';
    joined += token;
  }
  return u32_to_utf8(joined);
}

std::string default_tokenizer_for(const std::vector<std::string>& references) {
  // Chinese text is mostly ideographs even with Latin names and digits in
  // it; other text has next to none. A sample of the lines decides.
  int64_t han = 0, visible = 0;
  const size_t lines = std::min<size_t>(references.size(), 2000);
  for (size_t i = 0; i < lines; ++i) {
    for (char32_t c : decode(references[i])) {
      if (is_python_space(c)) continue;
      ++visible;
      if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
          (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3134F))
        ++han;
    }
  }
  return visible > 0 && han * 10 >= visible ? "zh" : "13a";
}

double t2t_bleu(const std::vector<std::string>& hypotheses,
                const std::vector<std::string>& references, bool case_sensitive) {
  check_sizes(hypotheses, references);
  // T2T's compute_bleu counts n-grams of ids.
  std::unordered_map<std::u32string, int64_t> ids;
  auto to_ids = [&ids](const Tokens& tokens) {
    std::vector<int64_t> out;
    for (const auto& t : tokens) out.push_back(ids.emplace(t, ids.size()).first->second);
    return out;
  };
  BleuStats stats;
  for (size_t i = 0; i < hypotheses.size(); ++i)
    stats.add(to_ids(bleu_tok::t2t_tokens(decode(references[i]), !case_sensitive)),
              to_ids(bleu_tok::t2t_tokens(decode(hypotheses[i]), !case_sensitive)));
  // T2T's compute_bleu returns a numpy float32, and t2t-bleu's "100 *" keeps
  // it one; rounding the same way gives T2T's printed digits.
  return static_cast<double>(100.0f * static_cast<float>(stats.score()));
}

std::vector<std::string> read_bleu_lines(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("'" + path + "' is a directory; give the text file with one sentence per line");
  const std::string text = read_file(path);
  std::vector<std::string> lines;
  for (std::string_view line : split_lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
  }
  return lines;
}

std::vector<std::string> t2t_bleu_tokenize(const std::string& line) {
  std::vector<std::string> out;
  for (const auto& token : bleu_tok::t2t_tokens(decode(line), false))
    out.push_back(u32_to_utf8(token));
  return out;
}

}  // namespace t2t
