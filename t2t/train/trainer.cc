#include "t2t/train/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "models/t2t_model.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/data/batching.h"
#include "t2t/distributed/communicator.h"
#include "t2t/data/problem.h"
#include "t2t/io/event_writer.h"
#include "t2t/metrics/bleu.h"
#include "t2t/text/text_encoder.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/loss.h"
#include "t2t/train/train_step.h"

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

// Where each worker's input position lives in a checkpoint: one worker's
// state as it is, several as a YAML list in rank order.
std::string join_reader_states(const std::vector<std::string>& states) {
  if (states.size() == 1) return states.front();
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "worker_reader_states" << YAML::Value << YAML::BeginSeq;
  for (const std::string& s : states) out << YAML::Literal << s;
  out << YAML::EndSeq << YAML::EndMap;
  return out.c_str();
}

std::optional<ReaderState> reader_state_for(const std::string& saved, const WorkerEnv& worker,
                                            const std::string& source) {
  if (saved.empty()) return std::nullopt;
  YAML::Node node = YAML::Load(saved);
  std::vector<std::string> states;
  if (node.IsMap() && node["worker_reader_states"]) {
    for (const auto& s : node["worker_reader_states"]) states.push_back(s.as<std::string>());
  } else {
    states.push_back(saved);
  }
  if (static_cast<int>(states.size()) != worker.world_size) {
    spdlog::warn("{} was written by {} worker(s), this run has {}: the input position cannot be "
                 "restored, so reading starts afresh (reshuffled by the step)",
                 source, states.size(), worker.world_size);
    return std::nullopt;
  }
  return ReaderState::from_yaml(states[worker.rank], source);
}

// True when a multiple of `every` lies in (step - advanced, step].
bool crossed(int64_t step, int64_t advanced, int64_t every) {
  return every > 0 && step / every != (step - advanced) / every;
}

}  // namespace

