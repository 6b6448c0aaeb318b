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
                       int64_t max_input_size, double patience,
                       const std::optional<std::string>& glossary,
                       const std::optional<std::vector<std::string>>& ensemble,
                       const std::optional<std::vector<double>>& ensemble_weights,
                       std::optional<int64_t> alignment_layer,
                       std::optional<int64_t> alignment_head, int64_t batch_tokens,
                       const std::optional<std::string>& shortlist, int64_t shortlist_best,
                       int64_t shortlist_frequent) {
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
  dp.set("batch_tokens", batch_tokens);
  if (alignment_layer) dp.set("alignment_layer", std::to_string(*alignment_layer));
  if (alignment_head) dp.set("alignment_head", std::to_string(*alignment_head));
  options.decoding = decode_options(dp);
  options.glossary = glossary.value_or("");
  options.shortlist.file = shortlist.value_or("");
  options.shortlist.limits.best = shortlist_best;
  options.shortlist.limits.frequent = shortlist_frequent;
  if (!shortlist && (shortlist_best != 0 || shortlist_frequent != -1))
    throw OptionError(shortlist_best != 0 ? "shortlist_best" : "shortlist_frequent",
                      "{" + std::string(shortlist_best != 0 ? "shortlist_best" : "shortlist_frequent") +
                          "} goes with {shortlist}, which is not given");
  if (ensemble) {
    for (const auto& path : *ensemble) options.ensemble.push_back({path, 1.0});
    if (ensemble_weights) {
      if (ensemble_weights->size() != ensemble->size() + 1)
        throw OptionError("ensemble_weights",
                          "{ensemble_weights} needs one weight per model: the main one, then "
                          "each of the " + std::to_string(ensemble->size()) + " of {ensemble}");
      options.main_weight = (*ensemble_weights)[0];
      for (size_t i = 0; i < ensemble->size(); ++i)
        options.ensemble[i].weight = (*ensemble_weights)[i + 1];
    }
  } else if (ensemble_weights) {
    throw OptionError("ensemble_weights", "{ensemble_weights} goes with {ensemble}");
  }
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

namespace {

py::dict alignment_dict(const WordAlignment& a) {
  py::list hard;
  for (const auto& [i, j] : a.hard) hard.append(py::make_tuple(i, j));
  py::dict d;
  d["source_words"] = a.source_words;
  d["target_words"] = a.target_words;
  d["hard"] = hard;
  d["soft"] = a.soft;
  return d;
}

}  // namespace

py::list Translator::translate(const std::vector<std::string>& texts, int64_t beam_size,
                               double alpha, int64_t n_best, bool return_scores,
                               std::optional<int64_t> max_batch_size, double patience,
                               const Guidance& guidance) {
  SearchRequest request;
  request.beam_size = beam_size;
  request.alpha = alpha;
  request.n_best = n_best;
  request.patience = patience;
  request.no_repeat_ngram_size = guidance.no_repeat_ngram_size;
  request.repetition_penalty = guidance.repetition_penalty;
  request.alignment = guidance.alignment;
  request.alignment_threshold = guidance.alignment_threshold;
  if (guidance.glossary)
    for (const auto& [source, target] : *guidance.glossary) request.glossary.push_back({source, target});
  std::vector<SourceGuide> guides;
  auto parallel = [&](const char* name, size_t size) {
    if (size != texts.size())
      throw OptionError(name, std::string("{") + name + "} has " + std::to_string(size) +
                                  " entries for " + std::to_string(texts.size()) +
                                  " texts: give one per text (empty for none)");
  };
  if (guidance.prefix || guidance.constraints) guides.resize(texts.size());
  if (guidance.prefix) {
    parallel("prefix", guidance.prefix->size());
    for (size_t i = 0; i < texts.size(); ++i) guides[i].prefix = (*guidance.prefix)[i];
  }
  if (guidance.constraints) {
    parallel("constraints", guidance.constraints->size());
    for (size_t i = 0; i < texts.size(); ++i) guides[i].constraints = (*guidance.constraints)[i];
  }
  // Errors name the options as the library does (OptionError::what()),
  // which is how the keyword arguments spell them.
  std::vector<Translation> results;
  {
    py::gil_scoped_release release;
    results = translator_->translate(texts, request, max_batch_size, guides);
  }
  py::list out;
  const bool details = guidance.return_details || guidance.alignment;
  for (const Translation& t : results) {
    if (details) {
      py::list hypotheses;
      for (size_t k = 0; k < t.texts.size(); ++k) {
        py::dict h;
        h["text"] = clean(t.texts[k]);
        h["score"] = t.scores[k];
        if (k < t.alignments.size()) h["alignment"] = alignment_dict(t.alignments[k]);
        h["constraints"] = t.constraints;
        std::vector<bool> met;
        if (k < t.constraints_met.size())
          for (char m : t.constraints_met[k]) met.push_back(m != 0);
        h["constraints_met"] = met;
        hypotheses.append(h);
      }
      if (n_best == 1)
        out.append(hypotheses.empty() ? py::object(py::none()) : py::object(hypotheses[0]));
      else
        out.append(hypotheses);
      continue;
    }
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
                                const py::object& progress_arg, int64_t piece_lines) {
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
  if (piece_lines < 0)
    throw py::value_error("piece_lines=" + std::to_string(piece_lines) +
                          ": give the lines of a piece, or 0 for the whole file at once");
  py::gil_scoped_release release;
  if (piece_lines > 0)
    translator_->translate_file_in_pieces(source, target, piece_lines, report);
  else
    translator_->translate_file(source, target, report);
}

py::list Translator::score(const std::vector<std::string>& sources,
                           const std::vector<std::string>& targets, bool alignment) {
  std::vector<double> scores;
  std::vector<WordAlignment> alignments;
  {
    py::gil_scoped_release release;
    scores = translator_->score(sources, targets, alignment ? &alignments : nullptr);
  }
  py::list out;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (alignment)
      out.append(py::make_tuple(scores[i], alignment_dict(alignments[i])));
    else
      out.append(scores[i]);
  }
  return out;
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
glossary: a file of "source term<TAB>target term" lines whose terms every
  translation must then hold. ensemble: more checkpoints decoded with this one
  (log-probabilities averaged; ensemble_weights: the main one's, then each's).
alignment_layer, alignment_head: the attention alignments read (default: what
  guided alignment trained, else the last layer's mean over heads).
batch_tokens: > 0 counts translate_file()'s batches in source tokens.
shortlist: a lexical shortlist file (t2t-shortlist's vmap, or Marian's): each
  batch's output layer over the target tokens its source tokens list only
  (faster; translations may differ slightly). A relative name is also looked
  for in output_dir. shortlist_best: targets per source token (0: all listed);
  shortlist_frequent: always-allowed targets (-1: all listed).
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
                    double, const std::optional<std::string>&,
                    const std::optional<std::vector<std::string>>&,
                    const std::optional<std::vector<double>>&, std::optional<int64_t>,
                    std::optional<int64_t>, int64_t, const std::optional<std::string>&,
                    int64_t, int64_t>(),
           py::arg("output_dir"), py::kw_only(), py::arg("data_dir"), py::arg("problem"),
           py::arg("model") = "transformer", py::arg("hparams_set") = "",
           py::arg("hparams") = "", py::arg("device") = "cpu",
           py::arg("quantize") = py::none(), py::arg("threads") = 0,
           py::arg("checkpoint") = py::none(), py::arg("batch_size") = 32,
           py::arg("beam_size") = 4, py::arg("alpha") = 0.6,
           py::arg("max_input_size") = 1024, py::arg("patience") = 0.0,
           py::arg("glossary") = py::none(), py::arg("ensemble") = py::none(),
           py::arg("ensemble_weights") = py::none(), py::arg("alignment_layer") = py::none(),
           py::arg("alignment_head") = py::none(), py::arg("batch_tokens") = 0,
           py::arg("shortlist") = py::none(), py::arg("shortlist_best") = 0,
           py::arg("shortlist_frequent") = -1)
      .def(
          "translate",
          [](Translator& self, const std::vector<std::string>& texts, int64_t beam_size,
             double alpha, int64_t n_best, bool return_scores,
             std::optional<int64_t> max_batch_size, double patience,
             std::optional<std::vector<std::string>> prefix,
             std::optional<std::vector<std::vector<std::string>>> constraints,
             std::optional<std::vector<std::pair<std::string, std::string>>> glossary,
             int64_t no_repeat_ngram_size, double repetition_penalty, bool alignment,
             double alignment_threshold, bool return_details) {
            Translator::Guidance g;
            g.prefix = std::move(prefix);
            g.constraints = std::move(constraints);
            g.glossary = std::move(glossary);
            g.no_repeat_ngram_size = no_repeat_ngram_size;
            g.repetition_penalty = repetition_penalty;
            g.alignment = alignment;
            g.alignment_threshold = alignment_threshold;
            g.return_details = return_details;
            return self.translate(texts, beam_size, alpha, n_best, return_scores,
                                  max_batch_size, patience, g);
          },
          py::arg("texts"), py::kw_only(), py::arg("beam_size") = 4, py::arg("alpha") = 0.6,
          py::arg("n_best") = 1, py::arg("return_scores") = false,
          py::arg("max_batch_size") = py::none(), py::arg("patience") = 0.0,
          py::arg("prefix") = py::none(), py::arg("constraints") = py::none(),
          py::arg("glossary") = py::none(), py::arg("no_repeat_ngram_size") = 0,
          py::arg("repetition_penalty") = 1.0, py::arg("alignment") = false,
          py::arg("alignment_threshold") = 1.0, py::arg("return_details") = false,
          R"doc(
Translates a list of sentences. Returns one string per sentence, as
t2t-decoder writes it; with n_best > 1 or return_scores, one list per
sentence of its n_best hypotheses, best first, each a (text, score) pair
when return_scores (the search's length-penalised log-probability).
patience: 0, T2T's stopping test alone; 2 also stops a sentence as
CTranslate2 does (see the class).

prefix: one target prefix per text ("" for none): each output starts with it.
constraints: one list of target terms per text that its output must contain
  (constrained beam search; beam_size >= terms + 1). glossary: (source term,
  target term) pairs for this call, added to the translator's glossary.
no_repeat_ngram_size, repetition_penalty: repetition guards (0 and 1: off).
alignment: word alignments with each hypothesis (alignment_threshold: 1 each
  target word's likeliest source word; below, every pair with that weight).
With alignment or return_details, each hypothesis is a dict: text, score,
alignment (source_words, target_words, hard [(i, j)], soft), constraints and
constraints_met.
)doc")
      .def("translate_file", &Translator::translate_file, py::arg("source"), py::arg("target"),
           py::kw_only(), py::arg("progress") = false, py::arg("piece_lines") = 0,
           R"doc(
Translates a file as t2t-decoder --decode_from_file does, into target (written
whole, then renamed). progress=True draws a progress bar on standard error; a
callable progress(done, total) is called after each batch instead.
piece_lines=N translates N lines at a time, keeping each finished piece in
target + ".pieces", so that a call killed at any point and made again with the
same model and options goes on after the last finished piece
(t2t-decoder --decode_piece_lines).
)doc")
      .def("score", &Translator::score, py::arg("sources"), py::arg("targets"), py::kw_only(),
           py::arg("alignment") = false,
           R"doc(
The log-probability of each target given its source (teacher-forced, natural
log, EOS included), as t2t-decoder --score_file. With alignment, a
(score, alignment dict) pair each: the pair's word alignment.
)doc")
      .def_property_readonly("step", [](const Translator& t) { return t.step(); },
                             "The training step of the checkpoint loaded.")
      .def_property_readonly("checkpoint", [](const Translator& t) { return t.checkpoint(); },
                             "The checkpoint file loaded.")
      .def_property_readonly("device", [](const Translator& t) { return t.device(); });
}

}  // namespace t2t::python
