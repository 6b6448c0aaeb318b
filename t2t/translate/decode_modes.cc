#include "t2t/translate/decode_modes.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/data/problem.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/source_guides.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/metrics/sacrebleu.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

std::vector<int64_t> until_eos(const std::vector<int64_t>& ids) {
  std::vector<int64_t> out;
  for (int64_t id : ids) {
    if (id == kEosId) break;
    out.push_back(id);
  }
  return out;
}

}  // namespace

void log_decode_summary(const BatchTranslator& decoder, const Stopwatch& clock, int64_t sentences) {
  const auto& c = decoder.counts();
  const double secs = std::max(clock.seconds(), 1e-9);
  spdlog::info("decoded {} sentences in {:.1f} s: {:.2f} sentences/s, {:.1f} output tokens/s "
               "(beam {}, batch {})",
               sentences, secs, sentences / secs, c.output_tokens / secs,
               decoder.options().search.beam_size, decoder.options().batch_size);
  if (c.shortlist_batches > 0)
    spdlog::info("shortlist: {:.0f} of {} target ids per batch on average",
                 static_cast<double>(c.shortlist_columns) / c.shortlist_batches,
                 decoder.target_encoder().vocab_size());
  if (c.empty > 0) spdlog::info("{} empty inputs answered with empty lines", c.empty);
  if (c.invalid_utf8 > 0)
    spdlog::warn("{} inputs held invalid UTF-8, replaced by U+FFFD before decoding", c.invalid_utf8);
  if (c.truncated > 0)
    spdlog::warn("{} inputs were longer than the decode hparam max_input_size and were cut",
                 c.truncated);
}

namespace {

// The records of a file parallel to the input, checked to match it.
std::vector<std::string> parallel_records(const std::string& path, const std::string& delimiter,
                                          const std::string& option, size_t expected,
                                          const std::string& input_path) {
  auto records = read_records(path, delimiter, option);
  if (records.size() != expected)
    throw OptionError(option, "{" + option + "}=" + path + " has " +
                                  std::to_string(records.size()) + " records but " + input_path +
                                  " has " + std::to_string(expected) +
                                  ": give one per input record (an empty one for none)");
  return records;
}

GuidedSources read_file_guides(const BatchTranslator& decoder,
                               const std::vector<std::string>& texts,
                               const std::vector<std::vector<int64_t>>& ids,
                               const FileDecodeExtras& extras, const std::string& input_path) {
  const std::string& delimiter = decoder.options().delimiter;
  std::vector<SourceGuide> guides;
  if (!extras.prefix_path.empty() || !extras.constraints_path.empty()) {
    guides.resize(texts.size());
    if (!extras.prefix_path.empty()) {
      const auto prefixes = parallel_records(extras.prefix_path, delimiter, "prefix_file",
                                             texts.size(), input_path);
      for (size_t i = 0; i < texts.size(); ++i) guides[i].prefix = prefixes[i];
    }
    if (!extras.constraints_path.empty()) {
      const auto lines = parallel_records(extras.constraints_path, delimiter, "constraints_file",
                                          texts.size(), input_path);
      for (size_t i = 0; i < texts.size(); ++i)
        for (const auto& term : split(lines[i], '\t'))
          if (!trim(term).empty()) guides[i].constraints.push_back(trim(term));
    }
  }
  return guide_sources(decoder, texts, ids, guides, {extras.glossary}, decoder.options().search,
                       input_path + " line");
}

}  // namespace

std::string python_float_str(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest digits that read back as `value`, laid out as Python's
  // repr lays them out: positional for exponents in [-4, 16), else
  // scientific with at least two exponent digits.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + mantissa + exp;
  }
  std::string whole, frac;
  if (exponent >= 0) {
    const size_t n = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= n) {
      whole = digits + std::string(n - digits.size(), '0');
    } else {
      whole = digits.substr(0, n);
      frac = digits.substr(n);
    }
  } else {
    whole = "0";
    frac = std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  }
  return sign + whole + "." + (frac.empty() ? "0" : frac);
}

