// t2t-bleu: corpus BLEU of a translation file against one or more
// reference files, with T2T's flags. sacreBLEU's scoring by default
// (comparable with published numbers), chrF, chrF++ and TER beside it, or
// T2T's own bleu_hook scoring for comparing with old T2T runs; sentence by
// sentence for error analysis. With --translations_dir, T2T's directory
// mode: every file t2t-translate-all wrote there (<problem>-<step>), in step
// order, each scored the same way, optionally as TensorBoard events and
// while training goes on.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/metrics/bleu_tokenizers.h"
#include "t2t/metrics/score.h"
#include "t2t/text/utf8.h"
#include "tools/bleu_dir.h"
#include "tools/cli_common.h"

using t2t::bleu::VariantScore;
using t2t::cli::UsageError;

namespace {

void add_bleu_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Scoring")
      ("translation", "The system's translations, one sentence a line.",
       value<std::string>()->default_value(""))
      ("reference", "The reference translations, line for line. Several references (WMT's A "
       "and B): repeat the flag or separate the files with commas; each sentence is then "
       "scored against all of them, as sacreBLEU does.", value<std::vector<std::string>>())
      ("metric", "What to compute, several separated by commas: bleu (sacreBLEU's BLEU, "
       "comparable with published numbers), chrf, chrf++, ter (sacreBLEU's, with its "
       "defaults), or t2t (Tensor2Tensor's bleu_hook BLEU with its own tokenizer, to compare "
       "with numbers from old T2T runs; one reference only). Default: bleu.",
       value<std::vector<std::string>>())
      ("bleu_variant", "cased, uncased or both, for every metric: uncased lowercases both "
       "sides (for TER, sacreBLEU's default, it is not case-sensitive).",
       value<std::string>()->default_value("both"))
      ("sentence_level", "Print the score of each sentence, one line each in file order, "
       "then the signature, instead of the corpus score: for error analysis. One metric and "
       "one --bleu_variant (default: cased, uncased for TER); BLEU takes the effective order, "
       "as sacreBLEU's sentence BLEU does.", value<bool>());
  options.add_options("BLEU")
      ("tokenize", "sacreBLEU tokenizer: 13a, intl, zh, char or none. Default: zh when the "
       "reference is Chinese, else 13a.", value<std::string>()->default_value(""))
      ("smooth_method", "exp (sacreBLEU's default), floor, add-k or none.",
       value<std::string>()->default_value("exp"))
      ("smooth_value", "For --smooth_method=floor (default 0.1) or add-k (default 1).",
       value<double>());
  options.add_options("chrF")
      ("chrf_char_order", "Character n-gram order.", value<int>()->default_value("6"))
      ("chrf_word_order", "Word n-gram order of --metric=chrf (chrf++ is word order 2).",
       value<int>()->default_value("0"))
      ("chrf_beta", "Recall weighs beta times as much as precision.",
       value<int>()->default_value("2"))
      ("chrf_whitespace", "Keep whitespace in the character n-grams.", value<bool>())
      ("chrf_eps_smoothing", "chrF++.py's epsilon smoothing instead of sacreBLEU's "
       "effective order.", value<bool>());
  options.add_options("TER")
      ("ter_normalized", "Tercom's normalisation: punctuation split off, XML entities "
       "read.", value<bool>())
      ("ter_no_punct", "Remove punctuation.", value<bool>())
      ("ter_asian_support", "With --ter_normalized, split Chinese and Japanese characters; "
       "with --ter_no_punct, remove their punctuation too. For a Chinese or Japanese "
       "reference.", value<bool>());
  options.add_options("Directory")
      ("translations_dir", "Instead of --translation: score every file of this directory "
       "named <problem>-<step> (t2t-translate-all's files; the step is the digits after the "
       "last '-') against --reference, in step order, one line each. Other files are skipped "
       "with a log line.", value<std::string>()->default_value(""))
      ("event_dir", "Write each score into this directory as a TensorBoard event at the "
       "file's step (tags BLEU_uncased, BLEU_cased, chrF2_cased, TER_uncased, ... as "
       "--metric and --bleu_variant say), and the step scored last to "
       "last_evaluated_step.txt. Default: no events.",
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
      ("report_zero", "Write a score of 0 at step 0 before the first score, so that the curve "
       "starts from zero. Default: on when --min_steps comes to 0, as in T2T.",
       value<bool>());
}

// One metric as --metric names it: "t2t" is T2T's bleu_hook, the others
// the library's sacreBLEU metrics.
struct MetricRun {
  std::string name;  // as given (sacrebleu is read as bleu)
  std::optional<t2t::MetricSpec> spec;
};

// How every file is scored, --translation or each of --translations_dir:
// the flags read once, and the references.
struct Scoring {
  std::vector<MetricRun> metrics;
  std::vector<bool> cased_runs;  // uncased first, as T2T prints them
  bool sentence_level = false;
  std::vector<std::string> reference_paths;
  std::vector<std::vector<std::string>> reference_lines;  // per file
  std::optional<t2t::References> references;
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

std::string fixed2(double v, const char* format = "%.2f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// `label` is how messages name the file ("--translation=out.zh", or the
// path of a file of --translations_dir), `read_label` the flag that gave it.
std::vector<std::string> read_translation(const Scoring& s, const std::string& label,
                                          const std::string& read_label,
                                          const std::string& path) {
  auto hyps = read_lines(read_label, path);
  for (size_t r = 0; r < s.reference_paths.size(); ++r)
    if (hyps.size() != s.reference_lines[r].size())
      throw t2t::Error(label + " has " + std::to_string(hyps.size()) + " lines but --reference=" +
                       s.reference_paths[r] + " has " +
                       std::to_string(s.reference_lines[r].size()) +
                       " lines; scoring needs exactly one translation per reference line");
  warn_invalid_utf8(label, hyps);
  return hyps;
}

std::vector<VariantScore> score_file(const Scoring& s, const std::string& label,
                                     const std::string& read_label, const std::string& path) {
  const auto hyps = read_translation(s, label, read_label, path);
  std::vector<VariantScore> out;
  for (const MetricRun& m : s.metrics) {
    for (bool cased : s.cased_runs) {
      VariantScore v;
      if (!m.spec) {
        v.tag = cased ? "BLEU_cased" : "BLEU_uncased";
        v.score = t2t::t2t_bleu(hyps, s.reference_lines[0], cased);
        v.headline = v.tag + " = " + fixed2(v.score, "%6.2f");
      } else {
        t2t::MetricSpec spec = *m.spec;
        spec.set_lowercase(!cased);
        const t2t::MetricScore r = t2t::corpus_score(spec, hyps, *s.references);
        v.tag = r.name + (cased ? "_cased" : "_uncased");
        v.score = r.score;
        v.headline = v.tag + " = " + fixed2(r.score);
        v.details = r.details;
        v.signature = r.signature;
      }
      out.push_back(v);
    }
  }
  return out;
}

// --sentence_level: each line's score, then the signature.
void print_sentence_scores(const Scoring& s, const std::string& translation) {
  const auto hyps =
      read_translation(s, "--translation=" + translation, "--translation", translation);
  t2t::MetricSpec spec = *s.metrics[0].spec;
  spec.set_lowercase(!s.cased_runs[0]);
  std::string signature;
  for (const auto& score : t2t::sentence_scores(spec, hyps, *s.references)) {
    std::cout << score.to_string() << "\n";
    signature = score.signature;
  }
  // Each sentence is scored alone, but against all the references given.
  const size_t eq = signature.find('|');
  if (!signature.empty())
    std::cout << "  nrefs:" << s.references->nrefs() << signature.substr(eq) << "\n";
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
  o.references = t2t::cli::list_flag(flags, "reference");
  t2t::bleu::resolve_min_steps(min_steps, &o);
  // T2T's default: the zero only at the start of the curve.
  o.report_zero = flags.count("report_zero") ? flags["report_zero"].as<bool>() : o.min_steps == 0;
  return o;
}

// The flags of one metric's group are refused when no --metric uses them.
void refuse_unused(const cxxopts::ParseResult& flags, const std::vector<const char*>& names,
                   bool used, const std::string& what) {
  if (used) return;
  for (const char* name : names)
    if (flags.count(name))
      throw UsageError(std::string("--") + name + " applies to " + what + ", which --metric "
                       "does not ask for");
}

// --metric, its options and --bleu_variant, checked against each other.
void read_metrics(const cxxopts::ParseResult& flags, Scoring* s) {
  std::vector<std::string> names = t2t::cli::list_flag(flags, "metric");
  if (names.empty()) names = {"bleu"};
  bool bleu = false, chrf = false, chrf_pp = false, ter = false, t2t_metric = false;
  for (std::string name : names) {
    if (name == "sacrebleu") name = "bleu";  // the name t2t-bleu had before chrF and TER
    for (const MetricRun& m : s->metrics)
      if (m.name == name) throw UsageError("--metric names " + name + " twice");
    MetricRun run{name, std::nullopt};
    if (name != "t2t") {
      try {
        run.spec = t2t::metric_spec(name);
      } catch (const t2t::Error&) {
        throw UsageError("--metric=" + name + ": use " + t2t::metric_names() +
                         ", or t2t for T2T's bleu_hook BLEU");
      }
    }
    bleu |= name == "bleu";
    chrf |= name == "chrf";
    chrf_pp |= name == "chrf++";
    ter |= name == "ter";
    t2t_metric |= name == "t2t";
    s->metrics.push_back(std::move(run));
  }
  refuse_unused(flags, {"tokenize", "smooth_method", "smooth_value"}, bleu,
                "sacreBLEU's BLEU (--metric=bleu; T2T's bleu_hook has its own tokenizer)");
  refuse_unused(flags, {"chrf_char_order", "chrf_beta", "chrf_whitespace", "chrf_eps_smoothing"},
                chrf || chrf_pp, "chrF (--metric=chrf or chrf++)");
  refuse_unused(flags, {"chrf_word_order"}, chrf,
                "--metric=chrf (chrf++ is chrF with word order 2)");
  refuse_unused(flags, {"ter_normalized", "ter_no_punct", "ter_asian_support"}, ter,
                "TER (--metric=ter)");

  const std::string tokenize = flags["tokenize"].as<std::string>();
  const auto& tokenizers = t2t::bleu_tok::sacrebleu_tokenizer_names();
  if (!tokenize.empty() &&
      std::find(tokenizers.begin(), tokenizers.end(), tokenize) == tokenizers.end())
    throw UsageError("--tokenize=" + tokenize + ": use " + t2t::bleu_tok::sacrebleu_tokenizer_list());
  const std::string smooth = flags["smooth_method"].as<std::string>();
  if (smooth != "exp" && smooth != "floor" && smooth != "add-k" && smooth != "none")
    throw UsageError("--smooth_method=" + smooth + ": use exp, floor, add-k or none");
  if (flags.count("smooth_value") && smooth != "floor" && smooth != "add-k")
    throw UsageError("--smooth_value is for --smooth_method=floor or add-k");
  for (const char* name : {"chrf_char_order", "chrf_word_order", "chrf_beta"})
    if (flags[name].as<int>() < 0)
      throw UsageError(std::string("--") + name + "=" + std::to_string(flags[name].as<int>()) +
                       " must be >= 0");
  for (MetricRun& m : s->metrics) {
    if (!m.spec) continue;
    t2t::SacreBleuOptions& b = m.spec->bleu;
    b.tokenize = tokenize;  // resolved from the reference once it is read
    b.smooth_method = smooth;
    if (flags.count("smooth_value")) b.smooth_value = flags["smooth_value"].as<double>();
    t2t::ChrfOptions& c = m.spec->chrf;
    c.char_order = flags["chrf_char_order"].as<int>();
    if (m.name == "chrf") c.word_order = flags["chrf_word_order"].as<int>();
    c.beta = flags["chrf_beta"].as<int>();
    c.whitespace = flags.count("chrf_whitespace") && flags["chrf_whitespace"].as<bool>();
    c.eps_smoothing = flags.count("chrf_eps_smoothing") && flags["chrf_eps_smoothing"].as<bool>();
    if (m.spec->kind == t2t::MetricKind::kChrf && c.char_order + c.word_order == 0)
      throw UsageError("--chrf_char_order=0 with word order 0 leaves chrF no n-grams");
    t2t::TerOptions& t = m.spec->ter;
    t.normalized = flags.count("ter_normalized") && flags["ter_normalized"].as<bool>();
    t.no_punct = flags.count("ter_no_punct") && flags["ter_no_punct"].as<bool>();
    t.asian_support = flags.count("ter_asian_support") && flags["ter_asian_support"].as<bool>();
  }

  const std::string variant = flags["bleu_variant"].as<std::string>();
  if (variant != "cased" && variant != "uncased" && variant != "both")
    throw UsageError("--bleu_variant=" + variant + ": use cased, uncased or both");
  s->sentence_level = flags.count("sentence_level") && flags["sentence_level"].as<bool>();
  if (s->sentence_level) {
    if (s->metrics.size() != 1)
      throw UsageError("--sentence_level prints one score a line: give one --metric");
    if (t2t_metric)
      throw UsageError("--sentence_level scores with sacreBLEU's metrics; --metric=t2t is "
                       "T2T's corpus BLEU only");
    if (!flags.count("bleu_variant")) {
      // The metric's own sacreBLEU default: TER ignores case, the others not.
      s->cased_runs.push_back(!ter);
      return;
    }
    if (variant == "both")
      throw UsageError("--sentence_level prints one score a line: give --bleu_variant=cased "
                       "or uncased");
  }
  // T2T's t2t-bleu prints the uncased score first.
  if (variant != "cased") s->cased_runs.push_back(false);
  if (variant != "uncased") s->cased_runs.push_back(true);
}

int score(const cxxopts::ParseResult& flags) {
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
    t2t::cli::required(flags, "translation",
                       "--translation=out.zh (or --translations_dir=translations for a "
                       "directory)");

  Scoring s;
  s.reference_paths = t2t::cli::list_flag(flags, "reference");
  if (s.reference_paths.empty())
    throw UsageError("--reference is required, e.g. --reference=ref.zh (several: "
                     "--reference=ref.A.zh,ref.B.zh)");
  read_metrics(flags, &s);
  if (s.sentence_level && dir_mode)
    throw UsageError("--sentence_level scores the lines of one --translation, not a directory");
  for (const MetricRun& m : s.metrics)
    if (!m.spec && s.reference_paths.size() > 1)
      throw UsageError("--metric=t2t is T2T's bleu_hook BLEU, which takes one reference; "
                       "--metric=bleu scores against several as sacreBLEU does");
  const t2t::bleu::DirOptions dir = dir_options(flags);

  for (size_t r = 0; r < s.reference_paths.size(); ++r) {
    const std::string label = "--reference=" + s.reference_paths[r];
    s.reference_lines.push_back(read_lines("--reference", s.reference_paths[r]));
    warn_invalid_utf8(label, s.reference_lines.back());
    if (r > 0 && s.reference_lines[r].size() != s.reference_lines[0].size())
      throw t2t::Error(label + " has " + std::to_string(s.reference_lines[r].size()) +
                       " lines but --reference=" + s.reference_paths[0] + " has " +
                       std::to_string(s.reference_lines[0].size()) +
                       "; every reference translates the same sentences");
  }
  s.references.emplace(s.reference_lines);
  // sacreBLEU's zh tokenizer for a Chinese reference, read from the first.
  const std::string tokenize = t2t::default_tokenizer_for(s.reference_lines[0]);
  for (MetricRun& m : s.metrics)
    if (m.spec && m.spec->bleu.tokenize.empty()) m.spec->bleu.tokenize = tokenize;

  if (dir_mode)
    return t2t::bleu::score_dir(dir, [&s](const std::string& path) {
      return score_file(s, path, "--translations_dir", path);
    });
  if (s.sentence_level) {
    print_sentence_scores(s, translation);
    return 0;
  }
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
                           "Corpus BLEU, chrF and TER of a translation against references, "
                           "T2T's flags:\n"
                           "  t2t-bleu --translation=out.zh --reference=ref.zh\n"
                           "  t2t-bleu --translation=out.zh --reference=ref.A.zh,ref.B.zh "
                           "--metric=bleu,chrf,ter\n"
                           "  t2t-bleu --translation=out.zh --reference=ref.zh --metric=chrf "
                           "--sentence_level\n"
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
