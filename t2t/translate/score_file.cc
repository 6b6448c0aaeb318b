#include "t2t/translate/score_file.h"

#include <algorithm>
#include <cstdio>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/translate/decode_modes.h"
#include "t2t/translate/batch_translator.h"

namespace t2t {

std::vector<double> score_file(BatchTranslator& decoder, const std::string& path,
                               std::vector<WordAlignment>* alignments) {
  const Stopwatch clock;
  const auto lines = read_records(path, "\n", "score_file");
  std::vector<std::vector<int64_t>> sources, targets;
  sources.reserve(lines.size());
  targets.reserve(lines.size());
  int64_t target_tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string line_no = " line " + std::to_string(i + 1);
    const std::string where = "score file " + path + line_no;
    // The file is an option of the caller's: its errors name the option the
    // way the front end spells it (--score_file=... or path=...).
    const auto bad = [&](const std::string& what) {
      return OptionError("score_file", "{score_file}=" + path + line_no + " " + what);
    };
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) throw bad("has no TAB: each line must be 'input<TAB>target'");
    if (line.find('\t', tab + 1) != std::string::npos)
      throw bad("has more than one TAB: each line must be 'input<TAB>target'");
    sources.push_back(decoder.encode_source(line.substr(0, tab), where));
    targets.push_back(decoder.encode_target(line.substr(tab + 1)));
    if (sources.back().empty())
      throw bad("has an empty input (before the TAB); every pair needs both sides");
    if (targets.back().empty())
      throw bad("has an empty target (after the TAB); every pair needs both sides");
    target_tokens += static_cast<int64_t>(targets.back().size());
  }
  spdlog::info("scoring {} pairs of {}", lines.size(), path);
  const auto scores =
      decoder.score(sources, targets, decoder.options().search.alignment ? alignments : nullptr);
  const double secs = std::max(clock.seconds(), 1e-9);
  spdlog::info("scored {} pairs ({} target tokens, EOS included) in {:.1f} s: {:.1f} pairs/s",
               scores.size(), target_tokens, secs, scores.size() / secs);
  const auto counts = decoder.counts();
  if (counts.invalid_utf8 > 0)
    spdlog::warn("{} sides held invalid UTF-8, replaced by U+FFFD before scoring",
                 counts.invalid_utf8);
  if (counts.truncated > 0)
    spdlog::warn("{} inputs were longer than max_input_size and were cut", counts.truncated);
  return scores;
}

std::string format_scores(const std::vector<double>& scores,
                          const std::vector<WordAlignment>& alignments, bool soft) {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < scores.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.6f", scores[i]);
    out += buf;
    if (i < alignments.size())
      out += "\t" + (soft ? soft_alignment_text(alignments[i].soft) : pharaoh(alignments[i].hard));
    out += '\n';
  }
  return out;
}

}  // namespace t2t
