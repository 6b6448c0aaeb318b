// t2t-trainer: trains a registered model on a registered problem, with
// T2T's flags. Everything here is flag handling; the work is in libt2t.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "t2t/model/honoured_hparams.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"
#include "t2t/data/problem.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/dev_bleu.h"
#include "t2t/distributed/communicator.h"
#include "t2t/distributed/launcher.h"
#include "t2t/io/t2t_hparams_json.h"
#include "t2t/model/model_registry.h"
#include "t2t/train/eval_metrics.h"
#include "t2t/train/stop_request.h"
#include "t2t/train/train_step.h"
#include "t2t/train/trainer.h"
#include "tools/cli_common.h"

namespace {

void add_trainer_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Training")
      ("train_steps", "Train up to this global step (at least 1); a resumed run goes on from "
       "its checkpoint's step.", value<int64_t>()->default_value("250000"))
      ("eval_steps", "Number of eval batches per evaluation (fewer at the end of the dev set).",
       value<int64_t>()->default_value("100"))
      ("local_eval_frequency", "Evaluate on the dev split every this many steps, and after the "
       "last step, whether or not a checkpoint is saved at that step.",
       value<int64_t>()->default_value("1000"))
      ("schedule", "continuous_train_and_eval (train, evaluating on the way), train (no "
       "evaluations) or evaluate (evaluate the latest checkpoint once).",
       value<std::string>()->default_value("continuous_train_and_eval"))
      ("keep_checkpoint_max", "Keep this many most recent checkpoints; 0 = keep all.",
       value<int>()->default_value("20"))
      ("save_checkpoints_steps", "Save a checkpoint every this many steps, and after the last "
       "step; 0 = every --local_eval_frequency steps.",
       value<int64_t>()->default_value("0"))
      ("save_checkpoints_secs", "Also save a checkpoint once this many seconds have passed since "
       "the last one; 0 = off.",
       value<int64_t>()->default_value("0"))
      ("log_step_count_steps", "Log progress every this many steps.",
       value<int64_t>()->default_value("100"))
      ("worker_gpu", "Data-parallel worker processes to start on this machine (torch.distributed: "
       "Gloo on CPU, NCCL on CUDA, one GPU each). batch_size is per worker. For several "
       "machines, start one process per worker with torchrun (RANK, WORLD_SIZE, LOCAL_RANK, "
       "MASTER_ADDR, MASTER_PORT) instead.", value<int>()->default_value("1"))
      ("collective_timeout", "With several workers: seconds a worker waits for the others in "
       "a collective before the run ends with an error naming the one that did not answer (a "
       "worker gone, a network link cut), rather than hang. Once all have met; the first "
       "meeting waits up to 30 minutes. The chief's evaluations and checkpoint writes may take "
       "longer: the others wait for those while it shows signs of life. (torch.distributed's "
       "own default is 30 minutes.)", value<int64_t>()->default_value("300"))
      ("max_nonfinite_steps", "Steps with a NaN/Inf loss or gradient are skipped; this many in "
       "a row stop training (the last checkpoint stays intact).",
       value<int64_t>()->default_value("10"))
      ("mixed_precision", "none; bf16 (autocast, CPU or CUDA; on a CPU fast only with "
       "AVX512_BF16 or AMX, else emulated and slower than none); fp16 (autocast with dynamic "
       "loss scaling, CUDA only).",
       value<std::string>()->default_value("none"))
      ("cuda_graphs", "On a GPU, capture each length bucket's training step into a CUDA graph "
       "the second time a batch of it comes, and replay it from then on: one launch a step "
       "instead of thousands. Batches are padded to their bucket's longest length, and every "
       "position is scored. One worker, one batch a step (no gradient accumulation).",
       value<bool>()->default_value("false"))
      ("warm_start_from", "Start a new run from the weights of this checkpoint (a "
       "model.ckpt-N.pt file, T2T's model.ckpt-N prefix, or a run directory of either: its "
       "latest), at step 0 with a fresh "
       "optimizer. Every parameter must be there with the same shape (same model and sizes; "
       "other hparams such as dropout or the learning rate may differ). Ignored, with a log "
       "line, when --output_dir holds a checkpoint already: the run resumes from that.",
       value<std::string>()->default_value(""));
  options.add_options("Evaluation")
      ("eval_bleu", "At each evaluation, also decode the dev split (or --decode_from_file) with "
       "--decode_hparams and score it as sacreBLEU does against its references (BLEU's "
       "tokenizer zh for Chinese, else 13a): logged and written to the eval events (BLEU, "
       "chrF2, chrF2++, TER as --eval_decode_metrics says); translations in "
       "<output_dir>/eval/bleu.decodes. Decoding takes time: num_samples in --decode_hparams "
       "caps the dev sentences decoded.")
      ("eval_decode_metrics", "With --eval_bleu: the scores of the decoded translations, "
       "separated by commas: bleu, chrf, chrf++, ter. Each can then be --best_metric or "
       "--eval_early_stopping_metric. Default: bleu.", value<std::vector<std::string>>())
      ("decode_hparams", "With --eval_bleu: decoding settings as t2t-decoder takes them, e.g. "
       "'beam_size=4,alpha=0.6,num_samples=500'.", value<std::string>()->default_value(""))
      ("decode_from_file", "With --eval_bleu: decode this file, one sentence a line, instead of "
       "the dev split (needs --decode_reference).", value<std::string>()->default_value(""))
      ("decode_reference", "With --eval_bleu and --decode_from_file: the reference "
       "translations, line for line. Several references: repeat the flag or separate the "
       "files with commas.", value<std::vector<std::string>>())
      ("best_metric", "Keep the checkpoint with the best value of this eval metric in "
       "<output_dir>/best/ (a full checkpoint: t2t-decoder --checkpoint_path=<output_dir>/best "
       "loads it), with best.yaml naming its step and value. A step evaluated without a "
       "checkpoint gets one when it is the best. Kept across restarts, never pruned by "
       "--keep_checkpoint_max. One of loss, bleu, chrf, chrf++, ter (these need --eval_bleu and "
       "--eval_decode_metrics), accuracy, accuracy_top5, neg_log_perplexity, "
       "approx_bleu_score; none = keep no best.",
       value<std::string>()->default_value("loss"))
      ("eval_early_stopping_steps", "Stop training (with a checkpoint, exit status 0) once "
       "--eval_early_stopping_metric has not improved by --eval_early_stopping_metric_delta or "
       "more over this many steps of evaluations. 0 = off.",
       value<int64_t>()->default_value("0"))
      ("eval_early_stopping_metric", "The eval metric early stopping watches: loss, bleu, chrf, "
       "chrf++, ter (these need --eval_bleu and --eval_decode_metrics), accuracy, "
       "accuracy_top5, neg_log_perplexity, approx_bleu_score.",
       value<std::string>()->default_value("loss"))
      ("eval_early_stopping_metric_delta", "The least change of the metric that counts as an "
       "improvement (BLEU counts 0..100).", value<double>()->default_value("0.1"))
      ("eval_early_stopping_metric_minimize", "true: the metric improves as it falls (loss); "
       "false: as it grows (bleu, chrf, accuracy, ...).",
       value<bool>()->default_value("true"));
}

