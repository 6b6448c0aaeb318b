#include "t2t/metrics/ter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/metrics/ter_tokenizer.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

// Tercom's limits on a shift, and sacreBLEU's beam and its cap on the shift
// candidates tried per segment and reference.
constexpr size_t kMaxShiftSize = 10;
constexpr int64_t kMaxShiftDistance = 50;
constexpr int64_t kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
constexpr int64_t kInfinity = 10000000000000000;  // sacreBLEU's int(1e16)

using Ids = std::vector<int>;

// The operation that reaches a cell of the edit distance matrix (rows:
// hypothesis words, columns: reference words), as in turning the hypothesis
// into the reference: a deletion drops a hypothesis word, an insertion adds
// a reference word.
enum class Op : char { kNone, kMatch, kSub, kIns, kDel };

// Python's slicing of the shift's pieces: bounds clamped to the sequence.
void append_slice(Ids& out, const Ids& words, int64_t from, int64_t to) {
  const int64_t n = static_cast<int64_t>(words.size());
  from = std::clamp<int64_t>(from, 0, n);
  to = std::clamp<int64_t>(to, 0, n);
  if (to > from) out.insert(out.end(), words.begin() + from, words.begin() + to);
}

// `words` with the `length` words at `start` moved to before the word at
// `target`, each case as sacreBLEU writes it.
Ids perform_shift(const Ids& words, int64_t start, int64_t length, int64_t target) {
  Ids out;
  out.reserve(words.size());
  const int64_t n = static_cast<int64_t>(words.size());
  if (target < start) {
    append_slice(out, words, 0, target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, target, start);
    append_slice(out, words, start + length, n);
  } else if (target > start + length) {
    append_slice(out, words, 0, start);
    append_slice(out, words, start + length, target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, target, n);
  } else {
    append_slice(out, words, 0, start);
    append_slice(out, words, start + length, length + target);
    append_slice(out, words, start, start + length);
    append_slice(out, words, length + target, n);
  }
  return out;
}

// sacreBLEU's beam edit distance of hypotheses of one length against one
// reference: each row is computed only near the pseudo-diagonal (the last
// row in full), which can give more than the true Levenshtein distance, so
// the beam is part of the result. Row i depends only on the first i words,
// so every shift of a hypothesis starts from the rows of their common prefix.
class BeamEditDistance {
 public:
  BeamEditDistance(const Ids& reference, size_t hyp_length)
      : ref_(reference), width_(reference.size() + 1), rows_(hyp_length) {
    ratio_ = rows_ ? static_cast<double>(ref_.size()) / static_cast<double>(rows_) : 1.0;
    // Very different lengths would leave consecutive rows' beams apart.
    beam_ = kBeamWidth < ratio_ / 2 ? static_cast<int64_t>(std::ceil(ratio_ / 2 + kBeamWidth))
                                    : kBeamWidth;
    cost_.assign((rows_ + 1) * width_, kInfinity);
    op_.assign((rows_ + 1) * width_, Op::kNone);
    for (size_t j = 0; j < width_; ++j) {
      cost_[j] = static_cast<int64_t>(j);
      op_[j] = Op::kIns;
    }
    prev_.resize(width_);
    cur_.resize(width_);
  }

  // The distance of `hyp`, keeping its matrix and operations for align().
  int64_t compute_base(const Ids& hyp) {
    for (size_t i = 1; i <= rows_; ++i) {
      const int64_t* prev = &cost_[(i - 1) * width_];
      int64_t* cost = &cost_[i * width_];
      Op* op = &op_[i * width_];
      std::fill(cost, cost + width_, kInfinity);
      std::fill(op, op + width_, Op::kNone);
      const auto [lo, hi] = columns(i);
      for (size_t j = lo; j < hi; ++j) {
        if (j == 0) {
          cost[0] = prev[0] + 1;
          op[0] = Op::kDel;
          continue;
        }
        const bool same = hyp[i - 1] == ref_[j - 1];
        // Tercom prefers a match or substitution, then an insertion, then
        // a deletion; the trace is read the other way round (reference into
        // hypothesis), so here deletions come before insertions.
        const int64_t candidates[3] = {prev[j - 1] + (same ? 0 : 1), prev[j] + 1, cost[j - 1] + 1};
        const Op ops[3] = {same ? Op::kMatch : Op::kSub, Op::kDel, Op::kIns};
        for (int k = 0; k < 3; ++k) {
          if (cost[j] > candidates[k]) {
            cost[j] = candidates[k];
            op[j] = ops[k];
          }
        }
      }
    }
    return cost_[rows_ * width_ + width_ - 1];
  }

