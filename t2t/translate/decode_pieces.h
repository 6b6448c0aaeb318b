// Translating a file too large to start again after a kill: the
// monolingual text of back-translation, the training sources a teacher
// translates for distillation. The file is decoded a piece of N lines at a
// time; each finished piece is kept (written whole, then renamed) in
// "<output>.pieces/", so a run killed at any point and started again with
// the same settings goes on after the last finished piece, and writes the
// same output as one run would. Random sampling draws each line as the
// file's line, whatever piece it falls in. The pieces are joined into the
// output at the end and their folder removed.
#pragma once

#include <cstdint>
#include <string>

#include "t2t/translate/decode_modes.h"

namespace t2t {

class BatchTranslator;

// Decodes input_path into output_path in pieces of `piece_lines` (>= 1)
// lines. `settings` is everything that decides the output (the checkpoint,
// the search), one "key: value" a line: a run resumes only pieces made
// with the same, else it throws OptionError naming the first setting that
// differs and the folder to remove. `progress` (may be empty) is called
// after each batch with the file's lines done and its total. Logs each
// finished piece with the
// share done, the speed and the time left. Extras: the glossary only (the
// other files are read whole; decode them without pieces). The outcome
// names the output; its sources and hypotheses stay empty (read the
// files).
DecodeOutcome decode_file_in_pieces(BatchTranslator& decoder, const std::string& input_path,
                                    const std::string& output_path, int64_t piece_lines,
                                    const std::string& settings,
                                    const ProgressFn& progress = nullptr,
                                    const FileDecodeExtras& extras = {});

// The folder of output_path's finished pieces.
std::string pieces_folder(const std::string& output_path);

}  // namespace t2t
