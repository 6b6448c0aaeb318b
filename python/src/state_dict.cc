// A model's weights as torch tensors, both ways: Translator.state_dict()
// hands out the loaded model's own tensors (no copy), load_state_dict()
// writes a t2t checkpoint from a dict of tensors. The one file that sees
// PyTorch's Python headers (its tensor conversions).
#include <torch/extension.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/translator.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/model/t2t_model.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace t2t::python {

namespace {

std::map<std::string, at::Tensor> state_dict(const Translator& translator) {
  std::map<std::string, at::Tensor> out;
  const T2TModel& model = *translator.model();
  // Detached views of the model's own storage: an edit in place changes
  // the model the Translator decodes with.
  for (const auto& item : model.named_parameters(true)) out[item.key()] = item.value().detach();
  for (const auto& item : model.named_buffers(true)) out[item.key()] = item.value().detach();
  return out;
}

std::string load_state_dict(const std::string& output_dir,
                            const std::map<std::string, at::Tensor>& tensors,
                            std::optional<int64_t> step, const std::optional<std::string>& like) {
  const std::string from = like.value_or(output_dir);
  const std::string source = fs::is_directory(from) ? latest_checkpoint(from) : from;
  if (source.empty())
    throw Error("no checkpoint in " + from + " to take the model's names, shapes and hparams "
                "from: give like= a checkpoint or run directory of the same model");
  CheckpointMeta meta;
  const TensorMap have = read_checkpoint_tensors(source, &meta);
  if (meta.weights == "int8")
    throw Error(source + " holds int8 weights for decoding: give like= the float checkpoint it "
                "was made from");
  std::vector<std::string> problems;
  for (const auto& [name, t] : have)
    if (!tensors.count(name)) problems.push_back("missing " + name);
  for (const auto& [name, t] : tensors) {
    const auto it = have.find(name);
    if (it == have.end())
      problems.push_back("unexpected " + name);
    else if (t.sizes() != it->second.sizes())
      problems.push_back(name + " has shape " + c10::str(t.sizes()) + ", the model " +
                         c10::str(it->second.sizes()));
  }
  if (!problems.empty())
    throw Error("the tensors do not fit the model of " + source + ": " + join(problems, "; "));
  TensorMap out;
  for (const auto& [name, t] : tensors)
    out[name] = t.detach().to(torch::kCPU, have.at(name).scalar_type()).contiguous();
  CheckpointMeta written;
  written.step = step.value_or(meta.step + 1);
  written.hparams_yaml = meta.hparams_yaml;
  fs::create_directories(output_dir);
  // A new run directory decodes with the model's hparams.
  const fs::path hparams = fs::path(output_dir) / "hparams.yaml";
  if (!fs::exists(hparams) && !meta.hparams_yaml.empty())
    write_file_atomic(hparams.string(), meta.hparams_yaml);
  return save_checkpoint_tensors(output_dir, out, written);
}

}  // namespace

void bind_state_dict(py::module_& m) {
  py::object translator = m.attr("Translator");
  translator.attr("state_dict") = py::cpp_function(
      &state_dict, py::name("state_dict"), py::is_method(translator),
      py::sibling(py::getattr(translator, "state_dict", py::none())),
      "The loaded model's weights by name, as torch tensors sharing its memory (no copy).");
  m.def(
      "load_state_dict",
      [](const std::string& output_dir, const std::map<std::string, at::Tensor>& tensors,
         std::optional<int64_t> step, const std::optional<std::string>& like) {
        py::gil_scoped_release release;
        return load_state_dict(output_dir, tensors, step, like);
      },
      py::arg("output_dir"), py::arg("tensors"), py::kw_only(), py::arg("step") = py::none(),
      py::arg("like") = py::none(),
      R"doc(
Writes tensors (a dict of name -> torch.Tensor, as state_dict() gives) as a
t2t checkpoint model.ckpt-<step>.pt in output_dir, which t2t-decoder, t2t-serve
and Translator then load (no optimizer state: training from it starts Adam
afresh). The names, shapes and hparams come from like (a checkpoint or a run
directory; default: output_dir's latest checkpoint), whose step + 1 is the
default step. Returns the path written.
)doc");
}

}  // namespace t2t::python
