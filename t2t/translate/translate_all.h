// T2T's t2t-translate-all: the same source file translated by every
// checkpoint of a run, one file per checkpoint named by its step as T2T
// names them (T2T's t2t-bleu --translations_dir scores such a directory).
// Decodes in this process, a Translator per checkpoint (T2T runs
// t2t-decoder per checkpoint).
#pragma once

#include <cstdint>
#include <string>

#include "t2t/translate/translator_options.h"

namespace t2t {

struct TranslateAllOptions {
  // What each checkpoint is decoded with; its output_dir is the run whose
  // checkpoints are translated (its checkpoint is set per checkpoint).
  TranslatorOptions translator;
  std::string source;     // the file translated by each checkpoint
  std::string translations_dir;
  int64_t min_steps = 0;    // checkpoints of fewer steps are left alone
  double wait_minutes = 0;  // > 0: then wait this long for each new checkpoint
  double poll_seconds = 10;  // how often the wait looks for one
};

// Where the translation by the checkpoint of `step` goes, T2T's name:
// <translations_dir>/<problem>-<step>. The step is the digits after the
// last '-', which is how T2T's t2t-bleu --translations_dir reads it back
// (a temporary file, "<name>.tmp.<pid>.<n>", has no such step).
std::string translation_path(const std::string& translations_dir, const std::string& problem,
                             int64_t step);

struct TranslateAllResult {
  int64_t translated = 0;  // files written
  int64_t skipped = 0;     // already there (an earlier run's), not redone
};

// Translates spec.source with every checkpoint of the run of at least
// min_steps steps, oldest first, into translation_path(): each file written
// through a temporary file and a rename, with its checkpoint's modification
// time (as T2T's --keep_timestamp, so that a BLEU curve can be drawn
// against time). A checkpoint whose file exists is skipped, so a rerun
// resumes. With wait_minutes > 0 it then waits for newer checkpoints and
// stops once none has come for wait_minutes after the last ones were
// done. A progress line per checkpoint. Throws t2t::Error naming the
// directory or checkpoint at fault, or when no checkpoint qualified.
TranslateAllResult translate_all(const TranslateAllOptions& spec);

}  // namespace t2t
