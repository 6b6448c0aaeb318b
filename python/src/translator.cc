// t2t.Translator: a trained run loaded once, translating and scoring as
// t2t-decoder does (the same loading, hparams, batching and search), with
// the GIL released while the library works.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/translator.h"
#include "t2t/core/error.h"
#include "t2t/core/runtime.h"
#include "t2t/decode/beam_search.h"
#include "t2t/decode/decode_modes.h"
#include "t2t/decode/decode_options.h"
#include "t2t/decode/parallel_batches.h"
#include "t2t/decode/run_hparams.h"

namespace py = pybind11;

namespace t2t::python {

Translator::Translator(const std::string& output_dir, const std::string& data_dir,
                       const std::string& problem_name, const std::string& model,
                       const std::string& hparams_set, const std::string& hparams,
                       const std::string& device, const std::optional<std::string>& quantize,
                       int threads, const std::optional<std::string>& checkpoint,
                       int64_t batch_size, int64_t beam_size, double alpha,
                       int64_t max_input_size, double patience)
    : model_name_(model) {
  if (threads > 0) set_num_threads(threads);
  device_ = resolve_device(device);
  const std::string mode = quantize.value_or("none");
  check_quantize_mode(mode, torch::Device(device_));
  problem_ = create_problem(problem_name);
  HParamsRequest request;
  request.set_name = hparams_set;
  request.overrides = hparams;
  const HParams hp = decoding_hparams(output_dir, request);
  check_decoding_hparams(hp, model);
  serving_ = std::make_shared<ServingModel>();
  serving_->loaded = load_for_decoding(*problem_, model, hp, data_dir, output_dir,
                                       checkpoint.value_or(""), torch::Device(device_));
  prepare_for_decoding(*serving_->loaded.model, mode);
  HParams dp = default_decode_hparams();
  dp.set("beam_size", beam_size);
  dp.set("alpha", alpha);
  dp.set("batch_size", batch_size);
  dp.set("max_input_size", max_input_size);
  dp.set("patience", patience);
  DecodeOptions options = decode_options(dp);
  options.log_results = false;
  options.progress_seconds = 1e9;  // a caller's progress: translate_file(progress=...)
  const LoadedModel& loaded = serving_->loaded;
  serving_->decoder = std::make_unique<Decoder>(loaded.model, loaded.encoders.inputs,
                                                loaded.encoders.targets, options,
                                                torch::Device(device_));
  BatchPolicy policy;
  policy.max_batch_size = batch_size;
  policy.max_delay = std::chrono::milliseconds(2);
  policy.quiet_gap = std::chrono::microseconds(500);
  policy.max_queue = int64_t{1} << 40;  // a caller's whole list is queued at once
  queue_ = std::make_unique<BatchQueue>(policy);
  // Batches side by side on the CPU as t2t-decoder decodes them (one per
  // LibTorch thread), one at a time on a GPU.
  const int threads_now = at::get_num_threads();
  const int workers = torch::Device(device_).is_cpu()
                          ? parallel_batches(0, threads_now, int64_t{1} << 40)
                          : 1;
  workers_ = std::make_unique<BatchWorkers>(*queue_, workers, threads_now);
}

Translator::~Translator() {
  queue_->close();
  // A worker that logs needs the GIL (logging.cc): joining must not hold it.
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    workers_->join();
  } else {
    workers_->join();
  }
}

std::vector<std::vector<int64_t>> Translator::encode_sources(const std::vector<std::string>& texts) {
  std::vector<std::vector<int64_t>> sources;
  sources.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    sources.push_back(decoder().encode_source(texts[i], "text " + std::to_string(i)));
  return sources;
}