void run_training(const TrainOptions& options, const HParams& hp) {
  const WorkerEnv worker = options.worker.value_or(WorkerEnv{});
  const bool chief = worker.rank == 0;
  auto problem = create_problem(options.problem);
  FeatureEncoders enc = problem->feature_encoders(options.data_dir);
  FeatureInfo info{enc.inputs->vocab_size(), enc.targets->vocab_size(), enc.shared};
  const torch::Device device(options.device);
  std::unique_ptr<Communicator> communicator;
  if (worker.world_size > 1) {
    communicator = Communicator::connect(worker, device);
    spdlog::info("worker {} of {} joined ({} on {})", worker.rank, worker.world_size,
                 communicator->backend(), options.device);
  }
  std::shared_ptr<T2TModel> model = model_registry().get(options.model)(hp, info);
  model->to(device);
  auto optimizer = make_optimizer(*model, hp);
  check_learning_rate_schedule(hp);
  const int64_t accumulate = std::max<int64_t>(1, hp.get_int("optimizer_multistep_accumulate_steps"));

  // Resume exactly where the last checkpoint stopped. Every worker reads it
  // (output_dir must be visible to all), only the chief writes.
  const std::string latest = latest_checkpoint(options.output_dir);
  if (chief) check_or_write_hparams(options.output_dir, hp, !latest.empty());
  int64_t step = 0;
  std::optional<ReaderState> resume;
  std::vector<std::string> saved_random_states;
  if (!latest.empty()) {
    CheckpointMeta meta = load_checkpoint(latest, *model, optimizer.get(), true);
    step = meta.step;
    saved_random_states = std::move(meta.worker_rng_states);
    resume = reader_state_for(meta.reader_state, worker, latest);
    spdlog::info("resuming from {} at step {}", latest, step);
  }
  if (communicator) {
    // Workers that resumed from different steps would run different numbers
    // of steps and wait on each other for ever.
    at::Tensor chief_step = torch::tensor({step}, torch::kInt64).to(communicator->device());
    communicator->broadcast(chief_step);
    if (chief_step.cpu().item<int64_t>() != step)
      throw Error("worker " + std::to_string(worker.rank) + " found step " + std::to_string(step) +
                  " in --output_dir=" + options.output_dir + " but worker 0 found step " +
                  std::to_string(chief_step.cpu().item<int64_t>()) +
                  ": every worker must see the same --output_dir (a shared file system)");
    // Identical starting weights, then distinct dropout masks per worker:
    // each worker's own stream where the checkpoint saved one per worker.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) communicator->broadcast(p);
    for (auto& b : model->buffers()) communicator->broadcast(b);
    if (static_cast<int>(saved_random_states.size()) == worker.world_size) {
      set_cpu_rng_state(saved_random_states[static_cast<size_t>(worker.rank)]);
    } else {
      if (chief && !latest.empty())
        spdlog::warn("{} holds the random states of {} worker(s), this run has {}: dropout is "
                     "reseeded by worker and step, so the run will not repeat an uninterrupted "
                     "one exactly", latest, saved_random_states.size(), worker.world_size);
      torch::manual_seed(options.seed + 1000003ull * static_cast<uint64_t>(worker.rank) +
                         static_cast<uint64_t>(step));
    }
  }
  int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  spdlog::info("model {} with {} parameters on {}; vocabularies {} / {}{}", options.model, params,
               options.device, info.input_vocab_size, info.target_vocab_size,
               info.shared_vocabulary ? " (shared)" : "");

  auto save = [&](const BatchReader* reader) {
    std::vector<std::string> states{reader ? reader->state().to_yaml() : std::string()};
    std::vector<std::string> random_states;
    if (communicator) {
      if (reader) states = communicator->all_gather_strings(states.front());
      random_states = communicator->all_gather_strings(cpu_rng_state());
    }
    if (!chief) return;
    CheckpointMeta meta;
    meta.step = step;
    meta.hparams_yaml = hp.to_yaml();
    if (reader) meta.reader_state = join_reader_states(states);
    meta.worker_rng_states = std::move(random_states);
    std::string path = save_checkpoint(options.output_dir, *model, optimizer.get(), meta,
                                       options.keep_checkpoint_max);
    spdlog::info("saved {}", path);
  };
  std::optional<EventWriter> eval_events;
  if (chief) eval_events.emplace((fs::path(options.output_dir) / "eval").string());
  auto run_eval = [&]() {
    // The chief evaluates alone; the others wait at the next collective.
    if (!chief) return;
    Stopwatch timer;
    EvalResult r = evaluate(*model, *problem, options, hp, device);
    spdlog::info("eval at step {}: loss {:.4f}, accuracy {:.4f}, top-5 {:.4f}, "
                 "neg_log_perplexity {:.4f}, approx BLEU {:.4f} (argmax ids vs labels, not a "
                 "real BLEU) ({} tokens, {:.1f} s)",
                 step, r.loss, r.accuracy, r.accuracy_top5, -r.loss, r.approx_bleu, r.tokens,
                 timer.seconds());
    eval_events->add_scalars(step, {{"loss", r.loss}, {"metrics/accuracy", r.accuracy},
                                    {"metrics/accuracy_top5", r.accuracy_top5},
                                    {"metrics/neg_log_perplexity", -r.loss},
                                    {"metrics/approx_bleu_score", r.approx_bleu}});
    eval_events->flush();
  };

  if (options.schedule == "evaluate") {
    run_eval();
    return;
  }
  if (options.schedule != "train" && options.schedule != "continuous_train_and_eval")
    throw Error("--schedule=" + options.schedule +
                " is not one of train, evaluate, continuous_train_and_eval");

  ReaderOptions read = reader_options(hp, true, problem->reversed(), options.seed);
  read.worker = worker.rank;
  read.num_workers = worker.world_size;
  read.pin_memory = device.is_cuda();
  // A fresh start after a resume that could not restore the position must
  // not replay the first batches again.
  if (!latest.empty() && !resume) read.seed += static_cast<uint64_t>(step);
  BatchReader reader(problem->data_filepaths(options.data_dir, "train"), batching_scheme(hp), read,
                     resume);
  std::optional<EventWriter> train_events;
  if (chief) train_events.emplace(options.output_dir);
  const int64_t save_every =
      options.save_checkpoints_steps > 0 ? options.save_checkpoints_steps : options.local_eval_frequency;
  TrainStep train_step(*model, *optimizer, hp, device, options.mixed_precision, communicator.get());
  if (options.mixed_precision != "none")
    spdlog::info("mixed precision: {} autocast{}", options.mixed_precision,
                 options.mixed_precision == "fp16" ? " with dynamic loss scaling" : "");
  if (accumulate > 1)
    spdlog::info("gradient accumulation: one update every {} batches (a step is a batch, as in "
                 "T2T)", accumulate);
  const int64_t first_step = step;
  Stopwatch since_start, since_log, since_save;
  double log_loss = 0, log_weight = 0, log_tokens = 0;
  int64_t nonfinite_in_a_row = 0, nonfinite_total = 0;
  int64_t last_log = step;
  std::vector<Batch> batches;
  while (step < options.train_steps) {
    batches.clear();
    for (int64_t i = 0; i < accumulate; ++i) batches.push_back(*reader.next());
    const double lr = learning_rate(hp, step + accumulate - 1);
    const StepResult r = train_step.run(batches, lr);
    if (r.overflow) {
      spdlog::debug("step {}: fp16 gradient overflow, loss scale now {}", step,
                    train_step.loss_scale());
      continue;
    }
    if (r.nonfinite) {
      ++nonfinite_in_a_row;
      ++nonfinite_total;
      spdlog::warn("step {}: non-finite {} ({} in a row, {} in all); the update is skipped", step,
                   std::isfinite(r.loss_sum) ? "gradient" : "loss", nonfinite_in_a_row,
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
    step += accumulate;
    log_loss += r.loss_sum;
    log_weight += r.tokens;
    log_tokens += r.input_tokens + r.tokens;

    if (crossed(step, accumulate, options.log_step_count_steps) || step >= options.train_steps) {
      const double secs = since_log.seconds();
      const double done = step - first_step, left = std::max<int64_t>(0, options.train_steps - step);
      const double eta = done > 0 ? since_start.seconds() / done * left : 0;
      const double mean = log_weight > 0 ? log_loss / log_weight : 0;
      const double steps_per_sec = (step - last_log) / std::max(secs, 1e-9);
      spdlog::info("step {}: loss {:.4f}, lr {:.3g}, {:.0f} tokens/s{}, {:.2f} steps/s, elapsed "
                   "{:.0f} s, ETA {:.0f} s",
                   step, mean, lr, log_tokens / std::max(secs, 1e-9),
                   worker.world_size > 1 ? " (all workers)" : "", steps_per_sec,
                   since_start.seconds(), eta);
      if (chief) {
        train_events->add_scalars(step, {{"loss", mean}, {"training/learning_rate", lr},
                                         {"tokens_per_sec", log_tokens / std::max(secs, 1e-9)},
                                         {"global_step/sec", steps_per_sec}});
        train_events->flush();
      }
      log_loss = log_weight = log_tokens = 0;
      last_log = step;
      since_log.restart();
    }
    // Every worker must agree on when to save (saving gathers their input
    // positions), so the time-based trigger is the chief's clock, shared.
    bool time_to_save =
        options.save_checkpoints_secs > 0 && since_save.seconds() >= options.save_checkpoints_secs;
    if (communicator && options.save_checkpoints_secs > 0) {
      at::Tensor flag = torch::tensor({chief && time_to_save ? 1.0 : 0.0}, torch::kFloat64)
                            .to(communicator->device());
      communicator->all_reduce_sum(flag);
      time_to_save = flag.cpu().item<double>() > 0;
    }
    if (crossed(step, accumulate, save_every) || step >= options.train_steps || time_to_save) {
      save(&reader);
      since_save.restart();
      if (options.schedule == "continuous_train_and_eval" &&
          (crossed(step, accumulate, options.local_eval_frequency) || step >= options.train_steps))
        run_eval();
    }
  }
  if (step == first_step) spdlog::info("already at step {} of {}: nothing to train", step, options.train_steps);
}

}  // namespace t2t