std::string decode_filename(const std::string& base, const OutputNaming& naming,
                            int64_t beam_size, double alpha) {
  const std::string tail =
      "beam" + std::to_string(beam_size) + ".alpha" + python_float_str(alpha) + ".decodes";
  if (base.find(tail) != std::string::npos) return base;
  return base + "." + naming.model + "." + naming.hparams_set + "." + naming.problem + "." + tail;
}

std::vector<std::string> read_records(const std::string& path, const std::string& delimiter,
                                      const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw OptionError(option, "{" + option + "}=" + path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw OptionError(option, "{" + option + "}=" + path + ": error while reading");
  const std::string all = text.str();
  std::vector<std::string> records;
  size_t start = 0;
  while (true) {
    const size_t at = all.find(delimiter, start);
    if (at == std::string::npos) {
      records.push_back(all.substr(start));
      break;
    }
    records.push_back(all.substr(start, at - start));
    start = at + delimiter.size();
  }
  if (!records.empty() && records.back().empty()) records.pop_back();
  return records;
}

std::string alignment_column(const Translation& translation, bool soft) {
  if (translation.alignments.empty()) return "";
  const WordAlignment& best = translation.alignments[0];
  return soft ? soft_alignment_text(best.soft) : pharaoh(best.hard);
}

DecodedRecords decode_records(BatchTranslator& decoder, const std::vector<std::string>& records,
                              const std::string& input_path, int64_t first_line,
                              const ProgressFn& progress, const FileDecodeExtras& extras) {
  DecodedRecords out;
  const auto n = records.size();
  std::vector<std::vector<int64_t>> ids;
  ids.reserve(n);
  for (size_t i = 0; i < n; ++i)
    ids.push_back(decoder.encode_source(
        records[i], input_path + " line " + std::to_string(first_line + static_cast<int64_t>(i) + 1)));
  const GuidedSources guides = read_file_guides(decoder, records, ids, extras, input_path);
  const auto& search = decoder.options().search;
  // A line draws its samples as line first_line + i of the file, whatever
  // piece it is decoded in.
  const auto translations = decoder.translate(ids, search, decoder.options().batch_size,
                                              first_line, progress, guides.guides);
  for (const auto& t : translations) {
    out.lines.push_back(decoder.format(t));
    out.hypotheses.push_back(t.texts.empty() ? "" : t.texts[0]);
    if (!search.alignment) continue;
    const std::string alignment = alignment_column(t, decoder.options().soft_alignment);
    if (extras.alignment_path.empty())
      out.lines.back() += "\t" + alignment;
    else
      out.alignments.push_back(alignment);
  }
  if (guides.constrained > 0)
    spdlog::info("{} of {} constrained lines hold every term", guides.met_count(translations),
                 guides.constrained);
  return out;
}

std::string join_records(const std::vector<std::string>& records, const std::string& delimiter) {
  std::string out;
  for (const auto& r : records) out += r + delimiter;
  return out;
}

DecodeOutcome decode_file(BatchTranslator& decoder, const std::string& input_path,
                          const std::string& output_path, const ProgressFn& progress,
                          const FileDecodeExtras& extras) {
  const Stopwatch clock;
  DecodeOutcome outcome;
  const std::string& delimiter = decoder.options().delimiter;
  outcome.sources = read_records(input_path, delimiter, "decode_from_file");
  outcome.output_path = output_path;
  spdlog::info("decoding {} lines of {} into {}", outcome.sources.size(), input_path, output_path);
  DecodedRecords decoded = decode_records(decoder, outcome.sources, input_path, 0, progress, extras);
  write_file_atomic(output_path, join_records(decoded.lines, delimiter));
  if (decoder.options().search.alignment && !extras.alignment_path.empty())
    write_file_atomic(extras.alignment_path, join_records(decoded.alignments, delimiter));
  outcome.hypotheses = std::move(decoded.hypotheses);
  log_decode_summary(decoder, clock, static_cast<int64_t>(decoded.lines.size()));
  spdlog::info("wrote {}", output_path);
  return outcome;
}

int64_t decode_interactively(BatchTranslator& decoder, std::istream& in, std::ostream& out) {
  // The answer is the output here; logging it as well would print it twice.
  decoder.set_log_results(false);
  spdlog::info("interactive decoding: type a sentence and press enter; 'q' or end of input quits");
  int64_t answered = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == "q") break;
    ++answered;
    const auto ids = decoder.encode_source(line, "input line " + std::to_string(answered));
    // Keyed by its line, as a file's sentences are, when sampling.
    const auto translations = decoder.translate({ids}, answered - 1);
    out << decoder.format(translations[0]);
    if (decoder.options().search.alignment)
      out << '\t' << alignment_column(translations[0], decoder.options().soft_alignment);
    out << '\n' << std::flush;
  }
  return answered;
}

