#include "t2t/kernels/int8_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <mutex>

#include "t2t/core/error.h"

namespace t2t {
namespace {

// FBGEMM is the engine for x86 servers; oneDNN's "x86" and QNNPACK (ARM)
// are taken when it is missing. Chosen once, process-wide, as LibTorch's
// quantized engine is a global setting.
std::string select_engine() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    const auto& engines = at::globalContext().supportedQEngines();
    for (const auto preferred : {at::QEngine::FBGEMM, at::QEngine::X86, at::QEngine::QNNPACK}) {
      if (std::find(engines.begin(), engines.end(), preferred) != engines.end()) {
        at::globalContext().setQEngine(preferred);
        return;
      }
    }
    reason = "this LibTorch has no quantized engine (FBGEMM, x86 or QNNPACK) for this CPU";
  });
  return reason;
}

const c10::OperatorHandle& linear_prepack() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  return handle;
}

const c10::OperatorHandle& linear_dynamic() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
  return handle;
}

// LibTorch (2.15 here) warns that quantized tensors are deprecated each
// time one is made; what t2t does with them is said once, where it is
// chosen (--quantize), so the warning is kept out of the decoder's log.
class QuietDeprecation : public c10::WarningHandler {
 public:
  QuietDeprecation() : next_(c10::WarningUtils::get_warning_handler()) {}
  void process(const c10::Warning& warning) override {
    if (warning.msg().find("deprecated") == std::string::npos) next_->process(warning);
  }

 private:
  c10::WarningHandler* next_;
};

}  // namespace

std::string int8_unsupported_reason() {
  return int8_kernel_runs(Int8Kernel::best) ? std::string() : select_engine();
}

Int8Weights quantize_rows(const at::Tensor& weight, const std::string& what) {
  if (!weight.defined() || weight.dim() != 2 || weight.scalar_type() != at::kFloat ||
      !weight.device().is_cpu())
    throw Error(what + ": int8 quantization takes a float32 [out, in] weight on the CPU, got " +
                (weight.defined() ? weight.toString() + " " + c10::str(weight.sizes())
                                  : std::string("none")));
  // Symmetric per-row scales: each output row keeps its own range, which
  // matters for embedding-sized projections whose rows differ widely.
  const at::Tensor w = weight.detach().contiguous();
  const at::Tensor scales = (w.abs().amax(1) / 127.0).clamp_min(1e-12);
  // LibTorch's own rounding, so that a saved int8 model decodes exactly as
  // one quantized at load.
  QuietDeprecation quiet;
  const c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  const at::Tensor q = at::quantize_per_channel(w, scales.to(at::kDouble),
                                                at::zeros({w.size(0)}, at::kLong), 0, at::kQInt8);
  return {q.int_repr().contiguous(), scales.contiguous()};
}

Int8Linear::Int8Linear(const at::Tensor& weight, const at::Tensor& bias, const std::string& what)
    : Int8Linear(quantize_rows(weight, what), bias, what) {}

Int8Linear::Int8Linear(const Int8Weights& weights, const at::Tensor& bias,
                       const std::string& what) {
  const at::Tensor& v = weights.values;
  const at::Tensor& s = weights.scales;
  if (!v.defined() || v.dim() != 2 || v.scalar_type() != at::kChar || !s.defined() ||
      s.dim() != 1 || s.scalar_type() != at::kFloat || s.size(0) != v.size(0))
    throw Error(what + ": int8 weights must be int8 values [out, in] with float32 scales [out], "
                "got " + (v.defined() ? v.toString() + " " + c10::str(v.sizes()) : "none") +
                " and " + (s.defined() ? s.toString() + " " + c10::str(s.sizes()) : "none"));
  out_ = v.size(0);
  in_ = v.size(1);
  // t2t's kernels where the CPU has one (int8_panels.h); LibTorch's
  // dynamic quantized linear elsewhere.
  panels_ = Int8PanelWeight::pack(weights, bias);
  if (panels_) return;
  if (const std::string why = select_engine(); !why.empty()) throw Error(what + ": " + why);
  at::Tensor q;
  {
    QuietDeprecation quiet;
    const c10::WarningUtils::WarningHandlerGuard guard(&quiet);
    q = at::_make_per_channel_quantized_tensor(v.contiguous(), s.to(at::kDouble),
                                               at::zeros({out_}, at::kLong), 0);
  }
  std::optional<at::Tensor> b;
  if (bias.defined()) b = bias.detach().to(at::kFloat).contiguous();
  torch::jit::Stack stack{q, b};
  linear_prepack().callBoxed(&stack);
  packed_ = std::move(stack.at(0));
}

std::shared_ptr<const Int8Linear> Int8Linear::select_outputs(const at::Tensor& ids) const {
  if (!panels_) return nullptr;
  std::shared_ptr<Int8Linear> out(new Int8Linear());
  out->in_ = in_;
  out->out_ = ids.numel();
  out->panels_ = panels_->select_outputs(ids);
  return out;
}

at::Tensor Int8Linear::operator()(const at::Tensor& x) const {
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.size(-1) != in_)
    throw Error("an int8 linear layer of " + std::to_string(in_) + " inputs takes float32 CPU "
                "tensors [..., " + std::to_string(in_) + "], got " + x.toString() + " " +
                c10::str(x.sizes()));
  auto sizes = x.sizes().vec();
  sizes.back() = out_;
  if (panels_) return panels_->apply(x.reshape({-1, in_}).contiguous()).view(sizes);
  // reduce_range: activations use 7 bits, so that FBGEMM's 16-bit
  // accumulation of pairs of products cannot saturate on CPUs without VNNI.
  torch::jit::Stack stack{x.reshape({-1, in_}).contiguous(), packed_, true};
  linear_dynamic().callBoxed(&stack);
  return stack.at(0).toTensor().view(sizes);
}

}  // namespace t2t
