// The state behind t2t.Translator (translator.cc binds it).
#pragma once

#include <pybind11/pybind11.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t2t/data/problem.h"
#include "t2t/decode/decoder.h"

namespace t2t::python {

class Translator {
 public:
  Translator(const std::string& output_dir, const std::string& data_dir,
             const std::string& problem, const std::string& model,
             const std::string& hparams_set, const std::string& hparams,
             const std::string& device, const std::optional<std::string>& quantize, int threads,
             const std::optional<std::string>& checkpoint, int64_t batch_size, int64_t beam_size,
             double alpha, int64_t max_input_size);

  pybind11::list translate(const std::vector<std::string>& texts, int64_t beam_size, double alpha,
                           int64_t n_best, bool return_scores,
                           std::optional<int64_t> max_batch_size);
  void translate_file(const std::string& source, const std::string& target,
                      const std::function<void(int64_t, int64_t)>& progress);
  std::vector<double> score(const std::vector<std::string>& sources,
                            const std::vector<std::string>& targets);

  int64_t step() const { return loaded_.step; }
  const std::string& checkpoint() const { return loaded_.checkpoint; }
  const std::string& device() const { return device_; }
  // The model itself, for state_dict().
  const std::shared_ptr<T2TModel>& model() const { return loaded_.model; }

 private:
  std::vector<std::vector<int64_t>> encode_sources(const std::vector<std::string>& texts);
  std::string clean(const std::string& text) const;

  std::string model_name_;
  std::string device_;
  std::unique_ptr<Problem> problem_;
  LoadedModel loaded_;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace t2t::python
