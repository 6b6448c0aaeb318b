// t2t-bleu: corpus BLEU of a translation file against a reference file, with
// T2T's flags. sacreBLEU's scoring by default (comparable with published
// numbers), or T2T's own bleu_hook scoring for comparing with old T2T runs.
// With --translations_dir, T2T's directory mode: every file t2t-translate-all
// wrote there (<problem>-<step>), in step order, each scored the same way,
// optionally as TensorBoard events and while training goes on.
#include <cstdio>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/metrics/sacrebleu.h"
#include "t2t/text/utf8.h"
#include "tools/bleu_dir.h"
#include "tools/cli_common.h"

using t2t::bleu::VariantScore;
using t2t::cli::UsageError;

namespace {

void add_bleu_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("BLEU")
      ("translation", "The system's translations, one sentence a line.",
       value<std::string>()->default_value(""))
      ("reference", "The reference translations, line for line.",
       value<std::string>()->default_value(""))
      ("bleu_variant", "cased, uncased or both (case-insensitive BLEU lowercases both files).",
       value<std::string>()->default_value("both"))
      ("tokenize", "sacreBLEU tokenizer: 13a, intl, zh or none. Default: zh when the reference "
       "is Chinese, else 13a.", value<std::string>()->default_value(""))
      ("metric", "sacrebleu: sacreBLEU's BLEU (exponential smoothing, the tokenizer above), "
       "comparable with published numbers. t2t: Tensor2Tensor's bleu_hook scoring with its "
       "own tokenizer, to compare with numbers from old T2T runs.",
       value<std::string>()->default_value("sacrebleu"));
  options.add_options("Directory")
      ("translations_dir", "Instead of --translation: score every file of this directory "
       "named <problem>-<step> (t2t-translate-all's files; the step is the digits after the "
       "last '-') against --reference, in step order, one line each. Other files are skipped "
       "with a log line.", value<std::string>()->default_value(""))
      ("event_dir", "Write each score into this directory as a TensorBoard event at the "
       "file's step (tags BLEU_uncased and BLEU_cased, as --bleu_variant says), and the step "
       "scored last to last_evaluated_step.txt. Default: no events.",
       value<std::string>()->default_value(""))
      ("tag_suffix", "Appended to the event tags, e.g. _beam1 to plot another decoding apart.",
       value<std::string>()->default_value(""))
      ("min_steps", "Skip files of fewer steps. -1: the step after the one in "
       "<event_dir>/last_evaluated_step.txt when there is one, so a rerun scores only new "
       "files (T2T scores that last step again), else 0.",
       value<int64_t>()->default_value("-1"))
      ("wait_minutes", "After the files there are, wait for new ones and score them too, "
       "while t2t-translate-all goes on; stop once none has come for this many minutes "
       "(fractions allowed: 0.5 = 30 s). 0: stop at once.",
       value<double>()->default_value("0"))
      ("report_zero", "Write BLEU 0 at step 0 before the first score, so that the curve "
       "starts from zero. Default: on when --min_steps comes to 0, as in T2T.",
       value<bool>());
}

// How every file is scored, --translation or each of --translations_dir:
// the flags read once, and the reference.
struct Scoring {
  std::string metric;            // sacrebleu | t2t
  std::string tokenize;          // sacreBLEU's tokenizer, resolved from the reference
  std::vector<bool> cased_runs;  // uncased first, as T2T prints them
  std::string reference;         // the path, for messages
  std::vector<std::string> refs;
};

// `label` starts a message about an unreadable file: "--translation".
std::vector<std::string> read_lines(const std::string& label, const std::string& path) {
  try {
    return t2t::read_bleu_lines(path);
  } catch (const t2t::Error& e) {
    throw t2t::Error(label + ": " + e.what());
  }
}

void warn_invalid_utf8(const std::string& label, const std::vector<std::string>& lines) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (!t2t::is_valid_utf8(lines[i]) && bad++ == 0) first = i + 1;
  if (bad)
    spdlog::warn("{} has {} line(s) that are not valid UTF-8 (first: line {}); their invalid "
                 "bytes count as U+FFFD", label, bad, first);
}

// `label` is how messages name the file ("--translation=out.zh", or the
// path of a file of --translations_dir), `read_label` the flag that gave it.
std::vector<VariantScore> score_file(const Scoring& s, const std::string& label,
                                     const std::string& read_label, const std::string& path) {
  const auto hyps = read_lines(read_label, path);
  if (hyps.size() != s.refs.size())
    throw t2t::Error(label + " has " + std::to_string(hyps.size()) + " lines but --reference=" +
                     s.reference + " has " + std::to_string(s.refs.size()) +
                     " lines; BLEU needs exactly one translation per reference line");
  warn_invalid_utf8(label, hyps);
  std::vector<VariantScore> out;
  for (bool cased : s.cased_runs) {
    VariantScore v;
    v.tag = cased ? "BLEU_cased" : "BLEU_uncased";
    if (s.metric == "t2t") {
      v.score = t2t::t2t_bleu(hyps, s.refs, cased);
      char line[64];
      std::snprintf(line, sizeof line, "%s = %6.2f", v.tag.c_str(), v.score);
      v.headline = line;
    } else {
      const t2t::SacreBleuResult r = t2t::corpus_bleu(hyps, s.refs, {s.tokenize, !cased});
      // "BLEU = 23.45 56.7/..." named as T2T names it: the score, then the rest.
      const std::string text = r.to_string();
      const size_t end = text.find(' ', std::string("BLEU = ").size());
      v.score = r.score;
      v.headline = v.tag + text.substr(4, end - 4);
      v.details = end == std::string::npos ? "" : text.substr(end);
      v.signature = r.signature;
    }
    out.push_back(v);
  }
  return out;
}

