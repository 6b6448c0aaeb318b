#include "t2t/train/train_step.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "t2t/core/cuda_graph.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/distributed/communicator.h"
#include "t2t/distributed/gradient_reducer.h"
#include "t2t/kernels/cpu_features.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/fused_adam.h"
#include "t2t/train/loss.h"

namespace t2t {

namespace {

// LibTorch's clip_grad_norm_ (L2): the same norms (one multi-tensor kernel
// for all of them) and the same scaling, but the norm comes back as a
// tensor: LibTorch's reads it, which makes the host wait for the device
// mid-step. max_norm <= 0: no clipping, the norm only.
at::Tensor clip_gradients(const std::vector<at::Tensor>& grads, double max_norm) {
  if (grads.empty()) return torch::zeros({});
  const std::vector<at::Tensor> norms = at::_foreach_norm(grads, 2);
  const at::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
  if (max_norm > 0) {
    const at::Tensor coef = torch::clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
    at::_foreach_mul_(grads, coef);
  }
  return total;
}

// Runs the forward pass (and the loss) under LibTorch's autocast for the
// scope's lifetime, so matrix products run in bf16/fp16 while the weights,
// the optimizer and the loss reduction stay in float32.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, std::optional<at::ScalarType> dtype)
      : device_(device), on_(dtype.has_value()) {
    if (!on_) return;
    previous_ = at::autocast::is_autocast_enabled(device_);
    at::autocast::set_autocast_dtype(device_, *dtype);
    at::autocast::set_autocast_enabled(device_, true);
  }
  ~AutocastScope() {
    if (!on_) return;
    at::autocast::set_autocast_enabled(device_, previous_);
    at::autocast::clear_cache();
  }

 private:
  c10::DeviceType device_;
  bool on_;
  bool previous_ = false;
};

// TrainStep skips a non-finite step on the device, which takes
// make_optimizer's Adam.
FusedAdam& fused_adam(torch::optim::Optimizer& optimizer) {
  auto* fused = dynamic_cast<FusedAdam*>(&optimizer);
  if (fused == nullptr) throw Error("TrainStep needs the optimizer make_optimizer() builds");
  return *fused;
}

}  // namespace

// One shape's buffers: the batch is copied into them, and the step (or its
// graph) reads them; `out` is what the step (or graph) last wrote.
struct TrainStep::StaticShape {
  at::Tensor inputs, targets;  // [rows, width] int64 on the device, zero-padded
  at::Tensor lr_t;             // float32 scalar: FusedAdam::corrected_lr
  StepOutcome out;
  std::unique_ptr<CudaGraph> graph;
  int64_t runs = 0;
};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(T2TModel& model, const HParams& hp) {
  const std::string name = to_lower(hp.get_string("optimizer"));
  // multistep_adam is T2T's name for Adam with gradient accumulation, which
  // TrainStep does for any optimizer.
  if (name != "adam" && name != "multistep_adam")
    throw Error("optimizer '" + hp.get_string("optimizer") +
                "' is not supported yet; use adam (hparams optimizer=adam)");
  auto opts = torch::optim::AdamOptions(0.0)
                  .betas({hp.get_float("optimizer_adam_beta1"), hp.get_float("optimizer_adam_beta2")})
                  .eps(hp.get_float("optimizer_adam_epsilon"))
                  .weight_decay(hp.get_float("weight_decay"));
  return std::make_unique<FusedAdam>(model.parameters(), opts);
}

namespace {

// Why fp16 cannot run on `device`, as an OptionError's message.
std::string fp16_needs_cuda(const c10::Device& device) {
  return "{mixed_precision}=fp16 needs a CUDA device ({device}=" + device.str() +
         "); on a CPU use {mixed_precision}=bf16 (fast where the CPU has AVX512_BF16 or AMX) or "
         "none";
}

void check_mode(const std::string& mode) {
  if (mode != "none" && mode != "bf16" && mode != "fp16")
    throw OptionError("mixed_precision",
                      "{mixed_precision}=" + mode + " is not one of none, bf16, fp16");
}

}  // namespace

std::optional<c10::ScalarType> autocast_dtype(const std::string& mode, const c10::Device& device) {
  check_mode(mode);
  if (mode == "none") return std::nullopt;
  if (mode == "bf16") return at::kBFloat16;
  if (!device.is_cuda()) throw OptionError("mixed_precision", fp16_needs_cuda(device));
  return at::kHalf;
}

