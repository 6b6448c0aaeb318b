// What t2t-decoder does with a BatchTranslator, T2T's three ways: a file of source
// lines (--decode_from_file), lines typed on standard input
// (--decode_interactive), and the problem's dev split; plus T2T's output
// file names and the BLEU report for --decode_reference.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "t2t/translate/translation.h"

namespace t2t {

class BatchTranslator;
class Problem;

// What T2T's default output name is made of.
struct OutputNaming {
  std::string model;
  std::string hparams_set;
  std::string problem;
};

// Python's str() of a float ("0.6", "1.0", "1e-05"), as it appears in T2T's
// file names.
std::string python_float_str(double value);

// T2T's _decode_filename: "<base>.<model>.<hparams_set>.<problem>.beam<k>
// .alpha<a>.decodes", or `base` itself when it already carries that
// "beam<k>.alpha<a>.decodes" part.
std::string decode_filename(const std::string& base, const OutputNaming& naming,
                            int64_t beam_size, double alpha);

// The records of a text file as T2T reads them: split at `delimiter`, a
// final empty record (the file's last line break) dropped. Throws
// OptionError naming `option` (the option that gave the path) and the path
// when the file cannot be read.
std::vector<std::string> read_records(const std::string& path, const std::string& delimiter,
                                      const std::string& option);

// Best hypotheses, and what they are compared with.
struct DecodeOutcome {
  std::vector<std::string> hypotheses;  // the best text per source, in order
  std::vector<std::string> sources;
  std::vector<std::string> references;  // dev split only
  std::string output_path;
};

// Translates every record of input_path and writes one record per input, in
// the input's order, to output_path (through a temporary file and a rename).
// `progress` (may be empty) is called after each batch.
DecodeOutcome decode_file(BatchTranslator& decoder, const std::string& input_path,
                          const std::string& output_path, const ProgressFn& progress = nullptr);

// Answers each line of `in` on `out` at once (flushed); a line "q" or the
// end of input stops. Turns the decoder's log_results off: the answers are
// the output. Returns the number of lines answered.
int64_t decode_interactively(BatchTranslator& decoder, std::istream& in, std::ostream& out);

// Decodes the problem's dev shards in file order (at most num_samples) and
// writes <output>.decodes, and beside it the same name ending .targets and
// .inputs (the examples' own targets and inputs as text), as T2T's
// decode_from_dataset does. `decodes_path` must end in ".decodes".
DecodeOutcome decode_dev_split(BatchTranslator& decoder, const Problem& problem,
                               const std::string& data_dir, const std::string& decodes_path);

// Corpus BLEU of `hypotheses` against the records of `reference_path`
// (sacreBLEU's, tokenizer chosen from the references), as printed lines.
// Throws t2t::Error when the line counts differ.
std::string bleu_report(const std::vector<std::string>& hypotheses,
                        const std::vector<std::string>& references,
                        const std::string& reference_name);

}  // namespace t2t
