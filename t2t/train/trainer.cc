#include "t2t/train/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "models/t2t_model.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/batching.h"
#include "t2t/data/problem.h"
#include "t2t/io/event_writer.h"
#include "t2t/metrics/bleu.h"
#include "t2t/text/text_encoder.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/loss.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// A run's hparams are fixed once it has a checkpoint: resuming with others
// would silently train a different model.
void check_or_write_hparams(const std::string& output_dir, const HParams& hp, bool resuming) {
  const std::string path = (fs::path(output_dir) / "hparams.yaml").string();
  if (resuming && fs::exists(path)) {
    auto diff = HParams::from_yaml_file(path).diff(hp);
    if (!diff.empty())
      throw Error("--output_dir=" + output_dir + " holds a run trained with other hparams (" +
                  join(diff, "; ") + "). Use a new --output_dir, or the same --hparams_set and "
                  "--hparams as before.");
  }
  hp.save_yaml(path);
}

torch::optim::Adam make_optimizer(torch::nn::Module& model, const HParams& hp) {
  if (hp.get_int("optimizer_multistep_accumulate_steps") > 1)
    throw Error("optimizer_multistep_accumulate_steps > 1 (gradient accumulation) is not in this "
                "build yet; use a larger batch_size instead");
  const std::string name = to_lower(hp.get_string("optimizer"));
  if (name.find("adam") == std::string::npos)
    throw Error("optimizer '" + hp.get_string("optimizer") +
                "' is not supported yet; use adam (hparams optimizer=adam)");
  auto opts = torch::optim::AdamOptions(0.0)
                  .betas({hp.get_float("optimizer_adam_beta1"), hp.get_float("optimizer_adam_beta2")})
                  .eps(hp.get_float("optimizer_adam_epsilon"))
                  .weight_decay(hp.get_float("weight_decay"));
  return torch::optim::Adam(model.parameters(), opts);
}

void set_learning_rate(torch::optim::Optimizer& opt, double lr) {
  for (auto& group : opt.param_groups()) group.options().set_lr(lr);
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

// fp16 gradients underflow without scaling: the loss is multiplied by a
// scale that halves on overflow and doubles after a run of good steps, the
// schedule T2T uses (2^15 to start, x2 every 2000 good steps).
struct LossScale {
  bool enabled = false;
  double scale = 32768.0;
  int64_t good_steps = 0;
  void update(bool overflow) {
    if (!enabled) return;
    if (overflow) {
      scale = std::max(1.0, scale / 2);
      good_steps = 0;
    } else if (++good_steps == 2000) {
      scale *= 2;
      good_steps = 0;
    }
  }
};

std::optional<at::ScalarType> autocast_dtype(const std::string& mode, const torch::Device& device) {
  if (mode == "none") return std::nullopt;
  if (mode == "bf16") return at::kBFloat16;
  if (mode == "fp16") {
    if (!device.is_cuda())
      throw Error("--mixed_precision=fp16 needs a CUDA device (--device=" + device.str() +
                  "); on a CPU use --mixed_precision=bf16");
    return at::kHalf;
  }
  throw Error("--mixed_precision=" + mode + " is not one of none, bf16, fp16");
}

struct EvalResult {
  double loss = 0, accuracy = 0, accuracy_top5 = 0;
  double approx_bleu = 0;  // argmax ids against the labels: not a real BLEU
  int64_t tokens = 0;
};

// Teacher-forced evaluation on the dev split: unsmoothed loss, accuracies.
EvalResult evaluate(T2TModel& model, const Problem& problem, const TrainOptions& options,
                    const HParams& hp, const torch::Device& device) {
  BatchReader reader(problem.data_filepaths(options.data_dir, "dev"), batching_scheme(hp),
                     reader_options(hp, false, problem.reversed(), options.seed));
  model.eval();
  torch::NoGradGuard no_grad;
  double loss_sum = 0, weight = 0, correct = 0, correct5 = 0;
  BleuStats bleu;
  for (int64_t i = 0; i < options.eval_steps; ++i) {
    auto batch = reader.next();
    if (!batch) break;
    auto inputs = batch->inputs.to(device), targets = batch->targets.to(device);
    auto logits = model.forward(inputs, targets);
    auto l = smoothed_cross_entropy(logits, targets, 0.0);
    loss_sum += l.loss_sum.item<double>();
    weight += l.weight_sum.item<double>();
    correct += padded_accuracy(logits, targets).correct.item<double>();
    correct5 += padded_accuracy_topk(logits, targets, 5).correct.item<double>();
    // T2T's approx_bleu_score: BLEU-4 of each row's argmax ids against its
    // labels, teacher-forced, padding left out.
    auto predicted = logits.argmax(-1).to(torch::kCPU).contiguous();
    auto labels = targets.to(torch::kCPU).contiguous();
    for (int64_t row = 0; row < labels.size(0); ++row) {
      std::vector<int64_t> ref, hyp;
      for (int64_t t = 0; t < labels.size(1); ++t) {
        if (labels[row][t].item<int64_t>() == 0) continue;
        ref.push_back(labels[row][t].item<int64_t>());
        hyp.push_back(predicted[row][t].item<int64_t>());
      }
      bleu.add(ref, hyp);
    }
  }
  model.train();
  EvalResult r;
  r.tokens = static_cast<int64_t>(weight);
  if (weight > 0) {
    r.loss = loss_sum / weight;
    r.accuracy = correct / weight;
    r.accuracy_top5 = correct5 / weight;
    r.approx_bleu = bleu.score();
  }
  return r;
}

}  // namespace