std::string effective_mixed_precision(const HParams& hp, const std::string& flag) {
  check_mode(flag);
  const std::string dtype =
      hp.has("activation_dtype") ? hp.get_string("activation_dtype") : std::string("float32");
  std::string asked;
  if (dtype == "bfloat16") asked = "bf16";
  else if (dtype == "float16") asked = "fp16";
  else if (dtype != "float32")
    throw OptionError("mixed_precision", "hparam activation_dtype=" + dtype +
                                             " is not one of float32, bfloat16 (as "
                                             "{mixed_precision}=bf16), float16 (as "
                                             "{mixed_precision}=fp16)");
  if (asked.empty() || flag == "none" || flag == asked) return asked.empty() ? flag : asked;
  throw OptionError("mixed_precision",
                    "hparam activation_dtype=" + dtype + " asks for {mixed_precision}=" + asked +
                        ", but {mixed_precision}=" + flag +
                        " was given: drop one of them, or make them agree (bfloat16 = bf16, "
                        "float16 = fp16, float32 = the option decides)");
}

TrainStep::TrainStep(T2TModel& model, torch::optim::Optimizer& optimizer, const HParams& hp,
                     const c10::Device& device, const std::string& mixed_precision,
                     Communicator* communicator, size_t bucket_bytes)
    : model_(model),
      optimizer_(fused_adam(optimizer)),
      device_(device),
      stats_(device),
      communicator_(communicator),
      label_smoothing_(hp.get_float("label_smoothing")),
      clip_norm_(hp.get_float("clip_grad_norm")) {
  if (hp.has("guided_alignment_weight")) alignment_weight_ = hp.get_float("guided_alignment_weight");
  if (alignment_weight_ < 0 || !std::isfinite(alignment_weight_))
    throw OptionError("hparams", "guided_alignment_weight=" + fmt::format("{:g}", alignment_weight_) +
                                     " must be 0 (off) or positive");
  if (alignment_weight_ > 0) {
    if (!model_.reports_attention())
      throw OptionError("hparams", "guided_alignment_weight=" + fmt::format("{:g}", alignment_weight_) +
                                       ": this model does not report its encoder-decoder "
                                       "attention, which guided alignment trains; set it to 0");
    alignment_probe_.layer = hp.get_int("guided_alignment_layer");
    alignment_probe_.head = hp.get_int("guided_alignment_head");
  }
  const std::string mode = effective_mixed_precision(hp, mixed_precision);
  if (mode == mixed_precision) {
    autocast_ = autocast_dtype(mode, device);
  } else {
    // The hparam asked for it: errors and the log line name the hparam.
    const std::string dtype = hp.get_string("activation_dtype");
    if (mode == "fp16" && !device.is_cuda())
      throw OptionError("mixed_precision",
                        "hparam activation_dtype=" + dtype + " (" + fp16_needs_cuda(device) + ")");
    autocast_ = autocast_dtype(mode, device);
    spdlog::info("hparam activation_dtype={}: {} autocast, as mixed_precision={}", dtype, mode,
                 mode);
  }
  if (autocast_ == at::kBFloat16 && device.is_cpu() && !cpu_computes_bf16())
    spdlog::warn("bf16 autocast on a CPU without AVX512_BF16 or AMX: LibTorch emulates the bf16 "
                 "products, and on an AVX2 CPU transformer_tiny trained 13x slower than in "
                 "float32; mixed_precision=none (and activation_dtype=float32) is faster here");
  scaling_ = autocast_ == at::kHalf;
  scale_ = torch::full({}, scaling_ ? 32768.0 : 1.0,
                       torch::TensorOptions().dtype(torch::kFloat).device(device_));
  good_steps_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device_));
  if (communicator_ && communicator_->size() > 1) {
    std::vector<at::Tensor> params;
    for (auto& p : model_.parameters())
      if (p.requires_grad()) params.push_back(p);
    reducer_ = std::make_unique<GradientReducer>(std::move(params), *communicator_, bucket_bytes);
  }
}

TrainStep::~TrainStep() = default;

