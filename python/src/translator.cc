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
#include "t2t/translate/decode_options.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/run_hparams.h"

namespace py = pybind11;

namespace t2t::python {

Translator::Translator(const std::string& output_dir, const std::string& data_dir,
                       const std::string& problem_name, const std::string& model,
                       const std::string& hparams_set, const std::string& hparams,
                       const std::string& device, const std::optional<std::string>& quantize,
                       int threads, const std::optional<std::string>& checkpoint,
                       int64_t batch_size, int64_t beam_size, double alpha,
                       int64_t max_input_size, double patience) {
  if (threads > 0) set_num_threads(threads);
  TranslatorOptions options;
  options.quantize = parse_quantization(quantize.value_or("none"));
  options.problem = problem_name;
  options.model = model;
  HParamsRequest request;
  request.set_name = hparams_set;
  request.overrides = hparams;
  options.hparams = decoding_hparams(output_dir, request);
  check_decoding_hparams(options.hparams, model);
  options.data_dir = data_dir;
  options.output_dir = output_dir;
  options.checkpoint = checkpoint.value_or("");
  options.device = device;
  HParams dp = default_decode_hparams();
  dp.set("beam_size", beam_size);
  dp.set("alpha", alpha);
  dp.set("batch_size", batch_size);
  dp.set("max_input_size", max_input_size);
  dp.set("patience", patience);
  options.decoding = decode_options(dp);
  options.decoding.log_results = false;
  options.decoding.progress_seconds = 1e9;  // a caller's progress: translate_file(progress=...)
  options.batching.max_batch_size = batch_size;
  options.batching.max_delay = std::chrono::milliseconds(2);
  options.batching.quiet_gap = std::chrono::microseconds(500);
  options.batching.max_queue = int64_t{1} << 40;  // a caller's whole list is queued at once
  translator_ = std::make_unique<t2t::Translator>(std::move(options));
  device_ = translator_->device().str();
}

Translator::~Translator() {
  translator_->close_queue();
  // A worker that logs needs the GIL (logging.cc): joining must not hold it.
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    translator_->join_workers();
  } else {
    translator_->join_workers();
  }
}

py::list Translator::translate(const std::vector<std::string>& texts, int64_t beam_size,
                               double alpha, int64_t n_best, bool return_scores,
                               std::optional<int64_t> max_batch_size, double patience) {
  SearchRequest request;
  request.beam_size = beam_size;
  request.alpha = alpha;
  request.n_best = n_best;
  request.patience = patience;
  // Errors name the options as the library does (OptionError::what()),
  // which is how the keyword arguments spell them.
  std::vector<Translation> results;
  {
    py::gil_scoped_release release;
    results = translator_->translate(texts, request, max_batch_size);
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
  return translator_->current()->batch_translator->format(Translation{{text}, {0.0}});
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
  translator_->translate_file(source, target, report);
}

std::vector<double> Translator::score(const std::vector<std::string>& sources,
                                      const std::vector<std::string>& targets) {
  py::gil_scoped_release release;
  return translator_->score(sources, targets);
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
