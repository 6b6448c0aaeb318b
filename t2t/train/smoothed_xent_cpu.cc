#include "t2t/train/smoothed_xent_cpu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <vector>

#include "t2t/kernels/fast_math.h"

namespace t2t {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per task: a row of a 32k vocabulary is already 128 KiB of work.
constexpr int64_t kRowGrain = 4;

T2T_VECTOR_CLONES
float row_sum(const float* x, int64_t n) {
  float partial[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t v = 0;
  for (; v + 16 <= n; v += 16)
    for (int j = 0; j < 16; ++j) partial[j] += x[v + j];
  for (; v < n; ++v) partial[v & 15] += x[v];
  float total = 0;
  for (int j = 0; j < 16; ++j) total += partial[j];
  return total;
}

// d loss / d x[v] = scale * (softmax(x)[v] - low), before the gold id's
// correction; x[v] - lse <= 0 always.
T2T_VECTOR_CLONES
void row_grad(const float* x, int64_t n, float lse, float scale, float low, float* out) {
  for (int64_t v = 0; v < n; ++v) out[v] = scale * (exp_nonpositive(x[v] - lse) - low);
}

struct SmoothedXentFunction : torch::autograd::Function<SmoothedXentFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits_in,
                            const at::Tensor& ids_in, double confidence, double low) {
    const auto logits = logits_in.contiguous();
    const auto ids = ids_in.contiguous();
    const int64_t rows = logits.size(0), vocab = logits.size(1);
    auto lse = at::zeros({rows}, logits.options());
    const float* x = logits.data_ptr<float>();
    const int64_t* id = ids.data_ptr<int64_t>();
    float* lse_out = lse.data_ptr<float>();
    // Per-row losses summed in row order afterwards: the same total for any
    // thread count.
    std::vector<double> row_loss(static_cast<size_t>(rows), 0.0);
    at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (id[r] == 0) continue;
        const float* row = x + r * vocab;
        const auto [best, total] = max_exp_sum(row, vocab);
        const double log_z = static_cast<double>(best) + std::log(static_cast<double>(total));
        lse_out[r] = static_cast<float>(log_z);
        // -sum_v q_v (x_v - log_z) with sum_v q_v = 1
        row_loss[r] = log_z - ((confidence - low) * row[id[r]] + low * row_sum(row, vocab));
      }
    });
    double sum = 0;
    for (double l : row_loss) sum += l;
    ctx->save_for_backward({logits, ids, lse});
    ctx->saved_data["confidence"] = confidence;
    ctx->saved_data["low"] = low;
    return at::scalar_tensor(sum, logits.options());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &logits = saved[0], &ids = saved[1], &lse = saved[2];
    const float confidence = static_cast<float>(ctx->saved_data["confidence"].toDouble());
    const float low = static_cast<float>(ctx->saved_data["low"].toDouble());
    const float scale = grads[0].item<float>();
    const int64_t rows = logits.size(0), vocab = logits.size(1);
    auto grad = at::empty_like(logits);
    const float* x = logits.data_ptr<float>();
    const int64_t* id = ids.data_ptr<int64_t>();
    const float* lse_in = lse.data_ptr<float>();
    float* g = grad.data_ptr<float>();
    at::parallel_for(0, rows, kRowGrain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float* out = g + r * vocab;
        if (id[r] == 0) {
          std::fill(out, out + vocab, 0.0f);
          continue;
        }
        row_grad(x + r * vocab, vocab, lse_in[r], scale, low, out);
        out[id[r]] -= scale * (confidence - low);
      }
    });
    return {grad, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor smoothed_xent_sum_cpu(const at::Tensor& logits, const at::Tensor& ids,
                                 double confidence, double low) {
  TORCH_CHECK(logits.dim() == 2 && logits.scalar_type() == at::kFloat &&
                  logits.device().is_cpu() && ids.dim() == 1 && ids.size(0) == logits.size(0) &&
                  ids.scalar_type() == at::kLong,
              "smoothed_xent_sum_cpu: float32 CPU logits [rows, vocab] and int64 ids [rows], got ",
              logits.sizes(), " ", logits.scalar_type(), " and ", ids.sizes(), " ",
              ids.scalar_type());
  if (ids.numel() > 0) {
    const auto [lo, hi] = at::aminmax(ids);
    TORCH_CHECK(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < logits.size(1),
                "smoothed_xent_sum_cpu: ids outside [0, ", logits.size(1), ")");
  }
  return SmoothedXentFunction::apply(logits, ids, confidence, low);
}

}  // namespace t2t