py::list Translator::translate(const std::vector<std::string>& texts, int64_t beam_size,
                               double alpha, int64_t n_best, bool return_scores,
                               std::optional<int64_t> max_batch_size, double patience) {
  if (beam_size < 1) throw Error("beam_size must be at least 1, not " + std::to_string(beam_size));
  if (n_best < 1 || n_best > beam_size)
    throw Error("n_best must be between 1 and beam_size (" + std::to_string(beam_size) +
                "), not " + std::to_string(n_best));
  SearchOptions search = decoder().options().search;
  search.beam_size = beam_size;
  search.alpha = alpha;
  search.num_return = n_best;
  // As T2T with more than one beam returned: the lower ones must settle too.
  if (n_best > 1) search.stop_early = false;
  search.patience = patience;
  check_search_options(search);
  if (max_batch_size && *max_batch_size < 1)
    throw Error("max_batch_size must be at least 1, not " + std::to_string(*max_batch_size));
  std::vector<Translation> results;
  {
    py::gil_scoped_release release;
    auto sources = encode_sources(texts);
    const int64_t batch = max_batch_size.value_or(queue_->policy().max_batch_size);
    if (static_cast<int64_t>(sources.size()) >= batch ||
        batch != queue_->policy().max_batch_size) {
      // Enough for full batches of its own, or batches of another size than
      // the queue forms: batched as t2t-decoder batches a file, which int8
      // needs for t2t-decoder's very outputs (its activations are quantized
      // per batch).
      results = decoder().translate(sources, search, batch);
    } else {
      // A few sentences: they wait for other callers' to share a batch, as
      // t2t-serve's requests do.
      auto request = std::make_shared<PendingRequest>(std::move(sources), search, serving_);
      if (queue_->submit(request) != BatchQueue::Admission::kQueued)
        throw Error("the Translator is closing and takes no more sentences");
      if (!request->wait()) throw Error(request->error());
      results = request->translations();
    }
  }
  py::list out;
  for (const Translation& t : results) {
    if (n_best == 1 && !return_scores) {
      out.append(clean(t.texts.empty() ? std::string() : t.texts[0]));
      continue;
    }
    py::list hypotheses;
    for (size_t k = 0; k < t.texts.size(); ++k) {
      if (return_scores)
        hypotheses.append(py::make_tuple(clean(t.texts[k]), t.scores[k]));
      else
        hypotheses.append(clean(t.texts[k]));
    }
    out.append(hypotheses);
  }
  return out;
}

std::string Translator::clean(const std::string& text) const {
  // What t2t-decoder writes for one hypothesis (tabs and line breaks
  // become spaces).
  return decoder().format(Translation{{text}, {0.0}});
}

void Translator::translate_file(const std::string& source, const std::string& target,
                                const py::object& progress_arg) {
  // True: the package's text bar; a callable: the caller's own.
  py::object progress = progress_arg;
  if (py::isinstance<py::bool_>(progress))
    progress = progress.cast<bool>() ? py::module_::import("t2t._progress").attr("TextBar")()
                                     : py::none();
  else if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
    throw py::type_error("progress must be True, False, None or a callable(done, total)");
  ProgressFn report;
  if (!progress.is_none())
    report = [&progress](int64_t done, int64_t total) {
      py::gil_scoped_acquire gil;
      try {
        progress(done, total);
      } catch (const py::error_already_set& e) {
        // A failing callback must not stop the translation: said once a batch.
        PyErr_WarnEx(PyExc_RuntimeWarning, e.what(), 1);
      }
    };
  py::gil_scoped_release release;
  decode_file(decoder(), source, target, report);
}

std::vector<double> Translator::score(const std::vector<std::string>& sources,
                                      const std::vector<std::string>& targets) {
  if (sources.size() != targets.size())
    throw Error(std::to_string(sources.size()) + " sources but " +
                std::to_string(targets.size()) + " targets: score() takes pairs");
  py::gil_scoped_release release;
  const auto source_ids = encode_sources(sources);
  std::vector<std::vector<int64_t>> target_ids;
  target_ids.reserve(targets.size());
  for (const std::string& t : targets) target_ids.push_back(decoder().encode_target(t));
  // As --score_file: a pair needs both sides.
  for (size_t i = 0; i < sources.size(); ++i)
    if (source_ids[i].empty() || target_ids[i].empty())
      throw Error("pair " + std::to_string(i + 1) + " has an empty " +
                  (source_ids[i].empty() ? "source" : "target") +
                  "; every pair needs both sides");
  return decoder().score(source_ids, target_ids);
}

