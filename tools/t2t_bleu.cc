// t2t-bleu: corpus BLEU of a translation file against a reference file, with
// T2T's flags. sacreBLEU's scoring by default (comparable with published
// numbers), or T2T's own bleu_hook scoring for comparing with old T2T runs.
#include <cstdio>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/metrics/sacrebleu.h"
#include "t2t/text/utf8.h"
#include "tools/cli_common.h"

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
}

std::vector<std::string> read_lines(const std::string& flag, const std::string& path) {
  try {
    return t2t::read_bleu_lines(path);
  } catch (const t2t::Error& e) {
    throw t2t::Error("--" + flag + ": " + e.what());
  }
}

void warn_invalid_utf8(const std::string& flag, const std::vector<std::string>& lines) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (!t2t::is_valid_utf8(lines[i]) && bad++ == 0) first = i + 1;
  if (bad)
    spdlog::warn("--{} has {} line(s) that are not valid UTF-8 (first: line {}); their invalid "
                 "bytes count as U+FFFD", flag, bad, first);
}

int score(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  using t2t::cli::UsageError;
  // Standard output carries the scores alone; warnings go through the log,
  // on standard error, so that --log_level applies to them.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  t2t::setup_logging(flags["log_level"].as<std::string>());
  const std::string translation = required(flags, "translation", "--translation=out.zh");
  const std::string reference = required(flags, "reference", "--reference=ref.zh");
  const std::string variant = flags["bleu_variant"].as<std::string>();
  if (variant != "cased" && variant != "uncased" && variant != "both")
    throw UsageError("--bleu_variant=" + variant + ": use cased, uncased or both");
  const std::string metric = flags["metric"].as<std::string>();
  if (metric != "sacrebleu" && metric != "t2t")
    throw UsageError("--metric=" + metric + ": use sacrebleu or t2t");
  std::string tokenize = flags["tokenize"].as<std::string>();
  if (!tokenize.empty() && tokenize != "13a" && tokenize != "intl" && tokenize != "zh" &&
      tokenize != "none")
    throw UsageError("--tokenize=" + tokenize + ": use 13a, intl, zh or none");
  if (metric == "t2t" && !tokenize.empty())
    throw UsageError("--tokenize applies to --metric=sacrebleu; T2T's bleu_hook has its own");

  const auto hyps = read_lines("translation", translation);
  const auto refs = read_lines("reference", reference);
  if (hyps.size() != refs.size())
    throw t2t::Error("--translation=" + translation + " has " + std::to_string(hyps.size()) +
                     " lines but --reference=" + reference + " has " +
                     std::to_string(refs.size()) +
                     " lines; BLEU needs exactly one translation per reference line");
  warn_invalid_utf8("translation", hyps);
  warn_invalid_utf8("reference", refs);

  // T2T's t2t-bleu prints the uncased score first.
  std::vector<bool> cased_runs;
  if (variant != "cased") cased_runs.push_back(false);
  if (variant != "uncased") cased_runs.push_back(true);
  if (metric == "t2t") {
    for (bool cased : cased_runs) {
      char line[64];
      std::snprintf(line, sizeof line, "BLEU_%s = %6.2f", cased ? "cased" : "uncased",
                    t2t::t2t_bleu(hyps, refs, cased));
      std::cout << line << "\n";
    }
    return 0;
  }
  if (tokenize.empty()) tokenize = t2t::default_tokenizer_for(refs);
  for (bool cased : cased_runs) {
    const t2t::SacreBleuResult r = t2t::corpus_bleu(hyps, refs, {tokenize, !cased});
    // "BLEU = 23.45 ..." named as T2T names it, then the signature that says
    // how the number was made.
    std::cout << "BLEU_" << (cased ? "cased" : "uncased") << r.to_string().substr(4) << "\n"
              << "  " << r.signature << "\n";
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
                           "  t2t-bleu --translation=out.de --reference=ref.de --metric=t2t\n");
  t2t::cli::add_common_flags(options);
  add_bleu_flags(options);
  return t2t::cli::run(argc, argv, options, score);
}
