#include "t2t/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t2t/core/cuda_graph.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/problem.h"
#include "t2t/io/event_writer.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "t2t/train/eval_decisions.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/resume.h"
#include "t2t/train/run_checkpoints.h"
#include "t2t/train/run_evaluations.h"
#include "t2t/train/step_reporter.h"
#include "t2t/train/stop_request.h"
#include "t2t/train/train_step.h"
#include "t2t/train/worker_group.h"

namespace t2t {

namespace {

// True when a multiple of `every` lies in (step - advanced, step].
bool crossed(int64_t step, int64_t advanced, int64_t every) {
  return every > 0 && step / every != (step - advanced) / every;
}

// One call of run_training, cut into the steps it takes in order: build the
// model, resume from output_dir, bring the workers in line, then evaluate
// or train, saving checkpoints and evaluating on the way. The work of each
// step has a file of its own (resume.h, worker_group.h, run_checkpoints.h,
// run_evaluations.h, step_reporter.h); this class holds what they share
// (the problem, the model and optimizer, the step) and the training loop,
// which says when to report, save and evaluate.
class TrainingRun {
 public:
  TrainingRun(const TrainOptions& options, const HParams& hp)
      : options_(options),
        hp_(hp),
        worker_(options.worker.value_or(WorkerEnv{})),
        chief_(worker_.rank == 0),
        device_(options.device),
        workers_(options, worker_) {
    check_train_options(options);
  }

  void run() {
    {
      // A stop before the first step has nothing to save: it ends the
      // process at once, even one stuck meeting a worker that failed.
      StopAtOnce setting_up;
      build();
      start_ = resume_run(options_, hp_, worker_, device_, *model_, *optimizer_);
      step_ = start_.step;
      if (workers_.communicator())
        workers_.synchronize(step_, *model_, start_.random_states, start_.latest);
    }
    RunCheckpoints checkpoints(options_, hp_, device_, workers_, *model_, *optimizer_);
    // A run that resumed from its own checkpoint has that one saved.
    if (!start_.latest.empty()) checkpoints.resumed_from(start_.latest, step_);
    log_model();
    RunEvaluations evaluations(options_, hp_, device_, workers_, model_, *problem_);
    if (chief_) evaluations.open_records(step_);
    if (options_.schedule == Schedule::kEvaluate) {
      // The latest checkpoint may become the best; a model that has none
      // (nothing trained yet) has nothing to keep.
      if (evaluations.evaluate_and_decide(step_).new_best) {
        if (checkpoints.saved_step() == step_)
          evaluations.record_best(checkpoints.saved_path(), step_);
        else if (chief_)
          spdlog::info("no checkpoint at step {}: nothing to keep in best/", step_);
      }
    } else {
      train(checkpoints, evaluations);
    }
    workers_.leave();
  }

 private:
  void build() {
    problem_ = create_problem(options_.problem);
    FeatureEncoders enc = problem_->feature_encoders(options_.data_dir);
    info_ = FeatureInfo{enc.inputs->vocab_size(), enc.targets->vocab_size(), enc.shared};
    workers_.connect(device_);
    model_ = model_registry().get(options_.model)(hp_, info_);
    model_->to(device_);
    optimizer_ = make_optimizer(*model_, hp_);
    check_learning_rate_schedule(hp_);
  }

  void log_model() const {
    int64_t params = 0;
    for (const auto& p : model_->parameters()) params += p.numel();
    spdlog::info("model {} with {} parameters on {}; vocabularies {} / {}{}", options_.model,
                 params, options_.device, info_.input_vocab_size, info_.target_vocab_size,
                 info_.shared_vocabulary ? " (shared)" : "");
  }

  BatchReader make_reader() const {
    ReaderOptions read = reader_options(hp_, true, problem_->reversed(), options_.seed);
    read.worker = worker_.rank;
    read.num_workers = worker_.world_size;
    read.pin_memory = device_.is_cuda();
    // A fresh start after a resume that could not restore the position must
    // not replay the first batches again.
    if (!start_.latest.empty() && !start_.reader_state)
      read.seed += static_cast<uint64_t>(step_);
    if (problem_->training_parts().empty())
      return BatchReader(problem_->data_filepaths(options_.data_dir, "train"),
                         batching_scheme(hp_), read, start_.reader_state);
    DataMix mix = problem_->training_mix(options_.data_dir);
    spdlog::info("training data: a mix of {} drawn by weight ({})", mix.size(), describe_mix(mix));
    return BatchReader(std::move(mix), batching_scheme(hp_), read, start_.reader_state);
  }

