#include "t2t/metrics/chrf.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "t2t/core/error.h"
#include "t2t/text/unicode.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

using Counts = std::unordered_map<std::u32string, int64_t>;

// Python's string.punctuation, which chrF++ splits off the ends of words.
bool is_ascii_punct(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// sacreBLEU's word split for chrF++: one punctuation mark at the end of a
// word, or else at its start, becomes a word of its own ("(hi)" gives
// "(hi" and ")").
std::vector<std::u32string> chrf_words(const std::u32string& line) {
  std::vector<std::u32string> words;
  for (std::u32string_view w : python_split(line)) {
    if (w.size() > 1 && is_ascii_punct(w.back())) {
      words.emplace_back(w.substr(0, w.size() - 1));
      words.emplace_back(1, w.back());
    } else if (w.size() > 1 && is_ascii_punct(w.front())) {
      words.emplace_back(1, w.front());
      words.emplace_back(w.substr(1));
    } else {
      words.emplace_back(w);
    }
  }
  return words;
}

// The n-gram counts of one segment, character orders then word orders.
std::vector<Counts> extract(const std::u32string& segment, const ChrfOptions& o) {
  std::vector<Counts> out;
  out.reserve(static_cast<size_t>(o.char_order + o.word_order));
  std::u32string chars;
  if (o.whitespace) {
    chars = segment;
  } else {
    for (std::u32string_view w : python_split(segment)) chars += w;
  }
  for (size_t n = 1; n <= static_cast<size_t>(o.char_order); ++n) {
    Counts& c = out.emplace_back();
    for (size_t i = 0; i + n <= chars.size(); ++i) ++c[chars.substr(i, n)];
  }
  if (o.word_order > 0) {
    const auto words = chrf_words(segment);
    for (size_t n = 1; n <= static_cast<size_t>(o.word_order); ++n) {
      Counts& c = out.emplace_back();
      for (size_t i = 0; i + n <= words.size(); ++i) {
        std::u32string key = words[i];
        for (size_t k = 1; k < n; ++k) key += U' ' + words[i + k];
        ++c[key];
      }
    }
  }
  return out;
}

// sacreBLEU's _compute_f_score, in its order of operations so that the
// digits agree.
double f_score(const std::vector<int64_t>& stats, const ChrfOptions& o) {
  constexpr double kEps = 1e-16;
  const int orders = o.char_order + o.word_order;
  const double factor = static_cast<double>(o.beta) * static_cast<double>(o.beta);
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective = 0;
  for (int i = 0; i < orders; ++i) {
    const int64_t hyp = stats[3 * i], ref = stats[3 * i + 1], match = stats[3 * i + 2];
    const double prec = hyp > 0 ? static_cast<double>(match) / static_cast<double>(hyp) : kEps;
    const double rec = ref > 0 ? static_cast<double>(match) / static_cast<double>(ref) : kEps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : kEps;
    if (hyp > 0 && ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective;
    }
  }
  if (o.eps_smoothing) return 100 * score / orders;
  if (effective == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective;
    avg_rec /= effective;
  }
  if (avg_prec + avg_rec == 0) return 0.0;
  score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

std::vector<int64_t> match_stats(const std::vector<Counts>& hyp, const std::vector<Counts>& ref) {
  std::vector<int64_t> stats;
  stats.reserve(hyp.size() * 3);
  for (size_t n = 0; n < hyp.size(); ++n) {
    int64_t hyp_count = 0, match = 0, ref_count = 0;
    for (const auto& [ngram, count] : hyp[n]) {
      hyp_count += count;
      auto it = ref[n].find(ngram);
      if (it != ref[n].end()) match += std::min(count, it->second);
    }
    for (const auto& kv : ref[n]) ref_count += kv.second;
    // No hypothesis n-grams count where the reference has none of the order.
    stats.push_back(ref[n].empty() ? 0 : hyp_count);
    stats.push_back(ref_count);
    stats.push_back(match);
  }
  return stats;
}

void check_options(const ChrfOptions& o) {
  if (o.char_order < 0 || o.word_order < 0 || o.char_order + o.word_order == 0)
    throw Error("chrF needs a character or word n-gram order above 0 (char_order=" +
                std::to_string(o.char_order) + ", word_order=" + std::to_string(o.word_order) +
                ")");
  if (o.beta < 0) throw Error("chrF's beta must be >= 0, got " + std::to_string(o.beta));
}

std::u32string preprocess(const std::string& line, const ChrfOptions& o) {
  std::u32string s = utf8_to_u32(utf8_replace_invalid(line));
  return o.lowercase ? unicode::lower(s) : s;
}

}  // namespace

ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses, const References& references,
                       const ChrfOptions& options) {
  check_options(options);
  references.check_hypotheses(hypotheses.size(), "chrF");
  const size_t orders = static_cast<size_t>(options.char_order + options.word_order);
  ChrfResult r;
  r.stats.assign(orders * 3, 0);
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const auto hyp = extract(preprocess(hypotheses[i], options), options);
    std::vector<int64_t> best;
    double best_f = -1.0;
    for (const auto& reference : references.segment(i)) {
      auto stats = match_stats(hyp, extract(preprocess(reference, options), options));
      const double f = f_score(stats, options);
      if (f > best_f) {
        best_f = f;
        best = std::move(stats);
      }
    }
    for (size_t k = 0; k < best.size(); ++k) r.stats[k] += best[k];
  }
  r.score = f_score(r.stats, options);
  r.name = chrf_name(options);
  r.signature = "nrefs:" + references.nrefs() + "|case:" + (options.lowercase ? "lc" : "mixed") +
                "|eff:" + (options.eps_smoothing ? "no" : "yes") +
                "|nc:" + std::to_string(options.char_order) +
                "|nw:" + std::to_string(options.word_order) +
                "|space:" + (options.whitespace ? "yes" : "no") + "|version:t2t-" + T2T_VERSION;
  return r;
}

ChrfResult sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                         const ChrfOptions& options) {
  return corpus_chrf({hypothesis}, References::one_segment(references), options);
}

std::string chrf_name(const ChrfOptions& options) {
  return "chrF" + std::to_string(options.beta) +
         std::string(static_cast<size_t>(std::max(options.word_order, 0)), '+');
}

std::string ChrfResult::to_string() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", score);
  return name + " = " + buf;
}

}  // namespace t2t
