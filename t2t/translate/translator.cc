#include "t2t/translate/translator.h"

#include <ATen/Parallel.h>

#include <filesystem>
#include <iterator>
#include <numeric>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"
#include "t2t/core/stopwatch.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/model/ensemble_model.h"
#include "t2t/text/text_encoder.h"
#include "t2t/model/t2t_model.h"
#include "t2t/translate/batch_workers.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/decode_pieces.h"
#include "t2t/translate/model_loading.h"
#include "t2t/translate/parallel_batches.h"
#include "t2t/translate/score_file.h"
#include "t2t/translate/source_guides.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// The newest checkpoint in the directory of `serving`'s ("" when none).
std::string newest_beside(const LoadedModel& serving) {
  std::string dir = fs::path(serving.checkpoint).parent_path().string();
  if (dir.empty()) dir = ".";
  // t2t's checkpoints, else those of a T2T run (model.ckpt-N, TensorFlow's).
  const std::string newest = latest_checkpoint(dir);
  return newest.empty() ? find_tf_checkpoint(dir) : newest;
}

// Whether `checkpoint` is the file `serving` came from, however its path
// was spelled (with ./ or through a symbolic link).
bool is_serving(const LoadedModel& serving, const std::string& checkpoint) {
  std::error_code ec;
  return fs::path(checkpoint) == fs::path(serving.checkpoint) ||
         fs::equivalent(checkpoint, serving.checkpoint, ec);
}

}  // namespace

// The shared queue and the workers that decode its batches.
struct Translator::Queue {
  Queue(const BatchPolicy& policy, const c10::Device& device, int requested_workers)
      : queue(policy), threads(at::get_num_threads()) {
    // As t2t-decoder decodes a file: on the CPU batches side by side, one a
    // LibTorch thread by default; on a GPU one at a time. Counted here, on
    // the thread that built the translator: OpenMP's thread count is per
    // thread, and a caller's (an HTTP handler's) may differ.
    workers = device.is_cpu() ? parallel_batches(requested_workers, threads, int64_t{1} << 40) : 1;
  }
  BatchQueue queue;
  const int threads;
  int workers = 1;
  std::mutex start_mutex;
  OnBatch on_batch;
  std::unique_ptr<BatchWorkers> running;  // started on first submit
};

Translator::Translator(TranslatorOptions options, Load when)
    : options_(std::move(options)),
      device_(resolve_device(options_.device)),
      queue_(std::make_unique<Queue>(options_.batching, device_,
                                     options_.decoding.parallel_batches)) {
  check_quantization(options_.quantize, device_);
  check_cuda_graphs(options_.cuda_graphs, device_);
  problem_ = create_problem(options_.problem);
  if (!options_.glossary.empty()) glossary_ = Glossary::load(options_.glossary);
  options_.decoding.search.alignment_probe = alignment_probe(options_.decoding, options_.hparams);
  if (when == Load::kNow) load();
}

Translator::Translator(TranslatorOptions options, std::shared_ptr<T2TModel> model,
                       FeatureEncoders encoders)
    : options_(std::move(options)),
      device_(resolve_device(options_.device)),
      queue_(std::make_unique<Queue>(options_.batching, device_,
                                     options_.decoding.parallel_batches)) {
  check_quantization(options_.quantize, device_);
  check_cuda_graphs(options_.cuda_graphs, device_);
  if (!options_.problem.empty()) problem_ = create_problem(options_.problem);
  if (!options_.glossary.empty()) glossary_ = Glossary::load(options_.glossary);
  options_.decoding.search.alignment_probe = alignment_probe(options_.decoding, options_.hparams);
  if (!options_.ensemble.empty())
    throw OptionError("ensemble", "a translator of a model built by its caller has no {ensemble}; "
                                  "build the EnsembleModel yourself");
  LoadedModel loaded;
  loaded.model = std::move(model);
  loaded.model->to(device_);
  loaded.model->eval();
  loaded.encoders = std::move(encoders);
  auto ready_model = ready(std::move(loaded));
  std::lock_guard<std::mutex> lock(current_mutex_);
  current_ = std::move(ready_model);
}

Translator::~Translator() {
  close_queue();
  join_workers();
}

std::shared_ptr<const LoadedModel> Translator::ready(LoadedModel loaded) const {
  prepare_model(*loaded.model, options_.quantize, options_.cuda_graphs);
  if (loaded.encoders.inputs && loaded.encoders.targets)
  {
    loaded.batch_translator = std::make_shared<BatchTranslator>(loaded.model, loaded.encoders.inputs,
                                               loaded.encoders.targets, options_.decoding,
                                               device_);
    loaded.batch_translator->set_shortlist(shortlist(loaded.encoders), options_.shortlist.limits);
  }
  return std::make_shared<const LoadedModel>(std::move(loaded));
}

