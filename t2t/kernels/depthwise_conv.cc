#include "t2t/kernels/depthwise_conv.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>

namespace t2t {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y[b, t, :] = sum_k x[b, t + k, :] * wt[k, :]; wt [width, channels].
torch::Tensor forward_cpu(const torch::Tensor& x, const torch::Tensor& wt) {
  const int64_t batch = x.size(0), length = x.size(1), channels = x.size(2);
  const int64_t width = wt.size(0), out_length = length - width + 1;
  auto y = torch::zeros({batch, out_length, channels}, x.options());
  const float* px = x.data_ptr<float>();
  const float* pw = wt.data_ptr<float>();
  float* py = y.data_ptr<float>();
  at::parallel_for(0, batch * out_length, 16, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / out_length, t = row % out_length;
      float* out = py + row * channels;
      for (int64_t k = 0; k < width; ++k) {
        const float* in = px + (b * length + t + k) * channels;
        const float* wk = pw + k * channels;
        for (int64_t c = 0; c < channels; ++c) out[c] += in[c] * wk[c];
      }
    }
  });
  return y;
}

// gx[b, t + k, :] += gy[b, t, :] * wt[k, :]: each input row gathers the
// output rows that read it, so rows are written by one thread only.
torch::Tensor grad_input_cpu(const torch::Tensor& gy, const torch::Tensor& wt, int64_t length) {
  const int64_t batch = gy.size(0), out_length = gy.size(1), channels = gy.size(2);
  const int64_t width = wt.size(0);
  auto gx = torch::zeros({batch, length, channels}, gy.options());
  const float* pg = gy.data_ptr<float>();
  const float* pw = wt.data_ptr<float>();
  float* px = gx.data_ptr<float>();
  at::parallel_for(0, batch * length, 16, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / length, i = row % length;
      float* out = px + row * channels;
      // Output t reads input i at k = i - t.
      for (int64_t k = 0; k < width; ++k) {
        const int64_t t = i - k;
        if (t < 0 || t >= out_length) continue;
        const float* g = pg + (b * out_length + t) * channels;
        const float* wk = pw + k * channels;
        for (int64_t c = 0; c < channels; ++c) out[c] += g[c] * wk[c];
      }
    }
  });
  return gx;
}

// gwt[k, :] = sum_{b, t} gy[b, t, :] * x[b, t + k, :], split by channels
// so that each thread owns its sums.
torch::Tensor grad_weight_cpu(const torch::Tensor& gy, const torch::Tensor& x, int64_t width) {
  const int64_t batch = gy.size(0), out_length = gy.size(1), channels = gy.size(2);
  const int64_t length = x.size(1);
  auto gw = torch::zeros({width, channels}, gy.options());
  const float* pg = gy.data_ptr<float>();
  const float* px = x.data_ptr<float>();
  float* pw = gw.data_ptr<float>();
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (channels + kBlock - 1) / kBlock;
  at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t c0 = block * kBlock, c1 = std::min(channels, c0 + kBlock);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < out_length; ++t) {
          const float* g = pg + (b * out_length + t) * channels;
          for (int64_t k = 0; k < width; ++k) {
            const float* in = px + (b * length + t + k) * channels;
            float* out = pw + k * channels;
            for (int64_t c = c0; c < c1; ++c) out[c] += g[c] * in[c];
          }
        }
    }
  });
  return gw;
}

struct DepthwiseConvFunction : torch::autograd::Function<DepthwiseConvFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w) {
    const auto xc = x.contiguous();
    const auto wt = w.reshape({w.size(0), w.size(2)}).t().contiguous();  // [width, channels]
    ctx->save_for_backward({xc, wt});
    return forward_cpu(xc, wt);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& wt = saved[1];
    const auto gy = grads[0].contiguous();
    const auto gx = grad_input_cpu(gy, wt, x.size(1));
    const auto gw = grad_weight_cpu(gy, x, wt.size(0));  // [width, channels]
    return {gx, gw.t().reshape({wt.size(1), 1, wt.size(0)})};
  }
};

}  // namespace

torch::Tensor depthwise_conv1d(const torch::Tensor& x, const torch::Tensor& w) {
  TORCH_CHECK(x.dim() == 3 && w.dim() == 3 && w.size(1) == 1 && w.size(0) == x.size(2),
              "depthwise_conv1d: x [batch, length, channels] and w [channels, 1, width], got ",
              x.sizes(), " and ", w.sizes());
  TORCH_CHECK(x.size(1) >= w.size(2), "depthwise_conv1d: ", x.size(1),
              " positions for a width of ", w.size(2));
  if (x.device().is_cpu() && w.device().is_cpu() && x.scalar_type() == torch::kFloat &&
      w.scalar_type() == torch::kFloat)
    return DepthwiseConvFunction::apply(x, w);
  namespace F = torch::nn::functional;
  return F::conv1d(x.transpose(1, 2), w.to(x.scalar_type()),
                   F::Conv1dFuncOptions().groups(x.size(2)))
      .transpose(1, 2);
}

}  // namespace t2t
