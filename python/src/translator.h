// The state behind t2t.Translator (translator.cc binds it).
#pragma once

#include <pybind11/pybind11.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t2t/translate/translator.h"

namespace t2t::python {

class Translator {
 public:
  Translator(const std::string& output_dir, const std::string& data_dir,
             const std::string& problem, const std::string& model,
             const std::string& hparams_set, const std::string& hparams,
             const std::string& device, const std::optional<std::string>& quantize, int threads,
             const std::optional<std::string>& checkpoint, int64_t batch_size, int64_t beam_size,
             double alpha, int64_t max_input_size, double patience,
             const std::optional<std::string>& glossary,
             const std::optional<std::vector<std::string>>& ensemble,
             const std::optional<std::vector<double>>& ensemble_weights,
             std::optional<int64_t> alignment_layer, std::optional<int64_t> alignment_head,
             int64_t batch_tokens, const std::optional<std::string>& shortlist,
             int64_t shortlist_best, int64_t shortlist_frequent);
  // Closes the queue and joins the workers.
  ~Translator();

  // Per-call wishes beyond the search settings.
  struct Guidance {
    std::optional<std::vector<std::string>> prefix;
    std::optional<std::vector<std::vector<std::string>>> constraints;
    std::optional<std::vector<std::pair<std::string, std::string>>> glossary;
    int64_t no_repeat_ngram_size = 0;
    double repetition_penalty = 1.0;
    bool alignment = false;
    double alignment_threshold = 1.0;
    bool return_details = false;
  };
  pybind11::list translate(const std::vector<std::string>& texts, int64_t beam_size, double alpha,
                           int64_t n_best, bool return_scores,
                           std::optional<int64_t> max_batch_size, double patience,
                           const Guidance& guidance);
  void translate_file(const std::string& source, const std::string& target,
                      const pybind11::object& progress, int64_t piece_lines);
  // Scores; with `alignment`, (score, alignment dict) pairs.
  pybind11::list score(const std::vector<std::string>& sources,
                       const std::vector<std::string>& targets, bool alignment);

  int64_t step() const { return translator_->current()->step; }
  std::string checkpoint() const { return translator_->current()->checkpoint; }
  const std::string& device() const { return device_; }
  // The model itself, for state_dict().
  std::shared_ptr<T2TModel> model() const { return translator_->current()->model; }

 private:
  std::string clean(const std::string& text) const;

  std::string device_;
  std::unique_ptr<t2t::Translator> translator_;
};

}  // namespace t2t::python