std::shared_ptr<const LexicalShortlist> Translator::shortlist(
    const FeatureEncoders& encoders) const {
  std::lock_guard<std::mutex> lock(shortlist_mutex_);
  if (!shortlist_)
    shortlist_ = load_shortlist(options_.shortlist, options_.output_dir, *encoders.inputs,
                                *encoders.targets);
  return *shortlist_;
}

LoadedModel Translator::load_ensemble(const std::string& checkpoint) const {
  LoadedModel main = load_model(*problem_, options_.model, options_.hparams, options_.data_dir,
                                options_.output_dir, checkpoint, device_);
  if (options_.ensemble.empty()) return main;
  std::vector<std::shared_ptr<T2TModel>> members{main.model};
  std::vector<double> weights{options_.main_weight};
  for (size_t i = 0; i < options_.ensemble.size(); ++i) {
    const EnsembleMember& m = options_.ensemble[i];
    if (m.checkpoint.empty())
      throw OptionError("ensemble", "{ensemble} member " + std::to_string(i + 1) +
                                        " names no checkpoint");
    try {
      members.push_back(load_model(*problem_, options_.model, options_.hparams, options_.data_dir,
                                   options_.output_dir, m.checkpoint, device_)
                            .model);
    } catch (const std::exception& e) {
      throw Error("ensemble member " + std::to_string(i + 1) + " (" + m.checkpoint +
                  "): " + e.what() + "; an ensemble's models share the main model's problem, "
                  "vocabularies and hparams");
    }
    weights.push_back(m.weight);
    spdlog::info("ensemble member {}: {} (weight {})", i + 2, m.checkpoint, m.weight);
  }
  // One problem, one target vocabulary: a member of another size failed
  // to load above.
  const int64_t vocab = main.encoders.targets ? main.encoders.targets->vocab_size() : 0;
  std::vector<int64_t> vocab_sizes(weights.size(), vocab);
  main.model = std::make_shared<EnsembleModel>(std::move(members), std::move(weights),
                                               std::move(vocab_sizes));
  main.model->eval();
  return main;
}

std::shared_ptr<const LoadedModel> Translator::load_checkpoint(const std::string& checkpoint) const {
  const Stopwatch clock;
  auto loaded = ready(load_ensemble(checkpoint));
  if (options_.warm_up) {
    spdlog::info("loaded {} (step {}) in {:.1f} s", loaded->checkpoint, loaded->step,
                 clock.seconds());
    // Before the model serves: its first requests then take no longer than
    // the later ones.
    spdlog::info("warmed up on synthetic batches of 1 to {} sentences in {:.2f} s",
                 options_.decoding.batch_size, loaded->batch_translator->warm_up());
  }
  return loaded;
}

void Translator::load() {
  auto loaded = load_checkpoint(options_.checkpoint);
  std::lock_guard<std::mutex> lock(current_mutex_);
  current_ = std::move(loaded);
}

ReloadResult Translator::reload() {
  std::lock_guard<std::mutex> reloading(reload_mutex_);
  const auto serving = current();
  if (!serving) throw Error("no model is loaded yet");
  if (!options_.ensemble.empty())
    throw OptionError("ensemble", "an {ensemble} is not reloaded: its members' newer checkpoints "
                                  "would not come together; restart with the checkpoints to use");
  ReloadResult result;
  result.previous_step = serving->step;
  const std::string newest = newest_beside(*serving);
  if (newest.empty())
    throw Error("no checkpoint (model.ckpt-N.pt, or T2T's model.ckpt-N) left beside " +
                serving->checkpoint + ", which is still serving");
  if (is_serving(*serving, newest)) {
    result.checkpoint = newest;
    result.step = serving->step;
    return result;
  }
  std::shared_ptr<const LoadedModel> fresh;
  try {
    fresh = load_checkpoint(newest);
  } catch (const std::exception& e) {
    throw Error("could not load " + newest + ", still serving " + serving->checkpoint +
                " (step " + std::to_string(serving->step) + "): " + e.what());
  }
  result.reloaded = true;
  result.checkpoint = fresh->checkpoint;
  result.step = fresh->step;
  std::lock_guard<std::mutex> lock(current_mutex_);
  current_ = std::move(fresh);
  return result;
}

