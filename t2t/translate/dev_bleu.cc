#include "t2t/translate/dev_bleu.h"

#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/translate/decode_modes.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/metrics/score.h"

namespace t2t {

namespace fs = std::filesystem;

DevBleu::DevBleu(const std::string& problem, const std::string& data_dir, DevBleuOptions options,
                 torch::Device device)
    : problem_(create_problem(problem)),
      data_dir_(data_dir),
      options_(std::move(options)),
      device_(device) {
  if (!ends_with(options_.decodes_path, ".decodes"))
    throw Error("the BLEU decodes file must end in .decodes, got " + options_.decodes_path);
  if (options_.decode.num_samples == 0)
    throw OptionError("num_samples", "{num_samples}=0 leaves {eval_bleu} nothing to score; give a "
                                     "positive number, or -1 for the whole dev split");
  encoders_ = problem_->feature_encoders(data_dir_);
  if (options_.metrics.empty())
    throw OptionError("eval_bleu", "{eval_bleu} has no metric to compute; give bleu, chrf, "
                                   "chrf++ or ter");
  for (const std::string& name : options_.metrics) {
    try {
      metric_spec(name);
    } catch (const Error& e) {
      throw OptionError("eval_bleu", std::string("{eval_bleu}: ") + e.what());
    }
  }
  if (!options_.source_file.empty()) {
    if (options_.reference_files.empty())
      throw OptionError("decode_reference", "{decode_from_file}=" + options_.source_file +
                                                " needs {decode_reference}: BLEU compares with "
                                                "the reference translations");
    if (options_.decode.num_samples >= 0)
      throw OptionError("num_samples", "{num_samples} caps the dev split; {decode_from_file}=" +
                                           options_.source_file +
                                           " is decoded whole: give a shorter file instead");
    const auto sources =
        read_records(options_.source_file, options_.decode.delimiter, "decode_from_file");
    for (const std::string& path : options_.reference_files) {
      references_.push_back(read_records(path, options_.decode.delimiter, "decode_reference"));
      if (sources.size() != references_.back().size())
        throw OptionError("decode_reference",
                          "{decode_from_file}=" + options_.source_file + " has " +
                              std::to_string(sources.size()) + " lines but {decode_reference}=" +
                              path + " has " + std::to_string(references_.back().size()) +
                              "; BLEU needs one reference per source line");
    }
    if (sources.empty())
      throw OptionError("decode_from_file", "{decode_from_file}=" + options_.source_file +
                                                " is empty: nothing to score");
    return;
  }
  if (!options_.reference_files.empty())
    throw OptionError("decode_from_file", "{decode_reference}=" + options_.reference_files[0] +
                                              " needs {decode_from_file}: the dev split brings "
                                              "its own references");
  for (const auto& path : problem_->data_filepaths(data_dir_, "dev"))
    if (!fs::exists(path))
      throw OptionError("eval_bleu", "{eval_bleu} decodes the dev split, but " + path +
                                         " is missing; run " +
                                         command_suggestion("t2t-datagen",
                                                            {{"problem", problem_->name()},
                                                             {"data_dir", data_dir_}}) +
                                         " first, or give {decode_from_file} and "
                                         "{decode_reference}");
}

std::map<std::string, double> DevBleu::score(const std::shared_ptr<T2TModel>& model,
                                             int64_t step) {
  const Stopwatch clock;
  BatchTranslator decoder(model, encoders_.inputs, encoders_.targets, options_.decode, device_);
  // t2t-decoder's own modes, so that the scores match what it would print.
  DecodeOutcome outcome;
  std::string source;
  std::vector<std::vector<std::string>> references;
  if (options_.source_file.empty()) {
    outcome = decode_dev_split(decoder, *problem_, data_dir_, options_.decodes_path);
    source = "the dev split";
    references.push_back(outcome.references);
  } else {
    outcome = decode_file(decoder, options_.source_file, options_.decodes_path);
    source = options_.source_file;
    references = references_;
  }
  if (outcome.hypotheses.empty())
    throw OptionError("eval_bleu", "{eval_bleu}: " + source + " gave no sentences to score");
  const References refs(references);
  std::map<std::string, double> scores;
  std::string names, lines;
  for (const std::string& name : options_.metrics) {
    MetricSpec spec = metric_spec(name);
    spec.bleu.tokenize = default_tokenizer_for(references[0]);
    const MetricScore s = corpus_score(spec, outcome.hypotheses, refs);
    scores[name] = s.score;
    names += (names.empty() ? "" : ", ") + s.name;
    lines += (lines.empty() ? "" : "; ") + s.to_string() + " (" + s.signature + ")";
  }
  spdlog::info("{} at step {} on {} sentences of {} ({:.1f} s): {}", names, step,
               outcome.hypotheses.size(), source, clock.seconds(), lines);
  return scores;
}

}  // namespace t2t