  // The distance of `hyp`, which shares its first `prefix` words with the
  // last hypothesis given to compute_base.
  int64_t distance_from(const Ids& hyp, size_t prefix) {
    if (prefix >= rows_) return cost_[rows_ * width_ + width_ - 1];
    std::copy(cost_.begin() + prefix * width_, cost_.begin() + (prefix + 1) * width_,
              prev_.begin());
    for (size_t i = prefix + 1; i <= rows_; ++i) {
      std::fill(cur_.begin(), cur_.end(), kInfinity);
      const auto [lo, hi] = columns(i);
      for (size_t j = lo; j < hi; ++j) {
        if (j == 0) {
          cur_[0] = prev_[0] + 1;
          continue;
        }
        const int64_t sub = prev_[j - 1] + (hyp[i - 1] == ref_[j - 1] ? 0 : 1);
        cur_[j] = std::min({cur_[j], sub, prev_[j] + 1, cur_[j - 1] + 1});
      }
      std::swap(prev_, cur_);
    }
    return prev_[width_ - 1];
  }

  // From compute_base's matrix: for each reference word, the hypothesis
  // position it aligns with (-1 before the first); and which hypothesis
  // and reference words are not matched.
  void align(std::vector<int64_t>* alignment, std::vector<int>* hyp_err,
             std::vector<int>* ref_err) const {
    std::vector<Op> trace;
    size_t i = rows_, j = width_ - 1;
    while (i > 0 || j > 0) {
      const Op op = op_[i * width_ + j];
      trace.push_back(op);
      if (op == Op::kMatch || op == Op::kSub) {
        --i;
        --j;
      } else if (op == Op::kIns) {
        --j;
      } else if (op == Op::kDel) {
        --i;
      } else {
        throw Error("TER: the edit distance beam left a cell of its trace unreached");
      }
    }
    std::reverse(trace.begin(), trace.end());
    alignment->assign(width_ - 1, -1);
    hyp_err->assign(rows_, 0);
    ref_err->assign(width_ - 1, 0);
    int64_t h = -1, r = -1;
    for (Op op : trace) {
      // An inserted reference word aligns with the hypothesis word before
      // it (-1 at the start); a deleted hypothesis word with none.
      if (op == Op::kIns) {
        ++r;
        (*alignment)[r] = h;
        (*ref_err)[r] = 1;
      } else if (op == Op::kDel) {
        ++h;
        (*hyp_err)[h] = 1;
      } else {
        ++h;
        ++r;
        (*alignment)[r] = h;
        const int err = op == Op::kSub ? 1 : 0;
        (*hyp_err)[h] = err;
        (*ref_err)[r] = err;
      }
    }
  }

 private:
  // The columns [lo, hi) row i computes.
  std::pair<size_t, size_t> columns(size_t i) const {
    const int64_t diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * ratio_));
    const int64_t lo = std::max<int64_t>(0, diagonal - beam_);
    int64_t hi = std::min<int64_t>(static_cast<int64_t>(width_), diagonal + beam_);
    if (i == rows_) hi = static_cast<int64_t>(width_);
    return {static_cast<size_t>(lo), static_cast<size_t>(std::max(lo, hi))};
  }

  const Ids& ref_;
  size_t width_, rows_;
  double ratio_;
  int64_t beam_;
  std::vector<int64_t> cost_;
  std::vector<Op> op_;
  std::vector<int64_t> prev_, cur_;
};