bool TrainStep::restore_loss_scale(double scale, int64_t good_steps) {
  if (!(scale > 0) || !std::isfinite(scale) || good_steps < 0)
    throw Error("a saved fp16 loss scale of " + std::to_string(scale) + " (" +
                std::to_string(good_steps) + " good steps) cannot be taken up");
  if (!scaling_) return false;
  scale_.fill_(scale);
  good_steps_.fill_(good_steps);
  return true;
}

StepOutcome TrainStep::queue_step(const std::vector<Batch>& micro_batches, double lr) {
  if (micro_batches.empty()) throw Error("TrainStep::run needs at least one batch");
  if (static_ && micro_batches.size() == 1 && !reducer_) return queue_static_step(micro_batches[0], lr);
  for (auto& group : optimizer_.param_groups()) group.options().set_lr(lr);
  model_.train();
  optimizer_.zero_grad();

  // The loss is divided by this worker's token count before backward (to
  // keep fp16 gradients in range); the reducer multiplies it back before
  // the sum and divides by every worker's total after.
  double local_tokens = 0, local_inputs = 0;
  for (const Batch& b : micro_batches) {
    local_tokens += static_cast<double>(b.target_tokens);
    local_inputs += static_cast<double>(b.input_tokens);
  }
  const double local_norm = std::max(local_tokens, 1.0);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device_);

  // The losses are summed on the device, in float64 as the host would.
  at::Tensor loss_total;
  at::Tensor alignment;  // guided alignment: [cost, aligned positions]
  at::Tensor counts;
  std::unique_ptr<CollectiveWork> counting;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    const Batch& batch = micro_batches[m];
    auto inputs = batch.inputs.to(device_, /*non_blocking=*/true);
    auto targets = batch.targets.to(device_, /*non_blocking=*/true);
    LossSum l;
    at::Tensor trained;
    {
      AutocastScope autocast(device_.type(), autocast_);
      // Padded positions weigh nothing in the loss: only the labelled ones
      // are projected onto the vocabulary.
      at::Tensor logits, attention;
      if (alignment_weight_ > 0)
        std::tie(logits, attention) =
            model_.forward_labelled_with_attention(inputs, targets, alignment_probe_);
      else
        logits = model_.forward_labelled(inputs, targets);
      const auto labels = targets.masked_select(targets.ne(0));
      l = smoothed_cross_entropy(logits.unsqueeze(0), labels.unsqueeze(0), label_smoothing_);
      // The alignment cost trains, but the loss reported stays the
      // translation's (comparable with runs without it).
      trained = l.loss_sum;
      if (alignment_weight_ > 0) {
        if (!batch.alignment.defined())
          throw OptionError("hparams",
                            "guided_alignment_weight=" + fmt::format("{:g}", alignment_weight_) +
                                " needs word alignments in the training shards, which have none: "
                                "write them with t2t-datagen's train_alignments option "
                                "(a Pharaoh file parallel to the training data)");
        const LossSum cost = guided_alignment_cost(
            attention, batch.alignment.to(device_, /*non_blocking=*/true));
        trained = trained + alignment_weight_ * cost.loss_sum;
        const auto c = torch::stack({cost.loss_sum.detach(), cost.weight_sum}).to(torch::kFloat64);
        alignment = alignment.defined() ? alignment + c : c;
      }
    }
    const at::Tensor loss = l.loss_sum.detach().to(torch::kFloat64);
    loss_total = loss_total.defined() ? loss_total + loss : loss;
    if (reducer_ && m + 1 == micro_batches.size()) {
      // Loss and token counts travel together, sent before the first
      // gradient bucket so that every worker issues its collectives in the
      // same order. A NaN loss anywhere makes the sum NaN everywhere, so
      // every worker skips the same steps.
      const auto on_device = torch::TensorOptions().dtype(torch::kFloat64).device(loss_total.device());
      counts = torch::stack({torch::scalar_tensor(local_tokens, on_device), loss_total,
                             torch::scalar_tensor(local_inputs, on_device)})
                   .to(communicator_->device());
      counting = communicator_->all_reduce_sum_async(counts);
      reducer_->arm(local_tokens);
    }
    if (scaling_)
      (trained * (scale_ / local_norm)).backward();
    else
      (trained * (1.0 / local_norm)).backward();
  }

  StepOutcome out;
  std::vector<at::Tensor> grads;
  for (auto& p : model_.parameters())
    if (p.grad().defined()) grads.push_back(p.mutable_grad());
  if (reducer_) {
    counting->wait();
    reducer_->finish(torch::clamp_min(counts.select(0, 0), 1.0).to(device_));
    const at::Tensor summed = counts.to(device_);
    out.tokens = summed.select(0, 0);
    loss_total = summed.select(0, 1);
    out.input_tokens = summed.select(0, 2);
  } else {
    out.tokens = torch::full({}, local_tokens, f64);
    out.input_tokens = torch::full({}, local_inputs, f64);
  }
  if (alignment.defined()) {
    out.alignment_cost = alignment.select(0, 0);
    out.aligned_positions = alignment.select(0, 1);
  }
  const at::Tensor found_inf = settle(grads, loss_total, out);
  optimizer_.step_unless(found_inf);
  stats_.add(out);
  return out;
}