std::string Translator::newer_checkpoint() const {
  const auto serving = current();
  if (!serving) return "";
  const std::string newest = newest_beside(*serving);
  return newest.empty() || is_serving(*serving, newest) ? "" : newest;
}

std::shared_ptr<const LoadedModel> Translator::current() const {
  std::lock_guard<std::mutex> lock(current_mutex_);
  return current_;
}

std::shared_ptr<const LoadedModel> Translator::require_current() const {
  auto model = current();
  if (!model) throw Error("no model is loaded yet");
  if (!model->batch_translator)
    throw Error("this translator's model has no vocabularies: it translates ids only");
  return model;
}

std::vector<std::vector<int64_t>> Translator::encode(BatchTranslator& decoder,
                                                     const std::vector<std::string>& texts) const {
  std::vector<std::vector<int64_t>> sources;
  sources.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    sources.push_back(decoder.encode_source(texts[i], "text " + std::to_string(i)));
  return sources;
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& texts,
                                               const SearchRequest& request,
                                               std::optional<int64_t> batch_size,
                                               const std::vector<SourceGuide>& guides) {
  const auto model = require_current();
  const SearchOptions search = apply_search_request(model->batch_translator->options().search, request);
  if (batch_size && *batch_size < 1)
    throw OptionError("max_batch_size", "{max_batch_size} must be at least 1, not " +
                                            std::to_string(*batch_size));
  auto sources = encode(*model->batch_translator, texts);
  const GuidedSources guided = guide(*model, texts, sources, guides, request.glossary, search);
  auto translations = translate_encoded(model, std::move(sources), search, batch_size,
                                        guided.guides);
  guided.annotate(translations);
  return translations;
}

GuidedSources Translator::guide(const LoadedModel& model, const std::vector<std::string>& texts,
                                const std::vector<std::vector<int64_t>>& sources,
                                const std::vector<SourceGuide>& guides,
                                const std::vector<GlossaryEntry>& glossary,
                                const SearchOptions& search) const {
  if (!model.batch_translator)
    throw Error("this translator's model has no vocabularies: it translates ids only");
  const Glossary extra = Glossary::from_entries(glossary);
  return guide_sources(*model.batch_translator, texts, sources, guides, {&glossary_, &extra},
                       search, "text");
}

std::vector<Translation> Translator::translate_encoded(
    const std::shared_ptr<const LoadedModel>& model, std::vector<std::vector<int64_t>> sources,
    const SearchOptions& search, std::optional<int64_t> batch_size,
    std::vector<TargetGuide> guides) {
  const int64_t shared = queue_->queue.policy().max_batch_size;
  const int64_t batch = batch_size.value_or(shared);
  if (static_cast<int64_t>(sources.size()) >= batch || batch != shared) {
    // Enough for full batches of its own, or batches of another size than
    // the queue forms: batched as t2t-decoder batches a file, which int8
    // needs for t2t-decoder's very outputs (its activations are quantized
    // per batch).
    return model->batch_translator->translate(sources, search, batch, 0, nullptr, guides);
  }
  // A few sentences: they wait for other callers' to share a batch, as
  // t2t-serve's requests do.
  auto pending = std::make_shared<PendingRequest>(std::move(sources), search, model,
                                                  std::move(guides));
  if (submit(pending) != BatchQueue::Admission::kQueued)
    throw Error("the translator is closing and takes no more sentences");
  if (!pending->wait()) throw Error(pending->error());
  return pending->translations();
}

DecodeOutcome Translator::translate_file(const std::string& source, const std::string& target,
                                         const ProgressFn& progress, FileDecodeExtras extras) {
  if (!extras.glossary) extras.glossary = &glossary_;
  return decode_file(*require_current()->batch_translator, source, target, progress, extras);
}

