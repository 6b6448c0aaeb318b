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

// Gives each distinct token an id so BleuStats can count n-grams of ids.
class Vocab {
 public:
  std::vector<int64_t> ids(const Tokens& tokens) {
    std::vector<int64_t> out;
    out.reserve(tokens.size());
    for (const auto& t : tokens) out.push_back(ids_.emplace(t, ids_.size()).first->second);
    return out;
  }

 private:
  std::unordered_map<std::u32string, int64_t> ids_;
};

// Invalid bytes become U+FFFD, as Python's errors="replace" reads them, so a
// stray byte costs a token rather than the whole score.
std::u32string decode(const std::string& line) { return utf8_to_u32(utf8_replace_invalid(line)); }

void check_sizes(const std::vector<std::string>& hypotheses,
                 const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size())
    throw Error("BLEU needs one reference per hypothesis: got " +
                std::to_string(hypotheses.size()) + " hypotheses and " +
                std::to_string(references.size()) + " references");
}

template <typename Tokenize>
BleuStats count(const std::vector<std::string>& hypotheses,
                const std::vector<std::string>& references, Tokenize tokenize) {
  check_sizes(hypotheses, references);
  Vocab vocab;
  BleuStats stats;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const auto ref = vocab.ids(tokenize(decode(references[i])));
    const auto hyp = vocab.ids(tokenize(decode(hypotheses[i])));
    stats.add(ref, hyp);
  }
  return stats;
}

std::string format_fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

// sacreBLEU floors log(0) to this instead of -inf.
constexpr double kLogZero = -9999999999.0;

}  // namespace

SacreBleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const SacreBleuOptions& options) {
  const std::string& tok = options.tokenize;
  const auto& names = bleu_tok::sacrebleu_tokenizer_names();
  if (std::find(names.begin(), names.end(), tok) == names.end())
    throw Error("unknown BLEU tokenizer '" + tok + "': use 13a, intl, zh or none");
  const bool lowercase = options.lowercase;
  const BleuStats stats = count(hypotheses, references, [&](const std::u32string& line) {
    return bleu_tok::sacrebleu_tokens(line, tok, lowercase);
  });

  SacreBleuResult r;
  r.hyp_len = stats.translation_length();
  r.ref_len = stats.reference_length();
  r.counts = stats.matches();
  r.totals = stats.possible();
  r.ratio = r.ref_len ? static_cast<double>(r.hyp_len) / static_cast<double>(r.ref_len) : 0.0;
  r.bp = 1.0;
  if (r.hyp_len < r.ref_len)
    r.bp = r.hyp_len > 0
               ? std::exp(1.0 - static_cast<double>(r.ref_len) / static_cast<double>(r.hyp_len))
               : 0.0;
  r.signature = std::string("nrefs:1|case:") + (lowercase ? "lc" : "mixed") +
                "|eff:no|tok:" + tok + "|smooth:exp|version:t2t-" + T2T_VERSION;

  bool any_match = false;
  for (int64_t c : r.counts) any_match = any_match || c > 0;
  if (!any_match) return r;  // score and precisions 0, as sacreBLEU reports

  // Exponential ("NIST") smoothing: the k-th order without a match counts
  // as 1 / 2^k of a match. An order with no n-grams at all stays 0, which
  // the floored log turns into a score of 0.
  double smooth = 1.0;
  for (int n = 0; n < 4; ++n) {
    if (r.totals[n] == 0) break;
    if (r.counts[n] == 0) {
      smooth *= 2;
      r.precisions[n] = 100.0 / (smooth * static_cast<double>(r.totals[n]));
    } else {
      r.precisions[n] =
          100.0 * static_cast<double>(r.counts[n]) / static_cast<double>(r.totals[n]);
    }
  }
  double log_sum = 0.0;
  for (double p : r.precisions) log_sum += p == 0.0 ? kLogZero : std::log(p);
  r.score = r.bp * std::exp(log_sum / 4);
  return r;
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
  const BleuStats stats = count(hypotheses, references, [&](const std::u32string& line) {
    return bleu_tok::t2t_tokens(line, !case_sensitive);
  });
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
