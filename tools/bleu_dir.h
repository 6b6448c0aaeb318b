// t2t-bleu --translations_dir, T2T's directory mode: every file
// t2t-translate-all wrote (<problem>-<step>), in step order, scored the way
// t2t-bleu scores one --translation, one stdout line each; optionally each
// score as a TensorBoard event at the file's step, and new files as they
// come while training goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace t2t::bleu {

// One metric and case variant of one file, as t2t-bleu --translation
// prints it.
struct VariantScore {
  std::string tag;        // BLEU_uncased, BLEU_cased, chrF2_cased, TER_uncased, ...
  double score = 0;       // 0..100
  std::string headline;   // "BLEU_cased = 23.45", or "BLEU_cased =  23.45" (--metric=t2t)
  std::string details;    // what sacreBLEU prints after the score: precisions, BP, lengths
  std::string signature;  // sacreBLEU's signature; empty for --metric=t2t
};

// Scores the translation file at `path` (t2t-bleu's single-file path);
// throws t2t::Error naming the file.
using ScoreFile = std::function<std::vector<VariantScore>(const std::string& path)>;

struct DirOptions {
  std::string dir;        // --translations_dir
  std::vector<std::string> references;  // --reference, never scored as translations
  std::string event_dir;  // empty: no events
  std::string tag_suffix;
  int64_t min_steps = 0;  // as resolve_min_steps() left it
  bool resumed = false;   // min_steps came from last_evaluated_step.txt
  double wait_minutes = 0;
  bool report_zero = false;
};

// T2T's --min_steps=-1: the step after the one in
// <event_dir>/last_evaluated_step.txt when there is one, else 0. Sets
// o->min_steps and o->resumed; other values are taken as they are. Throws
// t2t::Error for a file that holds no step.
void resolve_min_steps(int64_t flag_value, DirOptions* o);

// Scores the files of o.dir of at least o.min_steps steps, and with
// o.wait_minutes those that come until none has for that long. Returns 0;
// throws t2t::Error when o.dir is not a directory or nothing was scored
// (unless a resumed run found nothing new).
int score_dir(const DirOptions& o, const ScoreFile& score);

}  // namespace t2t::bleu