void run_training(const TrainOptions& options, const HParams& hp) {
  auto problem = create_problem(options.problem);
  FeatureEncoders enc = problem->feature_encoders(options.data_dir);
  FeatureInfo info{enc.inputs->vocab_size(), enc.targets->vocab_size(), enc.shared};
  const torch::Device device(options.device);
  std::shared_ptr<T2TModel> model = model_registry().get(options.model)(hp, info);
  model->to(device);
  auto optimizer = make_optimizer(*model, hp);
  check_learning_rate_schedule(hp);

  // Resume exactly where the last checkpoint stopped.
  const std::string latest = latest_checkpoint(options.output_dir);
  check_or_write_hparams(options.output_dir, hp, !latest.empty());
  int64_t step = 0;
  std::optional<ReaderState> resume;
  if (!latest.empty()) {
    CheckpointMeta meta = load_checkpoint(latest, *model, &optimizer, true);
    step = meta.step;
    if (!meta.reader_state.empty())
      resume = ReaderState::from_yaml(meta.reader_state, latest);
    spdlog::info("resuming from {} at step {}", latest, step);
  }
  int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  spdlog::info("model {} with {} parameters on {}; vocabularies {} / {}{}", options.model, params,
               options.device, info.input_vocab_size, info.target_vocab_size,
               info.shared_vocabulary ? " (shared)" : "");

  auto save = [&](const BatchReader* reader) {
    CheckpointMeta meta;
    meta.step = step;
    meta.hparams_yaml = hp.to_yaml();
    if (reader) meta.reader_state = reader->state().to_yaml();
    std::string path = save_checkpoint(options.output_dir, *model, &optimizer, meta,
                                       options.keep_checkpoint_max);
    spdlog::info("saved {}", path);
  };
  EventWriter eval_events((fs::path(options.output_dir) / "eval").string());
  auto run_eval = [&]() {
    Stopwatch timer;
    EvalResult r = evaluate(*model, *problem, options, hp, device);
    spdlog::info("eval at step {}: loss {:.4f}, accuracy {:.4f}, top-5 {:.4f}, "
                 "neg_log_perplexity {:.4f}, approx BLEU {:.4f} (argmax ids vs labels, not a "
                 "real BLEU) ({} tokens, {:.1f} s)",
                 step, r.loss, r.accuracy, r.accuracy_top5, -r.loss, r.approx_bleu, r.tokens,
                 timer.seconds());
    eval_events.add_scalars(step, {{"loss", r.loss}, {"metrics/accuracy", r.accuracy},
                                   {"metrics/accuracy_top5", r.accuracy_top5},
                                   {"metrics/neg_log_perplexity", -r.loss},
                                   {"metrics/approx_bleu_score", r.approx_bleu}});
    eval_events.flush();
  };

  if (options.schedule == "evaluate") {
    run_eval();
    return;
  }
  if (options.schedule != "train" && options.schedule != "continuous_train_and_eval")
    throw Error("--schedule=" + options.schedule +
                " is not one of train, evaluate, continuous_train_and_eval");

  BatchReader reader(problem->data_filepaths(options.data_dir, "train"), batching_scheme(hp),
                     reader_options(hp, true, problem->reversed(), options.seed), resume);
  EventWriter train_events(options.output_dir);
  const int64_t save_every =
      options.save_checkpoints_steps > 0 ? options.save_checkpoints_steps : options.local_eval_frequency;
  const double label_smoothing = hp.get_float("label_smoothing");
  const double clip = hp.get_float("clip_grad_norm");
  const int64_t first_step = step;
  const std::optional<at::ScalarType> amp = autocast_dtype(options.mixed_precision, device);
  LossScale loss_scale;
  loss_scale.enabled = amp == at::kHalf;
  if (amp) spdlog::info("mixed precision: {} autocast{}", options.mixed_precision,
                        loss_scale.enabled ? " with dynamic loss scaling" : "");
  Stopwatch since_start, since_log, since_save;
  double log_loss = 0, log_weight = 0, log_tokens = 0;
  int64_t nonfinite_in_a_row = 0, nonfinite_total = 0;
  model->train();
  while (step < options.train_steps) {
    auto batch = reader.next();
    const double lr = learning_rate(hp, step);
    set_learning_rate(optimizer, lr);
    auto inputs = batch->inputs.to(device), targets = batch->targets.to(device);
    optimizer.zero_grad();
    LossSum l;
    {
      AutocastScope autocast(device.type(), amp);
      auto logits = model->forward(inputs, targets);
      l = smoothed_cross_entropy(logits, targets, label_smoothing);
    }
    auto loss = l.loss_sum / l.weight_sum.clamp_min(1.0);
    if (loss_scale.enabled) {
      (loss * loss_scale.scale).backward();
      for (auto& p : model->parameters())
        if (p.grad().defined()) p.grad().div_(loss_scale.scale);
    } else {
      loss.backward();
    }
    // The gradient norm is needed for clipping anyway, and checking it too
    // catches an overflow in backward that a finite loss would hide.
    const double grad_norm = torch::nn::utils::clip_grad_norm_(
        model->parameters(), clip > 0 ? clip : std::numeric_limits<double>::infinity());
    const double loss_value = l.loss_sum.item<double>();
    if (loss_scale.enabled && std::isfinite(loss_value) && !std::isfinite(grad_norm)) {
      // An fp16 gradient overflow: expected now and then, not a failure.
      loss_scale.update(true);
      spdlog::debug("step {}: fp16 gradient overflow, loss scale now {}", step, loss_scale.scale);
      continue;
    }
    loss_scale.update(false);
    if (!std::isfinite(loss_value) || !std::isfinite(grad_norm)) {
      ++nonfinite_in_a_row;
      ++nonfinite_total;
      spdlog::warn("step {}: non-finite {} ({} in a row, {} in all); the update is skipped", step,
                   std::isfinite(loss_value) ? "gradient" : "loss", nonfinite_in_a_row,
                   nonfinite_total);
      if (nonfinite_in_a_row >= options.max_nonfinite_steps) {
        const std::string last = latest_checkpoint(options.output_dir);
        throw Error("training stopped at step " + std::to_string(step) + ": " +
                    std::to_string(nonfinite_in_a_row) +
                    " steps in a row gave a non-finite loss or gradient. " +
                    (last.empty() ? std::string("No checkpoint was written yet.")
                                  : "The last good checkpoint is " + last + ".") +
                    " Lower the learning rate (learning_rate_constant / learning_rate), raise "
                    "learning_rate_warmup_steps, or set clip_grad_norm.");
      }
      continue;
    }
    nonfinite_in_a_row = 0;
    optimizer.step();
    ++step;
    log_loss += loss_value;
    log_weight += l.weight_sum.item<double>();
    log_tokens += batch->input_tokens + batch->target_tokens;

    if (step % options.log_step_count_steps == 0 || step == options.train_steps) {
      const double secs = since_log.seconds();
      const double done = step - first_step, left = options.train_steps - step;
      const double eta = done > 0 ? since_start.seconds() / done * left : 0;
      const double mean = log_weight > 0 ? log_loss / log_weight : 0;
      spdlog::info("step {}: loss {:.4f}, lr {:.3g}, {:.0f} tokens/s, elapsed {:.0f} s, ETA {:.0f} s",
                   step, mean, lr, log_tokens / std::max(secs, 1e-9), since_start.seconds(), eta);
      train_events.add_scalars(step, {{"loss", mean}, {"training/learning_rate", lr},
                                      {"tokens_per_sec", log_tokens / std::max(secs, 1e-9)}});
      train_events.flush();
      log_loss = log_weight = log_tokens = 0;
      since_log.restart();
    }
    const bool time_to_save =
        options.save_checkpoints_secs > 0 && since_save.seconds() >= options.save_checkpoints_secs;
    if (step % save_every == 0 || step == options.train_steps || time_to_save) {
      save(&reader);
      since_save.restart();
      if (options.schedule == "continuous_train_and_eval" &&
          (step % options.local_eval_frequency == 0 || step == options.train_steps))
        run_eval();
    }
  }
  if (step == first_step) spdlog::info("already at step {} of {}: nothing to train", step, options.train_steps);
}

}  // namespace t2t