void bind_translator(py::module_& m) {
  py::class_<Translator>(m, "Translator", R"doc(
A trained run, loaded once, that translates and scores as t2t-decoder does.

output_dir: the run directory (t2t's, or a T2T run's with model.ckpt-N.index).
data_dir, problem: where the problem's vocabularies are, and its name.
model, hparams_set, hparams: as t2t-decoder's flags; the run's own hparams.yaml
  comes first, hparams_set is needed for T2T runs and runs without one.
device: "cpu", "cuda", "cuda:N" or "auto".  quantize: None, "int8" (CPU) or "bf16".
threads: LibTorch's intra-op threads for the whole process (0: leave as is).
checkpoint: a checkpoint file or run directory (default: the latest in output_dir).
batch_size, beam_size, alpha, max_input_size, patience: the defaults of
  translate() and what translate_file() uses, as --decode_hparams (patience 0:
  T2T's stopping test; 2: also stop a sentence as CTranslate2 does, faster,
  rarely another result).

One Translator may be used from several Python threads at once: a call of fewer
than batch_size sentences shares batches with other threads' calls, as
t2t-serve batches concurrent requests; a longer one is batched as t2t-decoder
batches a file.
)doc")
      .def(py::init<const std::string&, const std::string&, const std::string&,
                    const std::string&, const std::string&, const std::string&,
                    const std::string&, const std::optional<std::string>&, int,
                    const std::optional<std::string>&, int64_t, int64_t, double, int64_t,
                    double>(),
           py::arg("output_dir"), py::kw_only(), py::arg("data_dir"), py::arg("problem"),
           py::arg("model") = "transformer", py::arg("hparams_set") = "",
           py::arg("hparams") = "", py::arg("device") = "cpu",
           py::arg("quantize") = py::none(), py::arg("threads") = 0,
           py::arg("checkpoint") = py::none(), py::arg("batch_size") = 32,
           py::arg("beam_size") = 4, py::arg("alpha") = 0.6,
           py::arg("max_input_size") = 1024, py::arg("patience") = 0.0)
      .def("translate", &Translator::translate, py::arg("texts"), py::kw_only(),
           py::arg("beam_size") = 4, py::arg("alpha") = 0.6, py::arg("n_best") = 1,
           py::arg("return_scores") = false, py::arg("max_batch_size") = py::none(),
           py::arg("patience") = 0.0,
           R"doc(
Translates a list of sentences. Returns one string per sentence, as
t2t-decoder writes it; with n_best > 1 or return_scores, one list per
sentence of its n_best hypotheses, best first, each a (text, score) pair
when return_scores (the search's length-penalised log-probability).
patience: 0, T2T's stopping test alone; 2 also stops a sentence as
CTranslate2 does (see the class).
)doc")
      .def("translate_file", &Translator::translate_file, py::arg("source"), py::arg("target"),
           py::kw_only(), py::arg("progress") = false,
           R"doc(
Translates a file as t2t-decoder --decode_from_file does, into target (written
whole, then renamed). progress=True draws a progress bar on standard error; a
callable progress(done, total) is called after each batch instead.
)doc")
      .def("score", &Translator::score, py::arg("sources"), py::arg("targets"),
           R"doc(
The log-probability of each target given its source (teacher-forced, natural
log, EOS included), as t2t-decoder --score_file.
)doc")
      .def_property_readonly("step", [](const Translator& t) { return t.step(); },
                             "The training step of the checkpoint loaded.")
      .def_property_readonly("checkpoint", [](const Translator& t) { return t.checkpoint(); },
                             "The checkpoint file loaded.")
      .def_property_readonly("device", [](const Translator& t) { return t.device(); });
}

}  // namespace t2t::python
