#include "t2t/train/loss.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "t2t/core/error.h"
#include "t2t/train/smoothed_xent_cpu.h"

namespace t2t {

namespace {

std::string shape_of(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// Checks logits [B, T, V] against labels [B, T]; returns labels as int64.
at::Tensor checked_labels(const at::Tensor& logits, const at::Tensor& labels, const char* what) {
  if (!logits.defined() || !labels.defined())
    throw Error(std::string(what) + ": logits or labels is an undefined tensor");
  if (logits.dim() != 3 || labels.dim() != 2 || logits.size(0) != labels.size(0) ||
      logits.size(1) != labels.size(1))
    throw Error(std::string(what) + ": logits " + shape_of(logits) + " and labels " +
                shape_of(labels) + " do not fit [batch, length, vocab] and [batch, length]");
  if (!at::isFloatingType(logits.scalar_type()))
    throw Error(std::string(what) + ": logits must be floating point");
  if (at::isFloatingType(labels.scalar_type()) || labels.scalar_type() == at::kBool)
    throw Error(std::string(what) + ": labels must be integer ids");
  return labels.to(logits.device(), at::kLong);
}

// Reduced-precision logits are upcast before the softmax, as T2T does
// (common_attention.maybe_upcast): a vocabulary-wide log-sum-exp in half
// precision loses too much.
at::ScalarType compute_type(const at::Tensor& logits) {
  auto t = logits.scalar_type();
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

}  // namespace

LossSum smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                               double label_smoothing) {
  const at::Tensor ids = checked_labels(logits, labels, "smoothed_cross_entropy");
  const int64_t vocab = logits.size(2);
  if (vocab < 2)
    throw Error("smoothed_cross_entropy: the vocabulary needs at least 2 entries, logits are " +
                shape_of(logits));
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    throw Error("label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));

  const double confidence = 1.0 - label_smoothing;
  const double low = label_smoothing / static_cast<double>(vocab - 1);
  // The smallest cross entropy reachable against the smoothed targets (their
  // entropy); 0 * log(0) counts as 0. The 1e-20 is T2T's, kept so that
  // values match its to the last digit.
  const double normalizing =
      -((confidence > 0.0 ? confidence * std::log(confidence) : 0.0) +
        static_cast<double>(vocab - 1) * low * std::log(low + 1e-20));

  const at::Tensor weight = ids.ne(0).sum().to(compute_type(logits));
  // float32 on the CPU: t2t's one-pass kernel, for any smoothing.
  if (logits.device().is_cpu() && compute_type(logits) == at::kFloat) {
    const at::Tensor xent = smoothed_xent_sum_cpu(
        logits.reshape({-1, vocab}).to(at::kFloat), ids.reshape({-1}), confidence, low);
    return {xent - weight * normalizing, weight};
  }
  // PyTorch's label smoothing gives eps/V to every class, the gold one
  // included; T2T's gives label_smoothing/(V-1) to the others only. The two
  // are the same targets for eps = label_smoothing * V/(V-1), and PyTorch's
  // fused loss then saves several passes over [tokens, vocab] in backward.
  const double eps = label_smoothing * static_cast<double>(vocab) / static_cast<double>(vocab - 1);
  if (eps <= 1.0) {
    const at::Tensor flat = logits.reshape({-1, vocab}).to(compute_type(logits));
    const at::Tensor xent = at::cross_entropy_loss(flat, ids.reshape({-1}), {}, at::Reduction::Sum,
                                                   /*ignore_index=*/0, eps);
    return {xent - weight * normalizing, weight};
  }
  // Smoothing beyond (V-1)/V (more mass on every wrong id than on the gold
  // one) has no PyTorch equivalent: written out.
  // Against soft targets q: xent = -sum_v q_v log p_v
  //   = -(confidence * log p_gold + low * (sum_v log p_v - log p_gold)).
  const at::Tensor logp = at::log_softmax(logits, -1, compute_type(logits));
  const at::Tensor gold = logp.gather(-1, ids.unsqueeze(-1)).squeeze(-1);  // [B, T]
  at::Tensor xent = gold.mul(-(confidence - low)) - logp.sum(-1).mul(low) - normalizing;
  return {(xent * ids.ne(0).to(xent.scalar_type())).sum(), weight};
}

AccuracyCounts padded_accuracy(const at::Tensor& logits, const at::Tensor& labels) {
  const at::Tensor ids = checked_labels(logits, labels, "padded_accuracy");
  const at::Tensor mask = ids.ne(0);
  const at::Tensor hit = logits.argmax(-1).eq(ids).logical_and(mask);
  return {hit.sum(), mask.sum()};
}

AccuracyCounts padded_accuracy_topk(const at::Tensor& logits, const at::Tensor& labels,
                                    int64_t k) {
  const at::Tensor ids = checked_labels(logits, labels, "padded_accuracy_topk");
  if (k < 1) throw Error("padded_accuracy_topk: k must be at least 1, got " + std::to_string(k));
  k = std::min(k, logits.size(2));
  const at::Tensor top = std::get<1>(logits.topk(k, -1));  // [B, T, k]
  const at::Tensor mask = ids.ne(0);
  const at::Tensor hit = top.eq(ids.unsqueeze(-1)).any(-1).logical_and(mask);
  return {hit.sum(), mask.sum()};
}

AccuracyCounts padded_sequence_accuracy(const at::Tensor& logits, const at::Tensor& labels) {
  const at::Tensor ids = checked_labels(logits, labels, "padded_sequence_accuracy");
  const at::Tensor wrong = logits.argmax(-1).ne(ids).logical_and(ids.ne(0));  // [B, T]
  const at::Tensor right_rows = wrong.any(-1).logical_not();
  return {right_rows.sum(), at::scalar_tensor(ids.size(0), ids.options())};
}

LossSum guided_alignment_cost(const at::Tensor& attention, const at::Tensor& links) {
  if (!attention.defined() || attention.dim() != 3 || !at::isFloatingType(attention.scalar_type()))
    throw Error("guided_alignment_cost: attention must be [batch, target_length, input_length] "
                "floating point, got " + (attention.defined() ? shape_of(attention) : "undefined"));
  if (!links.defined() || links.dim() != 2 || links.size(1) != 3)
    throw Error("guided_alignment_cost: links must be [links, 3] (row, target, input), got " +
                (links.defined() ? shape_of(links) : "undefined"));
  const auto f32 = attention.options().dtype(at::kFloat);
  if (links.size(0) == 0) return {at::zeros({}, f32), at::zeros({}, f32)};
  const auto idx = links.to(attention.device(), at::kLong);
  const auto row = idx.select(1, 0), target = idx.select(1, 1), input = idx.select(1, 2);
  // Each target position's links share its weight of 1 (Marian's
  // normalised alignment matrix).
  const auto flat = row * attention.size(1) + target;
  const auto per_position =
      at::zeros({attention.size(0) * attention.size(1)}, f32).index_add_(0, flat, at::ones_like(flat, f32));
  const auto weight = per_position.index_select(0, flat).reciprocal();
  const auto picked = attention.index({row, target, input}).to(at::kFloat);
  return {-(weight * at::log(picked + 1e-6f)).sum(), per_position.gt(0).sum().to(at::kFloat)};
}

}  // namespace t2t