at::Tensor TrainStep::settle(const std::vector<at::Tensor>& grads, const at::Tensor& loss_total,
                             StepOutcome& out) {
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device_);
  if (scaling_ && !grads.empty()) at::_foreach_mul_(grads, at::reciprocal(scale_));

  // The norm is needed for clipping anyway, and checking it also catches an
  // overflow in backward that a finite loss would hide.
  const at::Tensor norm = clip_gradients(grads, clip_norm_).to(torch::kFloat64);
  const at::Tensor loss_finite = at::isfinite(loss_total);
  const at::Tensor norm_finite = at::isfinite(norm);
  const at::Tensor found_inf = at::logical_not(at::logical_and(loss_finite, norm_finite));
  if (scaling_) {
    // A finite loss with a non-finite gradient is an fp16 overflow: T2T's
    // schedule halves the scale (not below 1) and doubles it after 2000
    // steps without one.
    const at::Tensor overflow = at::logical_and(loss_finite, at::logical_not(norm_finite));
    scale_.copy_(at::where(overflow, at::clamp_min(scale_ * 0.5, 1.0), scale_));
    good_steps_.copy_(at::where(overflow, at::zeros_like(good_steps_), good_steps_ + 1));
    const at::Tensor grow = good_steps_.ge(2000);
    scale_.copy_(at::where(grow, scale_ * 2.0, scale_));
    good_steps_.copy_(at::where(grow, at::zeros_like(good_steps_), good_steps_));
    out.overflow = overflow.to(torch::kFloat64);
  } else {
    out.overflow = torch::zeros({}, f64);
  }
  out.nonfinite = found_inf.to(torch::kFloat64) - out.overflow;
  out.loss_sum = loss_total;
  out.grad_norm = norm;
  return found_inf.to(torch::kFloat);
}

void TrainStep::queue(const std::vector<Batch>& micro_batches, double lr) {
  (void)queue_step(micro_batches, lr);
}

StepResult TrainStep::run(const std::vector<Batch>& micro_batches, double lr) {
  const StepOutcome o = queue_step(micro_batches, lr);
  const at::Tensor values = torch::stack({o.loss_sum, o.tokens, o.input_tokens, o.grad_norm,
                                          o.overflow, o.nonfinite})
                                .cpu();
  const double* v = values.data_ptr<double>();
  StepResult r;
  r.loss_sum = v[0];
  r.tokens = v[1];
  r.input_tokens = v[2];
  r.grad_norm = v[3];
  r.overflow = v[4] > 0;
  r.nonfinite = v[5] > 0;
  r.applied = !r.overflow && !r.nonfinite;
  return r;
}

// ---- static shapes and CUDA graphs -----------------------------------------

void TrainStep::use_static_shapes(const BatchingScheme& scheme, bool graphs) {
  if (alignment_weight_ > 0)
    throw OptionError("hparams", "guided_alignment_weight=" + fmt::format("{:g}", alignment_weight_) +
                                     " trains with batches of their own shapes: it cannot run "
                                     "with static shapes or CUDA graphs");
  if (graphs && !device_.is_cuda())
    throw Error("CUDA graphs need a CUDA device; this step runs on " + device_.str());
  static_ = true;
  graphs_ = graphs;
  scheme_ = scheme;
}

size_t TrainStep::static_shapes() const { return shapes_.size(); }

size_t TrainStep::captured_graphs() const {
  size_t n = 0;
  for (const auto& [key, shape] : shapes_) n += shape->graph != nullptr;
  return n;
}