  void train(RunCheckpoints& checkpoints, RunEvaluations& evaluations) {
    const int64_t accumulate =
        std::max<int64_t>(1, hp_.get_int("optimizer_multistep_accumulate_steps"));
    BatchReader reader = make_reader();
    std::optional<EventWriter> train_events;
    if (chief_) train_events.emplace(options_.output_dir);
    const int64_t save_every = options_.save_checkpoints_steps > 0
                                   ? options_.save_checkpoints_steps
                                   : options_.local_eval_frequency;
    const bool evaluating = options_.schedule == Schedule::kContinuousTrainAndEval;
    TrainStep train_step(*model_, *optimizer_, hp_, device_, options_.mixed_precision,
                         workers_.communicator());
    if (options_.mixed_precision != "none")
      spdlog::info("mixed precision: {} autocast{}", options_.mixed_precision,
                   options_.mixed_precision == "fp16" ? " with dynamic loss scaling" : "");
    if (start_.loss_scale > 0 &&
        train_step.restore_loss_scale(start_.loss_scale, start_.loss_scale_good_steps))
      spdlog::info("fp16 loss scale {} taken up from {}", start_.loss_scale, start_.latest);
    if (accumulate > 1)
      spdlog::info("gradient accumulation: one update every {} batches (a step is a batch, as "
                   "in T2T)",
                   accumulate);
    // Every step, eval and checkpoint of the run on one stream, which the
    // graphs are captured on.
    std::optional<UseSideStream> side_stream;
    if (options_.cuda_graphs) {
      if (accumulate > 1)
        throw OptionError("cuda_graphs", "{cuda_graphs} captures one batch a step; hparam "
                                         "optimizer_multistep_accumulate_steps=" +
                                             std::to_string(accumulate) +
                                             " asks for several. Leave one of them out");
      side_stream.emplace(device_);
      train_step.use_static_shapes(batching_scheme(hp_), /*graphs=*/true);
      spdlog::info("CUDA graphs: each length bucket's step is captured the second time it comes, "
                   "and replayed after");
    }
    const int64_t first_step = step_;
    if (evaluations.stopped_early_before(step_)) return;
    EventWriter* events = train_events ? &*train_events : nullptr;
    StepReporter reports(options_, worker_.world_size, workers_.communicator(), step_, events);
    Stopwatch since_save;
    std::vector<Batch> batches;
    std::optional<StepReporter::PendingReport> pending;
    while (step_ < options_.train_steps) {
      batches.clear();
      for (int64_t i = 0; i < accumulate; ++i) batches.push_back(*reader.next());
      // The rate of the step count this update reaches, as T2T 1.15 on
      // TensorFlow 2 has it: its optimizer wrapper increments global_step
      // before applying the gradients, so the update from step s reads the
      // schedule at s + 1 (and the first update is not wasted at rate 0).
      const double lr = learning_rate(hp_, step_ + accumulate);
      train_step.queue(batches, lr);
      step_ += accumulate;
      const bool last = step_ >= options_.train_steps;
      // The report started a step ago is read now that this step is queued,
      // so the device does not wait for the host. Every worker must agree
      // on when to save (saving gathers their input positions) and when to
      // stop, so the time-based trigger is the chief's clock and a stop
      // asked of any worker (a signal) stops all of them: both travel in
      // the report, summed over the workers.
      std::array<bool, 2> agreed{false, false};
      if (pending) {
        agreed = reports.finish_report(train_step, *pending);
        pending.reset();
      }
      if (!workers_.communicator()) {
        // One worker agrees with itself: a signal or the clock is acted on
        // at once, as slow CPU steps would otherwise delay it by seconds.
        agreed[0] = agreed[0] || (options_.save_checkpoints_secs > 0 &&
                                  since_save.seconds() >= options_.save_checkpoints_secs);
        agreed[1] = agreed[1] || stop_requested();
      }
      const bool stop = agreed[1];
      const bool log_now = crossed(step_, accumulate, options_.log_step_count_steps);
      if (last || stop || log_now || crossed(step_, accumulate, kReportEvery)) {
        const bool save_time = chief_ && options_.save_checkpoints_secs > 0 &&
                               since_save.seconds() >= options_.save_checkpoints_secs;
        pending = reports.start_report(train_step, step_, lr, log_now || last || stop, save_time);
        if (last || stop) {
          const auto now = reports.finish_report(train_step, *pending);
          agreed[0] = agreed[0] || now[0];
          pending.reset();
        }
      }
      if (crossed(step_, accumulate, save_every) || last || agreed[0] || stop) {
        checkpoints.save(reader, train_step, step_);
        since_save.restart();
      }
      if (stop) {
        if (chief_) {
          const std::string reason = stop_reason();
          spdlog::info("stopped at step {} of {} ({}): saved {}; the same command "
                       "resumes from there",
                       step_, options_.train_steps,
                       reason.empty() ? "a stop asked of another worker" : reason,
                       checkpoints.saved_path());
        }
        break;
      }
      if (evaluating && (crossed(step_, accumulate, options_.local_eval_frequency) || last)) {
        const EvalDecisions::Decision d = evaluations.evaluate_and_decide(step_);
        // The best step gets a checkpoint even off the saving cadence, and
        // so does the step training stops at.
        if ((d.new_best || d.stop) && checkpoints.saved_step() != step_) {
          checkpoints.save(reader, train_step, step_);
          since_save.restart();
        }
        if (d.new_best) evaluations.record_best(checkpoints.saved_path(), step_);
        if (d.stop) {
          evaluations.log_early_stop(step_, checkpoints.saved_path());
          break;
        }
      }
    }
    if (step_ == first_step)
      spdlog::info("already at step {} of {}: nothing to train", step_, options_.train_steps);
    if (options_.cuda_graphs)
      spdlog::info("CUDA graphs: {} captured, for {} batch shapes", train_step.captured_graphs(),
                   train_step.static_shapes());
  }

  const TrainOptions& options_;
  const HParams& hp_;
  const WorkerEnv worker_;
  const bool chief_;
  const torch::Device device_;
  std::unique_ptr<Problem> problem_;
  FeatureInfo info_;
  WorkerGroup workers_;
  std::shared_ptr<T2TModel> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  ResumePoint start_;  // where the run started (resume.h)
  int64_t step_ = 0;
};

}  // namespace

void run_training(const TrainOptions& options, const HParams& hp) {
  // T2T's trainer adds its --train_steps to the hparams, where the
  // schedules that decay to the end of training read it.
  HParams run_hp = hp;
  if (!hp.has("train_steps") && schedule_reads_train_steps(hp))
    run_hp.add("train_steps", options.train_steps);
  TrainingRun(options, run_hp).run();
}

}  // namespace t2t