// The directory mode's flags; refuses them without --translations_dir,
// where they would do nothing.
t2t::bleu::DirOptions dir_options(const cxxopts::ParseResult& flags) {
  t2t::bleu::DirOptions o;
  o.dir = flags["translations_dir"].as<std::string>();
  if (o.dir.empty()) {
    for (const char* name : {"event_dir", "tag_suffix", "min_steps", "wait_minutes",
                             "report_zero"})
      if (flags.count(name))
        throw UsageError(std::string("--") + name + " applies to --translations_dir (every "
                         "file of a directory); it does nothing for --translation");
    return o;
  }
  o.event_dir = flags["event_dir"].as<std::string>();
  if (o.event_dir.empty())
    for (const char* name : {"tag_suffix", "report_zero"})
      if (flags.count(name))
        throw UsageError(std::string("--") + name + " shapes the TensorBoard events, which "
                         "only --event_dir writes; give --event_dir=DIR too");
  o.tag_suffix = flags["tag_suffix"].as<std::string>();
  o.wait_minutes = flags["wait_minutes"].as<double>();
  if (!(o.wait_minutes >= 0)) throw UsageError("--wait_minutes must be >= 0");
  const int64_t min_steps = flags["min_steps"].as<int64_t>();
  if (min_steps < -1)
    throw UsageError("--min_steps=" + std::to_string(min_steps) +
                     ": give a step count, or -1 for the default");
  o.reference = flags["reference"].as<std::string>();
  t2t::bleu::resolve_min_steps(min_steps, &o);
  // T2T's default: the zero only at the start of the curve.
  o.report_zero = flags.count("report_zero") ? flags["report_zero"].as<bool>() : o.min_steps == 0;
  return o;
}

int score(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  // Standard output carries the scores alone; warnings go through the log,
  // on standard error, so that --log_level applies to them.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  t2t::setup_logging(flags["log_level"].as<std::string>());
  const std::string translation = flags["translation"].as<std::string>();
  const bool dir_mode = !flags["translations_dir"].as<std::string>().empty();
  if (!translation.empty() && dir_mode)
    throw UsageError("--translation and --translations_dir both say what to score; give "
                     "--translation for one file or --translations_dir for every file of a "
                     "directory");
  if (!dir_mode)
    required(flags, "translation",
             "--translation=out.zh (or --translations_dir=translations for a directory)");

  Scoring s;
  s.reference = required(flags, "reference", "--reference=ref.zh");
  const std::string variant = flags["bleu_variant"].as<std::string>();
  if (variant != "cased" && variant != "uncased" && variant != "both")
    throw UsageError("--bleu_variant=" + variant + ": use cased, uncased or both");
  // T2T's t2t-bleu prints the uncased score first.
  if (variant != "cased") s.cased_runs.push_back(false);
  if (variant != "uncased") s.cased_runs.push_back(true);
  s.metric = flags["metric"].as<std::string>();
  if (s.metric != "sacrebleu" && s.metric != "t2t")
    throw UsageError("--metric=" + s.metric + ": use sacrebleu or t2t");
  s.tokenize = flags["tokenize"].as<std::string>();
  if (!s.tokenize.empty() && s.tokenize != "13a" && s.tokenize != "intl" && s.tokenize != "zh" &&
      s.tokenize != "none")
    throw UsageError("--tokenize=" + s.tokenize + ": use 13a, intl, zh or none");
  if (s.metric == "t2t" && !s.tokenize.empty())
    throw UsageError("--tokenize applies to --metric=sacrebleu; T2T's bleu_hook has its own");
  const t2t::bleu::DirOptions dir = dir_options(flags);

  s.refs = read_lines("--reference", s.reference);
  warn_invalid_utf8("--reference", s.refs);
  if (s.tokenize.empty()) s.tokenize = t2t::default_tokenizer_for(s.refs);
  if (dir_mode)
    return t2t::bleu::score_dir(dir, [&s](const std::string& path) {
      return score_file(s, path, "--translations_dir", path);
    });
  for (const auto& v : score_file(s, "--translation=" + translation, "--translation",
                                  translation)) {
    std::cout << v.headline << v.details << "\n";
    if (!v.signature.empty()) std::cout << "  " << v.signature << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-bleu",
                           "Corpus BLEU of a translation against a reference, T2T's flags:\n"
                           "  t2t-bleu --translation=out.zh --reference=ref.zh\n"
                           "  t2t-bleu --translation=out.de --reference=ref.de --tokenize=intl "
                           "--bleu_variant=cased\n"
                           "  t2t-bleu --translation=out.de --reference=ref.de --metric=t2t\n"
                           "Every file t2t-translate-all wrote, one line each, as TensorBoard "
                           "events too:\n"
                           "  t2t-bleu --translations_dir=translations --reference=ref.zh "
                           "--event_dir=run/bleu [--wait_minutes=30]\n");
  t2t::cli::add_common_flags(options);
  add_bleu_flags(options);
  return t2t::cli::run(argc, argv, options, score);
}
