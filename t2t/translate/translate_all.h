// T2T's t2t-translate-all: a source file translated by every checkpoint of
// a run, one file per checkpoint, named as T2T names them.
#pragma once

#include <cstdint>
#include <string>

#include "t2t/translate/translator_options.h"

namespace t2t {

struct TranslateAllOptions {
  // output_dir: the run; checkpoint is set per checkpoint.
  TranslatorOptions translator;
  std::string source;     // the file translated by each checkpoint
  std::string translations_dir;
  int64_t min_steps = 0;    // checkpoints of fewer steps are left alone
  double wait_minutes = 0;  // > 0: then wait this long for each new checkpoint
  double poll_seconds = 10;  // how often the wait looks for one
};

// T2T's name: <translations_dir>/<problem>-<step>; t2t-bleu reads the step
// back from the digits after the last '-'.
std::string translation_path(const std::string& translations_dir, const std::string& problem,
                             int64_t step);

struct TranslateAllResult {
  int64_t translated = 0;  // files written
  int64_t skipped = 0;     // already there (an earlier run's), not redone
};

// Translates spec.source with every checkpoint of at least min_steps,
// oldest first, into translation_path(), each file written through a rename
// and given its checkpoint's modification time (T2T's --keep_timestamp).
// Existing files are skipped, so a rerun resumes. With wait_minutes > 0,
// then waits for newer checkpoints until none comes for that long. Throws
// t2t::Error naming the directory or checkpoint at fault, or when no
// checkpoint qualified.
TranslateAllResult translate_all(const TranslateAllOptions& spec);

}  // namespace t2t