// --eval_bleu: the BLEU of decoding, built here from t2t/translate and handed
// to the trainer as an extra evaluation (the trainer does not decode).
// Sets o->extra_evaluation and o->extra_metrics.
void add_bleu_evaluation(const cxxopts::ParseResult& flags, t2t::TrainOptions* out) {
  const t2t::TrainOptions& o = *out;
  const bool eval_bleu = flags.count("eval_bleu") > 0;
  for (const char* name :
       {"decode_hparams", "decode_from_file", "decode_reference", "eval_decode_metrics"})
    if (!eval_bleu && flags.count(name))
      throw t2t::cli::UsageError(std::string("--") + name + " is for --eval_bleu (BLEU at each "
                                 "evaluation); add --eval_bleu or leave it out");
  if (!eval_bleu) return;
  if (o.schedule == t2t::Schedule::kTrain)
    throw t2t::cli::UsageError("--eval_bleu scores evaluations, and --schedule=train makes none; "
                               "use --schedule=continuous_train_and_eval");
  t2t::DevBleuOptions bleu;
  t2t::HParams dp = t2t::default_decode_hparams();
  dp.parse(flags["decode_hparams"].as<std::string>(), "--decode_hparams");
  bleu.decode = t2t::decode_options(dp);
  bleu.decode.log_results = false;  // a whole dev set at every evaluation
  bleu.source_file = flags["decode_from_file"].as<std::string>();
  bleu.reference_files = t2t::cli::list_flag(flags, "decode_reference");
  const auto metrics = t2t::cli::list_flag(flags, "eval_decode_metrics");
  if (!metrics.empty()) bleu.metrics = metrics;
  for (const std::string& m : bleu.metrics) {
    if (std::count(bleu.metrics.begin(), bleu.metrics.end(), m) > 1)
      throw t2t::cli::UsageError("--eval_decode_metrics names " + m + " twice");
    const t2t::EvalMetricInfo* info = t2t::find_eval_metric(m);
    if (!info || !info->decoded)
      throw t2t::cli::UsageError("--eval_decode_metrics=" + m + ": use bleu, chrf, chrf++ or ter");
  }
  bleu.decodes_path = (std::filesystem::path(o.output_dir) / "eval" / "bleu.decodes").string();
  const std::vector<std::string> scorer_metrics = bleu.metrics;
  auto scorer = std::make_shared<t2t::DevBleu>(o.problem, o.data_dir, std::move(bleu),
                                               torch::Device(o.device));
  out->extra_metrics = scorer_metrics;
  out->extra_evaluation = [scorer](const std::shared_ptr<t2t::T2TModel>& model, int64_t step) {
    return scorer->score(model, step);
  };
}

