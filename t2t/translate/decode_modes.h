// T2T's three decoding modes over a BatchTranslator (a file, standard input, the
// dev split), T2T's output file names, and the BLEU report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "t2t/translate/translation.h"

namespace t2t {

class BatchTranslator;
class Glossary;
class Stopwatch;
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
// .alpha<a>.decodes", or `base` when it already ends so.
std::string decode_filename(const std::string& base, const OutputNaming& naming,
                            int64_t beam_size, double alpha);

// The records of a text file split at `delimiter`, a final empty record
// dropped. Throws OptionError naming `option` and the path when the file
// cannot be read.
std::vector<std::string> read_records(const std::string& path, const std::string& delimiter,
                                      const std::string& option);

// Best hypotheses, and what they are compared with.
struct DecodeOutcome {
  std::vector<std::string> hypotheses;  // the best text per source, in order
  std::vector<std::string> sources;
  std::vector<std::string> references;  // dev split only
  std::string output_path;
};

// What file decoding reads and writes beside its input and output.
struct FileDecodeExtras {
  // Files of one record per input record: the output's prefix; the terms
  // it must hold, tab-separated ("" for none, either way).
  std::string prefix_path;
  std::string constraints_path;
  const Glossary* glossary = nullptr;  // its terms are added to each record's
  // With the search's alignment on: where each record's alignment of its
  // best hypothesis goes, a line each ("": a tab-separated column after
  // the translation), in Pharaoh's format or, with the decode options'
  // soft_alignment, Marian's.
  std::string alignment_path;
};

// The alignment column of a translation's best hypothesis, as decode_file
// writes it ("" when it has none).
std::string alignment_column(const Translation& translation, bool soft);

// Records of input_path, the first being its line first_line + 1 (0-based
// first_line: errors name the file's lines, and random sampling draws as
// the file's sentences), translated as decode_file() does: the lines it
// writes (with the alignment column unless extras name a file for the
// alignments, then in `alignments`) and the best hypotheses.
struct DecodedRecords {
  std::vector<std::string> lines, alignments, hypotheses;
};
DecodedRecords decode_records(BatchTranslator& decoder, const std::vector<std::string>& records,
                              const std::string& input_path, int64_t first_line,
                              const ProgressFn& progress, const FileDecodeExtras& extras);

// `records`, each followed by `delimiter`.
std::string join_records(const std::vector<std::string>& records, const std::string& delimiter);

// The log lines after a file is decoded: speed, shortlist use, the inputs
// that were empty, invalid or cut.
void log_decode_summary(const BatchTranslator& decoder, const Stopwatch& clock, int64_t sentences);

// Writes one record per record of input_path, in order, to output_path
// (through a temporary file and a rename). `progress` may be empty.
DecodeOutcome decode_file(BatchTranslator& decoder, const std::string& input_path,
                          const std::string& output_path, const ProgressFn& progress = nullptr,
                          const FileDecodeExtras& extras = {});

// Answers each line of `in` on `out` at once (flushed) until a line "q" or
// the end, with its alignment column when the search aligns. Turns
// log_results off. Returns the number of lines answered.
int64_t decode_interactively(BatchTranslator& decoder, std::istream& in, std::ostream& out);

// Decodes the dev shards in file order (at most num_samples) and writes
// `decodes_path` (ending ".decodes") and beside it .targets and .inputs, as
// T2T's decode_from_dataset does.
DecodeOutcome decode_dev_split(BatchTranslator& decoder, const Problem& problem,
                               const std::string& data_dir, const std::string& decodes_path);

// Corpus BLEU (sacreBLEU's) of `hypotheses` against one or more reference
// streams, as printed lines. `names` says how messages name each stream.
// Throws t2t::Error when a count differs.
std::string bleu_report(const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& references,
                        const std::vector<std::string>& names);

}  // namespace t2t