StepOutcome TrainStep::queue_static_step(const Batch& batch, double lr) {
  // The bucket's upper bound: every batch of a bucket has its rows (but
  // the last of a shard) and fits its width. The last bucket is open-ended
  // (up to batch_size tokens without max_length): its batches round their
  // own width up to a multiple of 8.
  const int64_t in_width = batch.inputs.size(1), out_width = batch.targets.size(1);
  const int64_t longest = std::max(in_width, out_width);
  const size_t bucket = scheme_.bucket(longest);
  const int64_t width = bucket < scheme_.boundaries.size() ? scheme_.boundaries[bucket] - 1
                                                           : (longest + 7) / 8 * 8;
  const std::pair<int64_t, int64_t> key{batch.size(), width};
  auto& slot = shapes_[key];
  if (!slot) {
    slot = std::make_unique<StaticShape>();
    const auto ids = torch::TensorOptions().dtype(torch::kLong).device(device_);
    slot->inputs = torch::zeros({batch.size(), in_width == 0 ? 0 : width}, ids);
    slot->targets = torch::zeros({batch.size(), width}, ids);
    slot->lr_t = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device_));
  }
  StaticShape& shape = *slot;
  // Copies and fills queued on the device: nothing waits.
  const auto place = [](at::Tensor& into, const at::Tensor& from) {
    const int64_t w = from.size(1);
    if (into.size(1) == 0) return;
    into.narrow(1, 0, w).copy_(from, /*non_blocking=*/true);
    if (w < into.size(1)) into.narrow(1, w, into.size(1) - w).zero_();
  };
  place(shape.inputs, batch.inputs);
  place(shape.targets, batch.targets);
  for (auto& group : optimizer_.param_groups()) group.options().set_lr(lr);
  shape.lr_t.fill_(optimizer_.corrected_lr(lr));
  model_.train();
  // Graphs for at most kMaxGraphs shapes: T2T's buckets give a few dozen,
  // but without max_length the last one is open-ended, and each graph
  // holds its own launch parameters. Other shapes run uncaptured.
  constexpr size_t kMaxGraphs = 64;
  if (graphs_ && shape.runs > 0 && (shape.graph || captured_graphs() < kMaxGraphs)) {
    if (!shape.graph) shape.graph = CudaGraph::capture(device_, [&] { shape.out = static_body(shape); });
    shape.graph->replay();
  } else {
    shape.out = static_body(shape);
  }
  ++shape.runs;
  optimizer_.count_step();
  stats_.add(shape.out);
  return shape.out;
}

StepOutcome TrainStep::static_body(StaticShape& shape) {
  // The gradients stay allocated, and are zeroed in place: a graph's
  // backward adds into the memory the first (uncaptured) run gave them.
  optimizer_.zero_grad(/*set_to_none=*/false);
  LossSum l;
  {
    AutocastScope autocast(device_.type(), autocast_);
    // Every position is projected onto the vocabulary (forward_labelled's
    // selection of the labelled ones has a shape only the data knows);
    // the loss weighs the padded ones 0.
    const auto logits = model_.forward(shape.inputs, shape.targets);
    l = smoothed_cross_entropy(logits, shape.targets, label_smoothing_);
  }
  StepOutcome out;
  const at::Tensor loss_total = l.loss_sum.detach().to(torch::kFloat64);
  const at::Tensor tokens = l.weight_sum.detach().to(torch::kFloat64);
  const at::Tensor norm_by = torch::clamp_min(l.weight_sum.detach().to(torch::kFloat), 1.0);
  if (scaling_)
    (l.loss_sum * (scale_ / norm_by)).backward();
  else
    (l.loss_sum / norm_by).backward();
  out.tokens = tokens;
  out.input_tokens = shape.inputs.ne(0).sum().to(torch::kFloat64);
  std::vector<at::Tensor> grads;
  for (auto& p : model_.parameters())
    if (p.grad().defined()) grads.push_back(p.mutable_grad());
  const at::Tensor found_inf = settle(grads, loss_total, out);
  optimizer_.queue_corrected_update(shape.lr_t, found_inf);
  return out;
}

double TrainStep::loss_scale() const { return scale_.item<double>(); }

int64_t TrainStep::loss_scale_good_steps() const { return good_steps_.item<int64_t>(); }

}  // namespace t2t