int train(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  t2t::TrainOptions o;
  o.problem = required(flags, "problem", "--problem=translate_enzh_sample");
  o.model = required(flags, "model", "--model=transformer");
  const std::string set_name = required(flags, "hparams_set", "--hparams_set=transformer_base");
  o.output_dir = required(flags, "output_dir", "--output_dir=t2t_train/run1");
  o.data_dir = required(flags, "data_dir", "--data_dir=t2t_data");
  try {
    o.schedule = t2t::parse_schedule(flags["schedule"].as<std::string>());
  } catch (const t2t::Error& e) {
    throw t2t::cli::usage_error(e);
  }
  o.train_steps = flags["train_steps"].as<int64_t>();
  o.eval_steps = flags["eval_steps"].as<int64_t>();
  o.local_eval_frequency = flags["local_eval_frequency"].as<int64_t>();
  o.save_checkpoints_steps = flags["save_checkpoints_steps"].as<int64_t>();
  o.save_checkpoints_secs = flags["save_checkpoints_secs"].as<int64_t>();
  o.log_step_count_steps = flags["log_step_count_steps"].as<int64_t>();
  o.keep_checkpoint_max = flags["keep_checkpoint_max"].as<int>();
  o.seed = flags["random_seed"].as<uint64_t>();
  o.collective_timeout_secs = flags["collective_timeout"].as<int64_t>();
  o.max_nonfinite_steps = flags["max_nonfinite_steps"].as<int64_t>();
  o.mixed_precision = flags["mixed_precision"].as<std::string>();
  o.cuda_graphs = flags["cuda_graphs"].as<bool>();
  o.warm_start_from = flags["warm_start_from"].as<std::string>();
  o.best_metric = flags["best_metric"].as<std::string>();
  o.early_stopping.steps = flags["eval_early_stopping_steps"].as<int64_t>();
  o.early_stopping.metric = flags["eval_early_stopping_metric"].as<std::string>();
  o.early_stopping.delta = flags["eval_early_stopping_metric_delta"].as<double>();
  o.early_stopping.minimize = flags["eval_early_stopping_metric_minimize"].as<bool>();
  if (flags.count("best_metric") && o.best_metric != "none" && o.schedule == t2t::Schedule::kTrain)
    throw t2t::cli::UsageError("--best_metric picks among evaluations, and --schedule=train makes "
                               "none; use --schedule=continuous_train_and_eval");
  if (o.early_stopping.steps == 0)
    for (const char* name : {"eval_early_stopping_metric", "eval_early_stopping_metric_delta",
                             "eval_early_stopping_metric_minimize"})
      if (flags.count(name))
        throw t2t::cli::UsageError(std::string("--") + name + " shapes early stopping, which "
                                   "is off: add --eval_early_stopping_steps=N or leave it out");
  // A run Tensor2Tensor began in --output_dir goes on with the hparams it
  // was trained with (its hparams.json over --hparams_set), then this
  // command's --hparams_file and --hparams; every resume reads them so.
  const std::string t2t_json = t2t::t2t_hparams_json_path(o.output_dir);
  t2t::HParams hp;
  if (std::filesystem::exists(t2t_json)) {
    hp = t2t::cli::t2t_run_hparams(flags, t2t_json);
    if (!flags["hparams_file"].as<std::string>().empty())
      hp.apply_yaml_file(flags["hparams_file"].as<std::string>(),
                         "--hparams_file " + flags["hparams_file"].as<std::string>());
    hp.parse(flags["hparams"].as<std::string>(), "--hparams");
  } else {
    hp = t2t::resolve_hparams(set_name, flags["hparams_file"].as<std::string>(),
                              flags["hparams"].as<std::string>(), t2t::cli::flag_spelling);
  }
  // Hparams the model would not honour, or that contradict
  // --mixed_precision, are command-line mistakes: said before any worker
  // starts (the notes of accepted ones are logged when the model is built).
  try {
    t2t::check_honoured_hparams(hp, o.model);
    // Checked here; the training step applies it and says when the hparam decided.
    t2t::effective_mixed_precision(hp, o.mixed_precision);
  } catch (const t2t::Error& e) {
    throw t2t::cli::usage_error(e);
  }
  const int worker_gpu = flags["worker_gpu"].as<int>();
  if (worker_gpu < 1) throw t2t::cli::UsageError("--worker_gpu must be >= 1");
  o.worker = t2t::worker_env_from_environment();
  // A worker does not outlive its launcher (torchrun's agent, or ours).
  if (o.worker) t2t::exit_when_launcher_dies(o.worker->rank);
  o.device = t2t::resolve_device(flags["device"].as<std::string>());
  const bool cuda = o.device.rfind("cuda", 0) == 0;
  // One GPU per worker on a machine: LOCAL_RANK picks it.
  const int local_workers = o.worker ? o.worker->local_rank + 1 : worker_gpu;
  if (cuda && local_workers > t2t::cuda_device_count())
    throw t2t::cli::UsageError(
        (o.worker ? "worker LOCAL_RANK=" + std::to_string(o.worker->local_rank) + " needs GPU " +
                        std::to_string(o.worker->local_rank)
                  : "--worker_gpu=" + std::to_string(worker_gpu) + " puts one worker on each GPU") +
        ", but only " + std::to_string(t2t::cuda_device_count()) +
        " CUDA device(s) are visible. Start fewer workers, or use --device=cpu for workers on "
        "the CPU (Gloo).");
  if (o.worker && cuda) o.device = "cuda:" + std::to_string(o.worker->local_rank);
  // Before any worker starts, so that mistakes show once. The BLEU scorer
  // first: the checks look for it.
  add_bleu_evaluation(flags, &o);
  try {
    t2t::check_train_options(o);
  } catch (const t2t::Error& e) {
    throw t2t::cli::usage_error(e);
  }
  // SIGINT/SIGTERM stop training after the current step with a checkpoint
  // (exit status 0); a second one stops at once. An evaluate-only run keeps
  // the signals' default action: it has nothing to save.
  const bool trains = o.schedule != t2t::Schedule::kEvaluate;
  if (trains) t2t::install_stop_handlers();
  if (worker_gpu > 1 && !o.worker) {
    // Flags and hparams were checked above, once, before any worker starts.
    std::optional<t2t::StopForwarder> forward;
    if (trains) forward.emplace();
    return t2t::run_local_workers(t2t::cli::command_line(), worker_gpu);
  }
  if (o.worker && o.worker->world_size > 1) {
    // Workers sharing a machine share its cores unless told otherwise.
    if (flags["threads"].as<int>() == 0) {
      const char* local = std::getenv("LOCAL_WORLD_SIZE");
      const int on_machine = local ? std::max(1, std::atoi(local)) : 1;
      t2t::set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                           on_machine));
    }
    // One voice: the others report only problems.
    if (o.worker->rank != 0 && spdlog::get_level() < spdlog::level::warn)
      spdlog::set_level(spdlog::level::warn);
  }

  spdlog::info("{}", t2t::runtime_summary());
  spdlog::info("problem {}, model {}, hparams set {}, device {}", o.problem, o.model, set_name,
               o.device);
  for (const auto& key : hp.keys())
    spdlog::debug("  hparam {} = {}", key, t2t::hvalue_to_string(hp.value(key)));
  t2t::run_training(o, hp);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-trainer",
                           "Trains a model on a problem's encoded data, T2T style:\n"
                           "  t2t-trainer --problem=translate_enzh_wmt32k --model=transformer \\\n"
                           "    --hparams_set=transformer_base --data_dir=D --output_dir=O\n"
                           "The same command resumes from the latest checkpoint, T2T's own "
                           "included: given the\noutput directory of a Tensor2Tensor run, it goes "
                           "on from T2T's weights, Adam\nstate and step, with T2T's hparams.json. "
                           "SIGINT (Ctrl-C) "
                           "or SIGTERM stops training\nafter the current step with a checkpoint "
                           "(exit status 0); a second one stops at once\n(130 / 143). With "
                           "--worker_gpu, signal the first process: it passes the stop on.\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  t2t::cli::add_model_flags(options);
  add_trainer_flags(options);
  return t2t::cli::run(argc, argv, options, train);
}
