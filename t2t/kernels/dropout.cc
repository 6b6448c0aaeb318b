#include "t2t/kernels/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <mutex>

#include "t2t/core/hash.h"
#include "t2t/kernels/fast_math.h"

namespace t2t {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Elements per hash key: a key per block keeps the per-element hash to 32
// bits (what the vector units multiply cheaply) for tensors of any size.
constexpr int64_t kBlock = 1 << 14;

// Spreads consecutive offsets over the hash's input space before mixing.
constexpr uint32_t kStride = 0x9e3779b9U;

// One call's keep decisions: element i is kept when the hash of its offset
// within its block, under the block's key, is below `below`.
struct KeepRule {
  uint64_t seed;
  uint32_t below;
  float scale;  // 1 / (1 - rate)
  uint32_t key(int64_t block) const {
    return static_cast<uint32_t>(splitmix64(seed + static_cast<uint64_t>(block)));
  }
};

// The kernels: out = x * (kept ? scale : 0), so that NaN and Inf propagate
// as they do through torch::dropout's multiplication.
T2T_VECTOR_CLONES
void scale_kept(const float* x, float* out, int64_t n, uint32_t key, uint32_t below,
                float scale) {
  for (int64_t j = 0; j < n; ++j)
    out[j] = x[j] * (mix32(key + static_cast<uint32_t>(j) * kStride) < below ? scale : 0.0f);
}

T2T_VECTOR_CLONES
void scale_kept_add(const float* x, const float* residual, float* out, int64_t n, uint32_t key,
                    uint32_t below, float scale) {
  for (int64_t j = 0; j < n; ++j)
    out[j] = residual[j] +
             x[j] * (mix32(key + static_cast<uint32_t>(j) * kStride) < below ? scale : 0.0f);
}

T2T_VECTOR_CLONES
void relu_scale_kept(const float* x, float* out, int64_t n, uint32_t key, uint32_t below,
                     float scale) {
  for (int64_t j = 0; j < n; ++j) {
    // relu keeping NaN, as torch::relu does
    const float r = (x[j] > 0.0f || x[j] != x[j]) ? x[j] : 0.0f;
    out[j] = r * (mix32(key + static_cast<uint32_t>(j) * kStride) < below ? scale : 0.0f);
  }
}

// relu_dropout's gradient from its output alone: positive exactly where the
// input was positive and kept.
T2T_VECTOR_CLONES
void relu_dropout_grad(const float* grad, const float* out, float* grad_in, int64_t n,
                       float scale) {
  for (int64_t j = 0; j < n; ++j) grad_in[j] = out[j] > 0.0f ? grad[j] * scale : 0.0f;
}

enum class Form { plain, add, relu };

// out = form(x [, residual]) over contiguous float32 tensors, a block of
// kBlock elements at a time across the intra-op threads.
torch::Tensor apply_rule(const torch::Tensor& x, const torch::Tensor& residual,
                         const KeepRule& rule, Form form) {
  auto out = torch::empty_like(x, at::MemoryFormat::Contiguous);
  const float* px = x.data_ptr<float>();
  const float* pr = form == Form::add ? residual.data_ptr<float>() : nullptr;
  float* po = out.data_ptr<float>();
  const int64_t n = x.numel();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  at::parallel_for(0, blocks, 2, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t offset = b * kBlock, count = std::min(kBlock, n - offset);
      const uint32_t key = rule.key(b);
      switch (form) {
        case Form::plain:
          scale_kept(px + offset, po + offset, count, key, rule.below, rule.scale);
          break;
        case Form::add:
          scale_kept_add(px + offset, pr + offset, po + offset, count, key, rule.below,
                         rule.scale);
          break;
        case Form::relu:
          relu_scale_kept(px + offset, po + offset, count, key, rule.below, rule.scale);
          break;
      }
    }
  });
  return out;
}

uint64_t draw_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

// The kernels are float32; bfloat16 and half (autocast) go through float32.
torch::Tensor as_float(const torch::Tensor& t) {
  return t.to(torch::kFloat).contiguous();
}

void save_rule(AutogradContext* ctx, const KeepRule& rule) {
  ctx->saved_data["seed"] = static_cast<int64_t>(rule.seed);
  ctx->saved_data["below"] = static_cast<int64_t>(rule.below);
  ctx->saved_data["scale"] = static_cast<double>(rule.scale);
}

KeepRule saved_rule(AutogradContext* ctx) {
  return {static_cast<uint64_t>(ctx->saved_data["seed"].toInt()),
          static_cast<uint32_t>(ctx->saved_data["below"].toInt()),
          static_cast<float>(ctx->saved_data["scale"].toDouble())};
}

