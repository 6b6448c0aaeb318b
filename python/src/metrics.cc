// t2t.bleu: sacreBLEU's corpus BLEU, computed by the library t2t-bleu uses.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "t2t/metrics/sacrebleu.h"

namespace py = pybind11;

namespace t2t::python {

void bind_metrics(py::module_& m) {
  py::class_<SacreBleuResult>(m, "BleuScore", "A corpus BLEU, with sacreBLEU's statistics.")
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
  m.def(
      "bleu",
      [](const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
         const std::optional<std::string>& tokenize, bool lowercase) {
        py::gil_scoped_release release;
        SacreBleuOptions options;
        options.tokenize = tokenize.value_or(default_tokenizer_for(references));
        options.lowercase = lowercase;
        return corpus_bleu(hypotheses, references, options);
      },
      py::arg("hypotheses"), py::arg("references"), py::kw_only(),
      py::arg("tokenize") = py::none(), py::arg("lowercase") = false,
      R"doc(
sacreBLEU's corpus BLEU of hypotheses against references (one reference per
hypothesis): the same score, n-gram statistics and signature as sacreBLEU 2.x
(tokenize: "13a", "intl", "zh" or "none"; default "zh" for Chinese references,
else "13a").
)doc");
}

}  // namespace t2t::python
