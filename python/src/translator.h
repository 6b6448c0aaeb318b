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
#include "t2t/serve/batch_queue.h"
#include "t2t/serve/batch_workers.h"
#include "t2t/serve/model_holder.h"

namespace t2t::python {

class Translator {
 public:
  Translator(const std::string& output_dir, const std::string& data_dir,
             const std::string& problem, const std::string& model,
             const std::string& hparams_set, const std::string& hparams,
             const std::string& device, const std::optional<std::string>& quantize, int threads,
             const std::optional<std::string>& checkpoint, int64_t batch_size, int64_t beam_size,
             double alpha, int64_t max_input_size, double patience);
  // Closes the queue and joins the workers.
  ~Translator();

  pybind11::list translate(const std::vector<std::string>& texts, int64_t beam_size, double alpha,
                           int64_t n_best, bool return_scores,
                           std::optional<int64_t> max_batch_size, double patience);
  void translate_file(const std::string& source, const std::string& target,
                      const pybind11::object& progress);
  std::vector<double> score(const std::vector<std::string>& sources,
                            const std::vector<std::string>& targets);

  int64_t step() const { return serving_->loaded.step; }
  const std::string& checkpoint() const { return serving_->loaded.checkpoint; }
  const std::string& device() const { return device_; }
  // The model itself, for state_dict().
  const std::shared_ptr<T2TModel>& model() const { return serving_->loaded.model; }

 private:
  std::vector<std::vector<int64_t>> encode_sources(const std::vector<std::string>& texts);
  std::string clean(const std::string& text) const;

  std::string model_name_;
  std::string device_;
  Decoder& decoder() const { return *serving_->decoder; }

  std::unique_ptr<Problem> problem_;
  // The model and its Decoder, as t2t-serve holds them.
  std::shared_ptr<ServingModel> serving_;
  // translate()'s sentences, from every calling thread, wait here and are
  // decoded in batches by the workers, as t2t-serve batches its requests.
  std::unique_ptr<BatchQueue> queue_;
  std::unique_ptr<BatchWorkers> workers_;
};

}  // namespace t2t::python
