#include "t2t/search/sampling.h"

#include <torch/torch.h>

#include <limits>

#include "t2t/core/error.h"
#include "t2t/core/hash.h"

namespace t2t {

double sample_uniform(uint64_t seed, int64_t key, int64_t step) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<uint64_t>(key));
  h = splitmix64(h ^ static_cast<uint64_t>(step));
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // the top 53 bits: exact in a double
}

at::Tensor sample_ids(const at::Tensor& logits, const SamplingOptions& options,
                      const at::Tensor& uniforms) {
  TORCH_CHECK(logits.dim() == 2, "sample_ids: logits must be [rows, vocab], got ", logits.sizes());
  if (!options.draws()) return logits.argmax(1);
  if (!uniforms.defined() || uniforms.dim() != 1 || uniforms.size(0) != logits.size(0))
    throw Error("sample_ids: one uniform number per row of the logits is needed");
  const int64_t vocab = logits.size(1);
  auto scaled = logits.to(torch::kDouble) / options.temperature;
  const int64_t k = options.keep_top_k;
  if (k > 0 && k < vocab) {
    const auto kth = std::get<0>(scaled.topk(k, 1)).select(1, k - 1).unsqueeze(1);
    scaled = scaled.masked_fill(scaled < kth, -std::numeric_limits<double>::infinity());
  }
  const auto probs = torch::softmax(scaled, 1);
  const auto cdf = probs.cumsum(1);
  const auto target =
      uniforms.to(cdf.device(), torch::kDouble).unsqueeze(1) * cdf.select(1, vocab - 1).unsqueeze(1);
  // The first id whose cumulative probability is above the target: an id of
  // probability 0 repeats its predecessor's sum and so is never the first.
  const auto ids = torch::searchsorted(cdf, target, /*out_int32=*/false, /*right=*/true)
                       .squeeze(1)
                       .clamp_max(vocab - 1);
  // A target rounded up to the total (u within 2^-53 of 1) finds none: it
  // then takes the likeliest id rather than a clamped impossible one.
  const auto picked = probs.gather(1, ids.unsqueeze(1)).squeeze(1);
  return torch::where(picked > 0, ids, probs.argmax(1));
}

}  // namespace t2t
