// The data side of the package: a problem's vocabularies (the ids its
// datagen writes), the examples of TFRecord shards, the registry and the
// hparams sets.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "python/src/bindings.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/model/model_registry.h"
#include "t2t/text/alignment_words.h"
#include "t2t/text/text_encoder.h"

namespace py = pybind11;

namespace t2t::python {

namespace {

class PyProblem {
 public:
  PyProblem(const std::string& name, const std::string& data_dir)
      : problem_(create_problem(name)), encoders_(problem_->feature_encoders(data_dir)), data_dir_(data_dir) {}

  std::vector<int64_t> encode(const std::string& text, const std::string& side, bool eos) const {
    std::vector<int64_t> ids = encoder(side).encode(text);
    if (eos) ids.push_back(kEosId);
    return ids;
  }
  std::string decode(std::vector<int64_t> ids, const std::string& side) const {
    // The datagen's ids end in EOS; its text is no part of the sentence.
    if (!ids.empty() && ids.back() == kEosId) ids.pop_back();
    return encoder(side).decode(ids);
  }
  int64_t vocab_size(const std::string& side) const { return encoder(side).vocab_size(); }
  std::string name() const { return problem_->name() + (problem_->reversed() ? "_rev" : ""); }
  bool shared_vocabulary() const { return encoders_.shared; }
  std::vector<std::string> filepaths(const std::string& split) const {
    // A problem in training parts: "train" is every part's shards.
    if (split == "train" && !problem_->training_parts().empty())
      return problem_->training_filepaths(data_dir_);
    return problem_->data_filepaths(data_dir_, split);
  }

 private:
  const TextEncoder& encoder(const std::string& side) const {
    if (side == "inputs") return *encoders_.inputs;
    if (side == "targets") return *encoders_.targets;
    throw Error("side must be \"inputs\" or \"targets\", not \"" + side + "\"");
  }

  std::unique_ptr<Problem> problem_;
  FeatureEncoders encoders_;
  std::string data_dir_;
};

// Iterates over a TFRecord file's tf.train.Example records as dicts of
// int lists.
class ExampleReader {
 public:
  explicit ExampleReader(const std::string& path) : reader_(std::make_unique<TFRecordReader>(path)) {}
  py::dict next() {
    Int64Features features;
    bool more = false;
    {
      py::gil_scoped_release release;
      std::string record;
      more = reader_->next(&record);
      if (more) features = parse_example(record);
    }
    if (!more) throw py::stop_iteration();
    py::dict out;
    for (const auto& [key, values] : features) out[py::str(key)] = py::cast(values);
    return out;
  }

 private:
  std::unique_ptr<TFRecordReader> reader_;
};

py::object to_python(const HValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

}  // namespace

void bind_data(py::module_& m) {
  py::class_<PyProblem>(m, "Problem", R"doc(
A registered problem with its vocabularies, loaded from data_dir: the ids it
gives are those its datagen writes into the shards.
)doc")
      .def(py::init<const std::string&, const std::string&>(), py::arg("name"),
           py::arg("data_dir"))
      .def("encode", &PyProblem::encode, py::arg("text"), py::arg("side") = "inputs",
           py::arg("eos") = true,
           "The ids of text for side \"inputs\" or \"targets\", ending in EOS (id 1) as in the "
           "shards unless eos=False.")
      .def("decode", &PyProblem::decode, py::arg("ids"), py::arg("side") = "targets",
           "The text of ids (a final EOS dropped).")
      .def("vocab_size", &PyProblem::vocab_size, py::arg("side") = "inputs")
      .def("filepaths", &PyProblem::filepaths, py::arg("split") = "train",
           "The shard files of a split (\"train\", \"dev\", ...) in data_dir; for a problem "
           "whose training data is in parts, \"train\" gives every part's and \"train-<part>\" "
           "one part's.")
      .def_property_readonly("name", &PyProblem::name)
      .def_property_readonly("shared_vocabulary", &PyProblem::shared_vocabulary);

  py::class_<ExampleReader>(m, "ExampleReader")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("__iter__", [](ExampleReader& r) -> ExampleReader& { return r; })
      .def("__next__", &ExampleReader::next);

  m.def(
      "alignment_words",
      [](const std::string& text) {
        std::vector<std::string> out;
        for (std::string_view w : word_texts(text, alignment_words(text))) out.emplace_back(w);
        return out;
      },
      py::arg("text"),
      "The words of text as t2t's word alignments count them (what Pharaoh indices refer to): "
      "letters and digits run together, each Chinese or Japanese character or Hangul syllable "
      "is a word, punctuation stands apart. ' '.join(...) of each line is what to give an "
      "aligner (eflomal, fast_align) for t2t-datagen --train_alignments.");
  m.def("problems", [] { return problem_registry().names(); }, "Registered problem names.");
  m.def("models", [] { return model_registry().names(); }, "Registered model names.");
  m.def("hparams_sets", [] { return hparams_registry().names(); },
        "Registered hparams set names.");
  m.def(
      "hparams",
      [](const std::string& set_name, const std::string& overrides,
         const std::optional<std::string>& file) {
        const HParams hp = resolve_hparams(set_name, file.value_or(""), overrides);
        py::dict out;
        for (const std::string& key : hp.keys()) out[py::str(key)] = to_python(hp.value(key));
        return out;
      },
      py::arg("set_name"), py::arg("overrides") = "", py::arg("file") = py::none(),
      "A hparams set as a dict, with a YAML file and then overrides (\"key=value,...\") "
      "applied, as --hparams_set, --hparams_file and --hparams.");
}

}  // namespace t2t::python
