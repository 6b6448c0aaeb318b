// t2t.bleu, t2t.chrf, t2t.ter and their sentence-level forms: sacreBLEU's
// scores, computed by the library t2t-bleu uses, called as sacreBLEU is
// called (references as a list of reference streams, each parallel to the
// hypotheses; one flat list is taken as one stream).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "t2t/metrics/chrf.h"
#include "t2t/metrics/references.h"
#include "t2t/metrics/sacrebleu.h"
#include "t2t/metrics/ter.h"

namespace py = pybind11;

namespace t2t::python {

namespace {

// A line of a stream: a str, or None where this stream has no reference
// for the sentence (sacreBLEU's variable number of references).
std::optional<std::string> reference_line(const py::handle& item, size_t stream, size_t line) {
  if (item.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(item))
    throw py::type_error("references[" + std::to_string(stream) + "][" + std::to_string(line) +
                         "] is a " + std::string(py::str(item.get_type().attr("__name__"))) +
                         "; each reference is a str (or None where a stream has no line)");
  return item.cast<std::string>();
}

// sacreBLEU's references argument: [stream, ...] with each stream a list of
// str parallel to the hypotheses, or one flat list of str.
References corpus_references(const py::object& references) {
  if (py::isinstance<py::str>(references) || !py::isinstance<py::sequence>(references))
    throw py::type_error("references must be a list of reference streams (each a list of str, "
                         "one per hypothesis), or one list of str");
  const auto outer = references.cast<py::sequence>();
  if (outer.size() == 0) throw py::value_error("references is empty: give at least one stream");
  std::vector<std::vector<std::optional<std::string>>> streams;
  const py::object first = outer[0];
  if (py::isinstance<py::str>(first) || first.is_none()) {
    auto& stream = streams.emplace_back();
    for (size_t i = 0; i < outer.size(); ++i) stream.push_back(reference_line(outer[i], 0, i));
  } else {
    for (size_t s = 0; s < outer.size(); ++s) {
      const py::object item = outer[s];
      if (py::isinstance<py::str>(item) || !py::isinstance<py::sequence>(item))
        throw py::type_error("references[" + std::to_string(s) + "] is not a list of str: give "
                             "every stream as a list, or one flat list of str");
      const auto inner = item.cast<py::sequence>();
      auto& stream = streams.emplace_back();
      for (size_t i = 0; i < inner.size(); ++i) stream.push_back(reference_line(inner[i], s, i));
    }
  }
  return References::with_gaps(streams);
}

std::vector<std::string> sentence_references(const py::object& references) {
  if (py::isinstance<py::str>(references))
    throw py::type_error("references must be a list of str (the sentence's references), not "
                         "a str");
  return references.cast<std::vector<std::string>>();
}

// The zh tokenizer for Chinese references, as t2t-bleu picks it; the
// first reference of each sentence decides.
std::string default_tokenizer(const References& refs) {
  std::vector<std::string> first;
  for (size_t i = 0; i < refs.segments(); ++i) first.push_back(refs.segment(i).front());
  return default_tokenizer_for(first);
}

SacreBleuOptions bleu_options(const std::optional<std::string>& tokenize, bool lowercase,
                              const std::string& smooth_method,
                              const std::optional<double>& smooth_value, bool effective_order) {
  SacreBleuOptions o;
  o.tokenize = tokenize.value_or("");
  o.lowercase = lowercase;
  o.smooth_method = smooth_method;
  o.smooth_value = smooth_value;
  o.effective_order = effective_order;
  return o;
}

ChrfOptions chrf_options(int char_order, int word_order, int beta, bool lowercase,
                         bool whitespace, bool eps_smoothing) {
  return {char_order, word_order, beta, lowercase, whitespace, eps_smoothing};
}

TerOptions ter_options(bool normalized, bool no_punct, bool asian_support, bool case_sensitive) {
  return {normalized, no_punct, asian_support, case_sensitive};
}

}  // namespace

void bind_metrics(py::module_& m) {
  py::class_<SacreBleuResult>(m, "BleuScore", "A BLEU score, with sacreBLEU's statistics.")
      .def_property_readonly("name", [](const SacreBleuResult&) { return "BLEU"; })
      .def_readonly("score", &SacreBleuResult::score)
      .def_readonly("precisions", &SacreBleuResult::precisions)
      .def_readonly("bp", &SacreBleuResult::bp)
      .def_readonly("ratio", &SacreBleuResult::ratio)
      .def_readonly("sys_len", &SacreBleuResult::hyp_len)
      .def_readonly("ref_len", &SacreBleuResult::ref_len)
      .def_readonly("counts", &SacreBleuResult::counts)
      .def_readonly("totals", &SacreBleuResult::totals)
      .def_readonly("signature", &SacreBleuResult::signature)
      .def("__str__", &SacreBleuResult::to_string)
      .def("__repr__", [](const SacreBleuResult& r) { return "<BleuScore " + r.to_string() + ">"; });
  py::class_<ChrfResult>(m, "ChrfScore", "A chrF or chrF++ score, with sacreBLEU's statistics.")
      .def_readonly("name", &ChrfResult::name)
      .def_readonly("score", &ChrfResult::score)
      .def_readonly("stats", &ChrfResult::stats,
                    "Per order, characters then words: hypothesis n-grams, reference n-grams, "
                    "matches.")
      .def_readonly("signature", &ChrfResult::signature)
      .def("__str__", &ChrfResult::to_string)
      .def("__repr__", [](const ChrfResult& r) { return "<ChrfScore " + r.to_string() + ">"; });
  py::class_<TerResult>(m, "TerScore", "A TER score, with sacreBLEU's statistics.")
      .def_property_readonly("name", [](const TerResult&) { return "TER"; })
      .def_readonly("score", &TerResult::score)
      .def_readonly("num_edits", &TerResult::num_edits)
      .def_readonly("ref_length", &TerResult::ref_length)
      .def_readonly("signature", &TerResult::signature)
      .def("__str__", &TerResult::to_string)
      .def("__repr__", [](const TerResult& r) { return "<TerScore " + r.to_string() + ">"; });

  m.def(
      "bleu",
      [](const std::vector<std::string>& hypotheses, const py::object& references,
         const std::optional<std::string>& tokenize, bool lowercase,
         const std::string& smooth_method, const std::optional<double>& smooth_value,
         bool effective_order) {
        const References refs = corpus_references(references);
        SacreBleuOptions o =
            bleu_options(tokenize, lowercase, smooth_method, smooth_value, effective_order);
        if (o.tokenize.empty()) o.tokenize = default_tokenizer(refs);
        py::gil_scoped_release release;
        return corpus_bleu(hypotheses, refs, o);
      },
      py::arg("hypotheses"), py::arg("references"), py::kw_only(),
      py::arg("tokenize") = py::none(), py::arg("lowercase") = false,
      py::arg("smooth_method") = "exp", py::arg("smooth_value") = py::none(),
      py::arg("effective_order") = false,
      R"doc(
sacreBLEU's corpus BLEU: the same score, n-gram statistics and signature as
sacreBLEU 2.x. references is sacreBLEU's list of reference streams, each a list
with one reference per hypothesis ([refs_a, refs_b] for two references; None
where a stream has no line), or one flat list for a single reference.
tokenize: "13a", "intl", "zh", "char" or "none" (default "zh" for Chinese
references, else "13a"); smooth_method: "exp", "floor", "add-k" or "none".
)doc");
  m.def(
      "sentence_bleu",
      [](const std::string& hypothesis, const py::object& references,
         const std::optional<std::string>& tokenize, bool lowercase,
         const std::string& smooth_method, const std::optional<double>& smooth_value,
         bool effective_order) {
        const auto refs = sentence_references(references);
        SacreBleuOptions o =
            bleu_options(tokenize, lowercase, smooth_method, smooth_value, effective_order);
        if (o.tokenize.empty()) o.tokenize = default_tokenizer_for({refs.empty() ? "" : refs[0]});
        py::gil_scoped_release release;
        return sentence_bleu(hypothesis, refs, o);
      },
      py::arg("hypothesis"), py::arg("references"), py::kw_only(),
      py::arg("tokenize") = py::none(), py::arg("lowercase") = false,
      py::arg("smooth_method") = "exp", py::arg("smooth_value") = py::none(),
      py::arg("effective_order") = true,
      R"doc(
sacreBLEU's sentence_bleu: one hypothesis against its references (a list of
str), with the effective order by default.
)doc");
  m.def(
      "chrf",
      [](const std::vector<std::string>& hypotheses, const py::object& references,
         int char_order, int word_order, int beta, bool lowercase, bool whitespace,
         bool eps_smoothing) {
        const References refs = corpus_references(references);
        const ChrfOptions o =
            chrf_options(char_order, word_order, beta, lowercase, whitespace, eps_smoothing);
        py::gil_scoped_release release;
        return corpus_chrf(hypotheses, refs, o);
      },
      py::arg("hypotheses"), py::arg("references"), py::kw_only(), py::arg("char_order") = 6,
      py::arg("word_order") = 0, py::arg("beta") = 2, py::arg("lowercase") = false,
      py::arg("whitespace") = false, py::arg("eps_smoothing") = false,
      R"doc(
sacreBLEU's corpus chrF (word_order=2: chrF++), references as for bleu().
)doc");
  m.def(
      "sentence_chrf",
      [](const std::string& hypothesis, const py::object& references, int char_order,
         int word_order, int beta, bool lowercase, bool whitespace, bool eps_smoothing) {
        const auto refs = sentence_references(references);
        const ChrfOptions o =
            chrf_options(char_order, word_order, beta, lowercase, whitespace, eps_smoothing);
        py::gil_scoped_release release;
        return sentence_chrf(hypothesis, refs, o);
      },
      py::arg("hypothesis"), py::arg("references"), py::kw_only(), py::arg("char_order") = 6,
      py::arg("word_order") = 0, py::arg("beta") = 2, py::arg("lowercase") = false,
      py::arg("whitespace") = false, py::arg("eps_smoothing") = false,
      "sacreBLEU's sentence chrF: one hypothesis against its references (a list of str).");
  m.def(
      "ter",
      [](const std::vector<std::string>& hypotheses, const py::object& references,
         bool normalized, bool no_punct, bool asian_support, bool case_sensitive) {
        const References refs = corpus_references(references);
        const TerOptions o = ter_options(normalized, no_punct, asian_support, case_sensitive);
        py::gil_scoped_release release;
        return corpus_ter(hypotheses, refs, o);
      },
      py::arg("hypotheses"), py::arg("references"), py::kw_only(), py::arg("normalized") = false,
      py::arg("no_punct") = false, py::arg("asian_support") = false,
      py::arg("case_sensitive") = false,
      R"doc(
sacreBLEU's corpus TER (lower is better), references as for bleu().
)doc");
  m.def(
      "sentence_ter",
      [](const std::string& hypothesis, const py::object& references, bool normalized,
         bool no_punct, bool asian_support, bool case_sensitive) {
        const auto refs = sentence_references(references);
        const TerOptions o = ter_options(normalized, no_punct, asian_support, case_sensitive);
        py::gil_scoped_release release;
        return sentence_ter(hypothesis, refs, o);
      },
      py::arg("hypothesis"), py::arg("references"), py::kw_only(), py::arg("normalized") = false,
      py::arg("no_punct") = false, py::arg("asian_support") = false,
      py::arg("case_sensitive") = false,
      "sacreBLEU's sentence TER: one hypothesis against its references (a list of str).");
}

}  // namespace t2t::python