namespace {

// What decides a file's translation, a "key: value" a line: a piece made
// with other settings must not be joined with these.
std::string output_settings(const TranslatorOptions& o, const LoadedModel& model) {
  const SearchOptions& s = o.decoding.search;
  fmt::memory_buffer out;
  auto line = [&out](const char* key, const std::string& value) {
    fmt::format_to(std::back_inserter(out), "{}: {}\n", key, value);
  };
  line("checkpoint", fmt::format("{} (step {})", model.checkpoint, model.step));
  line("problem", o.problem);
  line("model", o.model);
  line("quantize", quantization_name(o.quantize));
  for (const EnsembleMember& m : o.ensemble)
    line("ensemble", fmt::format("{} weight {:.17g}", m.checkpoint, m.weight));
  if (!o.ensemble.empty()) line("main_weight", fmt::format("{:.17g}", o.main_weight));
  line("glossary", o.glossary);
  line("shortlist", fmt::format("{} best {} frequent {} threshold {:.17g}", o.shortlist.file,
                                o.shortlist.limits.best, o.shortlist.limits.frequent,
                                o.shortlist.threshold));
  line("search", fmt::format("beam_size {} alpha {:.17g} extra_length {} batch_decode_length {} "
                             "patience {:.17g} stop_early {} num_return {}",
                             s.beam_size, s.alpha, s.extra_length, s.batch_decode_length,
                             s.patience, s.stop_early, s.num_return));
  line("sampling", fmt::format("random {} temperature {:.17g} keep_top_k {} seed {}",
                               s.sampling.random, s.sampling.temperature, s.sampling.keep_top_k,
                               s.sampling.seed));
  line("repetition", fmt::format("no_repeat_ngram_size {} penalty {:.17g}",
                                 s.no_repeat_ngram_size, s.repetition_penalty));
  line("alignment", fmt::format("{} threshold {:.17g} soft {}", s.alignment,
                                s.alignment_threshold, o.decoding.soft_alignment));
  line("output", fmt::format("return_beams {} write_beam_scores {} max_input_length {}",
                             o.decoding.return_beams, o.decoding.write_beam_scores,
                             o.decoding.max_input_length));
  return fmt::to_string(out);
}

}  // namespace

DecodeOutcome Translator::translate_file_in_pieces(const std::string& source,
                                                   const std::string& target, int64_t piece_lines,
                                                   const ProgressFn& progress,
                                                   FileDecodeExtras extras) {
  if (!extras.glossary) extras.glossary = &glossary_;
  const auto model = require_current();
  return decode_file_in_pieces(*model->batch_translator, source, target, piece_lines,
                               output_settings(options_, *model), progress, extras);
}

int64_t Translator::translate_stream(std::istream& in, std::ostream& out) {
  return decode_interactively(*require_current()->batch_translator, in, out);
}

DecodeOutcome Translator::translate_dev_split(const std::string& decodes_path) {
  return decode_dev_split(*require_current()->batch_translator, *problem_, options_.data_dir, decodes_path);
}

std::vector<double> Translator::score(const std::vector<std::string>& sources,
                                      const std::vector<std::string>& targets,
                                      std::vector<WordAlignment>* alignments) {
  if (sources.size() != targets.size())
    throw Error(std::to_string(sources.size()) + " sources but " +
                std::to_string(targets.size()) + " targets: score() takes pairs");
  const auto model = require_current();
  const auto source_ids = encode(*model->batch_translator, sources);
  std::vector<std::vector<int64_t>> target_ids;
  target_ids.reserve(targets.size());
  for (const std::string& t : targets) target_ids.push_back(model->batch_translator->encode_target(t));
  // As --score_file: a pair needs both sides.
  for (size_t i = 0; i < sources.size(); ++i)
    if (source_ids[i].empty() || target_ids[i].empty())
      throw Error("pair " + std::to_string(i + 1) + " has an empty " +
                  (source_ids[i].empty() ? "source" : "target") +
                  "; every pair needs both sides");
  return model->batch_translator->score(source_ids, target_ids, alignments);
}

std::vector<double> Translator::score_file(const std::string& path,
                                           std::vector<WordAlignment>* alignments) {
  return t2t::score_file(*require_current()->batch_translator, path, alignments);
}

void Translator::on_batch(OnBatch observer) {
  std::lock_guard<std::mutex> lock(queue_->start_mutex);
  queue_->on_batch = std::move(observer);
}

BatchQueue::Admission Translator::submit(const std::shared_ptr<PendingRequest>& request) {
  {
    std::lock_guard<std::mutex> lock(queue_->start_mutex);
    if (!queue_->running)
      queue_->running = std::make_unique<BatchWorkers>(queue_->queue, queue_->workers,
                                                       queue_->threads, queue_->on_batch);
  }
  return queue_->queue.submit(request);
}

int Translator::queue_workers() const { return queue_->workers; }

int64_t Translator::queue_depth() const { return queue_->queue.depth(); }

void Translator::close_queue() { queue_->queue.close(); }

int64_t Translator::cancel_waiting(const std::string& why) {
  return queue_->queue.cancel_waiting(why);
}

void Translator::join_workers() {
  std::unique_ptr<BatchWorkers> workers;
  {
    std::lock_guard<std::mutex> lock(queue_->start_mutex);
    workers = std::move(queue_->running);
  }
  if (workers) workers->join();
}

}  // namespace t2t