// Backward of the plain and residual forms: the same rule applied to the
// incoming gradient.
torch::Tensor kept_grad(const torch::Tensor& grad, const KeepRule& rule,
                        torch::ScalarType dtype) {
  return apply_rule(as_float(grad), torch::Tensor(), rule, Form::plain).to(dtype);
}

struct DropoutFunction : torch::autograd::Function<DropoutFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, KeepRule rule) {
    save_rule(ctx, rule);
    return apply_rule(as_float(x), torch::Tensor(), rule, Form::plain).to(x.scalar_type());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {kept_grad(grads[0], saved_rule(ctx), grads[0].scalar_type()), torch::Tensor()};
  }
};

struct DropoutAddFunction : torch::autograd::Function<DropoutAddFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& residual, KeepRule rule) {
    save_rule(ctx, rule);
    ctx->saved_data["residual_dtype"] = static_cast<int64_t>(residual.scalar_type());
    const auto dtype = at::promote_types(x.scalar_type(), residual.scalar_type());
    return apply_rule(as_float(x), as_float(residual), rule, Form::add).to(dtype);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto residual_dtype =
        static_cast<torch::ScalarType>(ctx->saved_data["residual_dtype"].toInt());
    return {kept_grad(grads[0], saved_rule(ctx), grads[0].scalar_type()),
            grads[0].to(residual_dtype), torch::Tensor()};
  }
};

struct ReluDropoutFunction : torch::autograd::Function<ReluDropoutFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, KeepRule rule) {
    auto out = apply_rule(as_float(x), torch::Tensor(), rule, Form::relu).to(x.scalar_type());
    ctx->saved_data["scale"] = static_cast<double>(rule.scale);
    ctx->save_for_backward({out});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto out = as_float(ctx->get_saved_variables()[0]);
    const auto grad = as_float(grads[0]);
    auto grad_in = torch::empty_like(grad);
    const float scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const int64_t n = grad.numel();
    const float* pg = grad.data_ptr<float>();
    const float* po = out.data_ptr<float>();
    float* pi = grad_in.data_ptr<float>();
    at::parallel_for(0, n, kBlock, [&](int64_t begin, int64_t end) {
      relu_dropout_grad(pg + begin, po + begin, pi + begin, end - begin, scale);
    });
    return {grad_in.to(grads[0].scalar_type()), torch::Tensor()};
  }
};

// The rule for `rate`, or nothing when this rate drops no element (below
// 2^-33 the keep threshold rounds to 2^32).
std::optional<KeepRule> keep_rule(double rate) {
  const double below = std::nearbyint((1.0 - rate) * 4294967296.0);
  if (below > 4294967295.0) return std::nullopt;
  return KeepRule{draw_seed(), static_cast<uint32_t>(below),
                  static_cast<float>(1.0 / (1.0 - rate))};
}

// float64 is left to torch::dropout: the kernels would round it to float32.
bool fused(const torch::Tensor& x, double rate) {
  const auto t = x.scalar_type();
  return x.device().is_cpu() && rate < 1.0 &&
         (t == torch::kFloat || t == torch::kBFloat16 || t == torch::kHalf);
}

}  // namespace

torch::Tensor dropout(const torch::Tensor& x, double rate, bool training) {
  if (!training || rate <= 0.0) return x;
  if (!fused(x, rate)) return torch::dropout(x, rate, training);
  const auto rule = keep_rule(rate);
  if (!rule) return x * (1.0 / (1.0 - rate));
  return DropoutFunction::apply(x, *rule);
}

torch::Tensor dropout_add(const torch::Tensor& x, const torch::Tensor& residual, double rate,
                          bool training) {
  if (!training || rate <= 0.0) return x + residual;
  TORCH_CHECK(x.sizes() == residual.sizes(), "dropout_add: x ", x.sizes(), " and residual ",
              residual.sizes(), " differ in shape");
  if (!fused(x, rate) || !fused(residual, rate))
    return torch::dropout(x, rate, training) + residual;
  const auto rule = keep_rule(rate);
  if (!rule) return x * (1.0 / (1.0 - rate)) + residual;
  return DropoutAddFunction::apply(x, residual, *rule);
}

torch::Tensor relu_dropout(const torch::Tensor& x, double rate, bool training) {
  if (!training || rate <= 0.0) return torch::relu(x);
  if (!fused(x, rate)) return torch::dropout(torch::relu(x), rate, training);
  const auto rule = keep_rule(rate);
  if (!rule) return torch::relu(x) * (1.0 / (1.0 - rate));
  return ReluDropoutFunction::apply(x, *rule);
}

}  // namespace t2t