DecodeOutcome decode_dev_split(BatchTranslator& decoder, const Problem& problem,
                               const std::string& data_dir, const std::string& decodes_path) {
  const std::string suffix = ".decodes";
  if (!ends_with(decodes_path, suffix))
    throw Error("the dev-split output name must end in .decodes, got " + decodes_path);
  const Stopwatch clock;
  const int64_t limit = decoder.options().num_samples;
  std::vector<std::vector<int64_t>> inputs, targets;
  for (const auto& path : problem.data_filepaths(data_dir, "dev")) {
    if (!fs::exists(path))
      throw Error("no dev data for problem " + problem.name() + ": " + path + " is missing; run " +
                  command_suggestion("t2t-datagen",
                                     {{"problem", problem.name()}, {"data_dir", data_dir}}) +
                  " first");
    TFRecordReader reader(path);
    std::string record;
    while ((limit < 0 || static_cast<int64_t>(inputs.size()) < limit) && reader.next(&record)) {
      auto features = parse_example(record);
      auto& in = features[problem.reversed() ? "targets" : "inputs"];
      auto& tg = features[problem.reversed() ? "inputs" : "targets"];
      inputs.push_back(decoder.fit_source(
          std::move(in), path + " example " + std::to_string(inputs.size() + 1)));
      targets.push_back(std::move(tg));
    }
  }
  spdlog::info("decoding {} dev examples of {}", inputs.size(), problem.name());
  const auto translations = decoder.translate(inputs);

  DecodeOutcome outcome;
  outcome.output_path = decodes_path;
  std::vector<std::string> lines;
  for (size_t i = 0; i < inputs.size(); ++i) {
    lines.push_back(decoder.format(translations[i]));
    outcome.hypotheses.push_back(translations[i].texts.empty() ? "" : translations[i].texts[0]);
    outcome.sources.push_back(decoder.input_encoder().decode(until_eos(inputs[i])));
    outcome.references.push_back(decoder.target_encoder().decode(until_eos(targets[i])));
  }
  const std::string stem = decodes_path.substr(0, decodes_path.size() - suffix.size());
  const std::string& delimiter = decoder.options().delimiter;
  write_file_atomic(decodes_path, join_records(lines, delimiter));
  write_file_atomic(stem + ".targets", join_records(outcome.references, delimiter));
  write_file_atomic(stem + ".inputs", join_records(outcome.sources, delimiter));
  log_decode_summary(decoder, clock, static_cast<int64_t>(lines.size()));
  spdlog::info("wrote {} and its .targets and .inputs", decodes_path);
  return outcome;
}

std::string bleu_report(const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& references,
                        const std::vector<std::string>& names) {
  for (size_t r = 0; r < references.size(); ++r)
    if (hypotheses.size() != references[r].size())
      throw Error(names[r] + " has " + std::to_string(references[r].size()) +
                  " lines but there are " + std::to_string(hypotheses.size()) +
                  " translations; give the reference of exactly the decoded input");
  SacreBleuOptions options;
  options.tokenize = default_tokenizer_for(references.at(0));
  const SacreBleuResult bleu = corpus_bleu(hypotheses, References(references), options);
  return bleu.to_string() + "\n" + bleu.signature + "\n";
}

}  // namespace t2t