struct ShiftSearch {
  int64_t distance = 0;  // of the hypothesis searched
  int64_t gain = 0;      // of the best shift, when one was found
  bool found = false;
  Ids shifted;           // the hypothesis after the best shift
};

// One search for the best shift of `hyp`, as sacreBLEU's _shift does it,
// adding the candidates it tries to *checked.
ShiftSearch best_shift(const Ids& hyp, const Ids& ref, BeamEditDistance& ed, int* checked) {
  ShiftSearch s;
  s.distance = ed.compute_base(hyp);
  std::vector<int64_t> alignment;
  std::vector<int> hyp_err, ref_err;
  ed.align(&alignment, &hyp_err, &ref_err);
  const int64_t nh = static_cast<int64_t>(hyp.size()), nr = static_cast<int64_t>(ref.size());
  std::vector<int> hyp_err_sum(nh + 1, 0), ref_err_sum(nr + 1, 0);
  for (int64_t i = 0; i < nh; ++i) hyp_err_sum[i + 1] = hyp_err_sum[i] + hyp_err[i];
  for (int64_t i = 0; i < nr; ++i) ref_err_sum[i + 1] = ref_err_sum[i] + ref_err[i];

  // The ranking key after the gain: longer, then earlier in the
  // hypothesis, then the earlier target.
  int64_t best_length = 0, best_start = 0, best_target = 0;
  auto better = [&](int64_t gain, int64_t length, int64_t start, int64_t target) {
    if (!s.found) return true;
    if (gain != s.gain) return gain > s.gain;
    if (length != best_length) return length > best_length;
    if (start != best_start) return start < best_start;
    return target < best_target;
  };

  // Each (start_h, start_r, length) with matching words, in sacreBLEU's
  // order; returns false once the candidate cap is reached.
  auto try_pair = [&](int64_t start_h, int64_t start_r, int64_t length) {
    // Shift only words that are wrong where they are, to a place where the
    // reference is not matched, and not into the run itself.
    if (hyp_err_sum[start_h + length] - hyp_err_sum[start_h] == 0) return true;
    if (ref_err_sum[start_r + length] - ref_err_sum[start_r] == 0) return true;
    if (start_h <= alignment[start_r] && alignment[start_r] < start_h + length) return true;
    int64_t prev_target = -1;
    for (int64_t offset = -1; offset < length; ++offset) {
      const int64_t r = start_r + offset;
      // Unlike Tercom, the run goes before the aligned word, not after it.
      const int64_t target = r == -1 ? 0 : alignment[r] + 1;
      if (target == prev_target) continue;
      prev_target = target;
      Ids shifted = perform_shift(hyp, start_h, length, target);
      const int64_t gain =
          s.distance - ed.distance_from(shifted, static_cast<size_t>(std::min(start_h, target)));
      ++*checked;
      if (better(gain, length, start_h, target)) {
        s.found = true;
        s.gain = gain;
        best_length = length;
        best_start = start_h;
        best_target = target;
        s.shifted = std::move(shifted);
      }
    }
    return *checked < kMaxShiftCandidates;
  };

  for (int64_t start_h = 0; start_h < nh; ++start_h) {
    for (int64_t start_r = 0; start_r < nr; ++start_r) {
      if (std::abs(start_r - start_h) > kMaxShiftDistance) continue;
      for (int64_t length = 0; hyp[start_h + length] == ref[start_r + length] &&
                               length < static_cast<int64_t>(kMaxShiftSize);) {
        ++length;
        if (!try_pair(start_h, start_r, length)) return s;
        if (start_h + length == nh || start_r + length == nr) break;
      }
    }
  }
  return s;
}

