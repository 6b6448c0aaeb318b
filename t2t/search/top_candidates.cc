#include "t2t/search/top_candidates.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "t2t/kernels/fast_math.h"

namespace t2t {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Keeps the `count` largest values seen, best first; a later equal value
// does not displace an earlier one.
struct TopList {
  std::vector<float> value;
  std::vector<int64_t> index;
  int64_t size = 0;
  explicit TopList(int64_t count) : value(count), index(count) {}
  float threshold() const {
    return size < static_cast<int64_t>(value.size()) ? kNegInf : value[size - 1];
  }
  void offer(float x, int64_t i) {
    const int64_t cap = static_cast<int64_t>(value.size());
    if (size == cap && !(x > value[size - 1])) return;
    int64_t at = size < cap ? size++ : cap - 1;
    while (at > 0 && x > value[at - 1]) {
      value[at] = value[at - 1];
      index[at] = index[at - 1];
      --at;
    }
    value[at] = x;
    index[at] = i;
  }
};

// Ids are scanned in blocks of kBlock (block_maxima, fast_math.h): a block
// whose largest logit cannot enter the list is skipped whole.
constexpr int64_t kBlock = kMaxBlock;

// Offers top every candidate of one hypothesis: id v of logits x[0, vocab)
// scores ((x[v] - best) - log_total) + base, log_softmax followed by adding
// the hypothesis's log-probability. That map is monotonic in x, so a block
// whose largest logit cannot enter the full list is skipped whole: most of
// the vocabulary costs one compare per block, and the ids offered and their
// values are exactly those of a plain scan.
void offer_candidates(const float* x, int64_t vocab, const float* block_max, float best,
                      float log_total, float base, int64_t offset, int64_t count, TopList& top) {
  float threshold = top.threshold();
  int64_t b = 0;
  for (int64_t v0 = 0; v0 < vocab; v0 += kBlock, ++b) {
    if (top.size == count && !(((block_max[b] - best) - log_total) + base > threshold)) continue;
    const int64_t n = std::min<int64_t>(kBlock, vocab - v0);
    for (int64_t j = 0; j < n; ++j) {
      const float grown = ((x[v0 + j] - best) - log_total) + base;
      if (grown > threshold || top.size < count) {
        top.offer(grown, offset + v0 + j);
        threshold = top.threshold();
      }
    }
  }
}

Candidates top_candidates_cpu(const at::Tensor& logits_in, const at::Tensor& alive_in,
                              int64_t count, double penalty) {
  const auto logits = logits_in.contiguous();
  const auto alive = alive_in.to(at::kFloat).contiguous();
  const int64_t rows = alive.size(0), beams = alive.size(1), vocab = logits.size(1);
  auto long_opts = at::TensorOptions().dtype(at::kLong);
  Candidates c;
  c.scores = at::empty({rows, count}, alive.options());
  c.log_probs = at::empty({rows, count}, alive.options());
  c.beams = at::empty({rows, count}, long_opts);
  c.ids = at::empty({rows, count}, long_opts);
  const float* x = logits.data_ptr<float>();
  const float* a = alive.data_ptr<float>();
  float* scores = c.scores.data_ptr<float>();
  float* lps = c.log_probs.data_ptr<float>();
  int64_t* bs = c.beams.data_ptr<int64_t>();
  int64_t* ids = c.ids.data_ptr<int64_t>();
  const float pen = static_cast<float>(penalty);
  at::parallel_for(0, rows, rows * beams * vocab < (1 << 18) ? rows : 1, [&](int64_t begin, int64_t end) {
    std::vector<float> block_max((vocab + kBlock - 1) / kBlock);
    for (int64_t r = begin; r < end; ++r) {
      TopList top(count);
      for (int64_t k = 0; k < beams; ++k) {
        const float base = a[r * beams + k];
        const int64_t offset = k * vocab;
        if (base == kNegInf) {
          // A dead beam's candidates are all -inf: they only fill places
          // nothing better took, lowest indices first.
          for (int64_t v = 0; v < vocab && top.size < count; ++v) top.offer(kNegInf, offset + v);
          continue;
        }
        const float* row = x + (r * beams + k) * vocab;
        const float best = block_maxima(row, vocab, block_max.data());
        const float total = exp_sum(row, vocab, best);
        offer_candidates(row, vocab, block_max.data(), best, std::log(total), base, offset, count,
                         top);
      }
      for (int64_t j = 0; j < count; ++j) {
        const float lp = top.value[j];
        lps[r * count + j] = lp;
        scores[r * count + j] = lp / pen;
        bs[r * count + j] = top.index[j] / vocab;
        ids[r * count + j] = top.index[j] % vocab;
      }
    }
  });
  return c;
}

}  // namespace

Candidates top_candidates_aten(const at::Tensor& logits, const at::Tensor& alive_log_probs,
                               int64_t count, double penalty) {
  const int64_t rows = alive_log_probs.size(0), beams = alive_log_probs.size(1);
  const int64_t vocab = logits.size(1);
  const auto log_probs = (at::log_softmax(logits.to(at::kFloat), -1).view({rows, beams, vocab}) +
                          alive_log_probs.unsqueeze(2))
                             .view({rows, beams * vocab});
  Candidates c;
  at::Tensor index;
  std::tie(c.scores, index) = (log_probs / penalty).topk(count, 1);
  c.log_probs = log_probs.gather(1, index);
  c.beams = index.div(vocab, "floor");
  c.ids = index.remainder(vocab);
  return c;
}

Candidates top_candidates(const at::Tensor& logits, const at::Tensor& alive_log_probs,
                          int64_t count, double penalty) {
  RECORD_FUNCTION("t2t::top_candidates", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(logits.dim() == 2 && alive_log_probs.dim() == 2 &&
                  logits.size(0) == alive_log_probs.size(0) * alive_log_probs.size(1) &&
                  count >= 1 && count <= alive_log_probs.size(1) * logits.size(1),
              "top_candidates: logits ", logits.sizes(), ", alive log-probabilities ",
              alive_log_probs.sizes(), ", count ", count);
  if (logits.device().is_cpu() && logits.scalar_type() == at::kFloat)
    return top_candidates_cpu(logits, alive_log_probs, count, penalty);
  return top_candidates_aten(logits, alive_log_probs, count, penalty);
}

}  // namespace t2t