// Tercom's edits of one hypothesis against one non-empty reference: shifts
// taken greedily while they lower the edit distance, plus the distance left.
int64_t edits_of(const Ids& hyp, const Ids& ref) {
  BeamEditDistance ed(ref, hyp.size());
  Ids current = hyp;
  int64_t shifts = 0;
  int checked = 0;
  while (true) {
    ShiftSearch s = best_shift(current, ref, ed, &checked);
    // Reaching the cap drops the shift that search found, as sacreBLEU does.
    if (checked >= kMaxShiftCandidates || !s.found || s.gain <= 0) return shifts + s.distance;
    ++shifts;
    current = std::move(s.shifted);
  }
}

// Gives each distinct word an id, so that words compare as integers.
class WordIds {
 public:
  Ids ids(const std::vector<std::u32string>& words) {
    Ids out;
    out.reserve(words.size());
    for (const auto& w : words)
      out.push_back(ids_.emplace(w, static_cast<int>(ids_.size())).first->second);
    return out;
  }

 private:
  std::unordered_map<std::u32string, int> ids_;
};

std::vector<std::u32string> words_of(const std::string& line, const TerOptions& options) {
  const std::u32string text = utf8_to_u32(utf8_replace_invalid(line));
  return ter_tok::tercom_words(python_rstrip(text), options);
}

// sacreBLEU tokenizes each reference twice (once when caching the
// references, again when taking their words), and normalisation is not
// idempotent: "x's\u00a0y" splits off "'s" only the second time.
std::vector<std::u32string> reference_words(const std::string& line, const TerOptions& options) {
  std::u32string once;
  for (const auto& word : words_of(line, options)) {
    if (!once.empty()) once += U' ';
    once += word;
  }
  return ter_tok::tercom_words(once, options);
}

std::string signature(const TerOptions& o, const std::string& nrefs) {
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  return "nrefs:" + nrefs + "|case:" + (o.case_sensitive ? "mixed" : "lc") +
         "|tok:tercom|norm:" + yes_no(o.normalized) + "|punct:" + yes_no(!o.no_punct) +
         "|asian:" + yes_no(o.asian_support) + "|version:t2t-" + T2T_VERSION;
}

}  // namespace

std::string TerResult::to_string() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "TER = %.2f", score);
  return buf;
}

int64_t ter_edits(const std::vector<std::u32string>& hypothesis,
                  const std::vector<std::u32string>& reference) {
  if (reference.empty()) return static_cast<int64_t>(hypothesis.size());
  WordIds ids;
  const Ids ref = ids.ids(reference);
  return edits_of(ids.ids(hypothesis), ref);
}

TerResult corpus_ter(const std::vector<std::string>& hypotheses, const References& references,
                     const TerOptions& options) {
  references.check_hypotheses(hypotheses.size(), "TER");
  // Summed segment by segment as sacreBLEU does: edits as integers, mean
  // reference lengths as floats in order.
  int64_t total_edits = 0;
  double total_length = 0.0;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    WordIds ids;
    const Ids hyp = ids.ids(words_of(hypotheses[i], options));
    const auto& refs = references.segment(i);
    int64_t best = kInfinity;
    int64_t lengths = 0;
    for (const auto& line : refs) {
      const Ids ref = ids.ids(reference_words(line, options));
      const int64_t edits =
          ref.empty() ? static_cast<int64_t>(hyp.size()) : edits_of(hyp, ref);
      lengths += static_cast<int64_t>(ref.size());
      best = std::min(best, edits);
    }
    total_edits += best;
    total_length += static_cast<double>(lengths) / static_cast<double>(refs.size());
  }
  TerResult r;
  r.num_edits = static_cast<double>(total_edits);
  r.ref_length = total_length;
  if (total_length > 0) r.score = 100 * (r.num_edits / total_length);
  else if (total_edits > 0) r.score = 100.0;  // empty references, words in the hypothesis
  r.signature = signature(options, references.nrefs());
  return r;
}

TerResult sentence_ter(const std::string& hypothesis, const std::vector<std::string>& references,
                       const TerOptions& options) {
  return corpus_ter({hypothesis}, References::one_segment(references), options);
}

}  // namespace t2t
