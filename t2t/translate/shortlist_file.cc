#include "t2t/translate/shortlist_file.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "t2t/core/error.h"
#include "t2t/text/text_encoder.h"

namespace t2t {
namespace {

namespace fs = std::filesystem;

// The first line of a file with more than whitespace ("" if none).
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return "";
}

// A line's first token: after its optional leading tab (a vmap's
// always-allowed line), up to whitespace.
std::string first_token(const std::string& line) {
  const size_t start = line.find_first_not_of(" \t\r");
  if (start == std::string::npos) return "";
  const size_t end = line.find_first_of(" \t\r", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Tokens named "<id_N>" when the file's first token is one that the
// vocabulary has not as a string of its own.
ShortlistTokens tokens_for(const std::string& first, const TextEncoder& encoder) {
  ShortlistTokens own = vocabulary_tokens(encoder);
  const ShortlistTokens ids = ShortlistTokens::ids(encoder.vocab_size());
  return ids.id(first) >= 0 && own.id(first) < 0 ? ids : own;
}

ShortlistFormat format_of_line(const std::string& line, const std::string& path) {
  if (line.find('\t') != std::string::npos) return ShortlistFormat::kVmap;
  std::istringstream fields(line);
  std::string target, source, probability, more;
  if (fields >> target >> source >> probability && !(fields >> more)) {
    char* end = nullptr;
    std::strtod(probability.c_str(), &end);
    if (end == probability.c_str() + probability.size()) return ShortlistFormat::kMarian;
  }
  throw Error(path + ": not a shortlist: its first line has no tab (a vmap's \"source<TAB>"
              "targets\") and is not Marian's \"target source probability\"");
}

}  // namespace

ShortlistTokens vocabulary_tokens(const TextEncoder& encoder) {
  std::vector<int64_t> all(static_cast<size_t>(encoder.vocab_size()));
  std::iota(all.begin(), all.end(), int64_t{0});
  return ShortlistTokens(encoder.decode_list(all));
}

ShortlistFormat detect_shortlist_format(const std::string& path) {
  return format_of_line(first_line(path), path);
}

std::string shortlist_path(const std::string& file, const std::string& model_dir) {
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) return file;
  if (!model_dir.empty() && fs::path(file).is_relative()) {
    const std::string beside = (fs::path(model_dir) / file).string();
    if (fs::is_regular_file(beside, ec)) return beside;
    throw OptionError("shortlist", "{shortlist}=" + file + ": no such file, here or in the "
                                   "model directory (" + beside + ")");
  }
  throw OptionError("shortlist", "{shortlist}=" + file + ": no such file");
}

std::shared_ptr<const LexicalShortlist> load_shortlist(const ShortlistOptions& options,
                                                       const std::string& model_dir,
                                                       const TextEncoder& source,
                                                       const TextEncoder& target) {
  if (options.file.empty()) return nullptr;
  if (options.limits.best < 0)
    throw OptionError("shortlist_best", "{shortlist_best}=" + std::to_string(options.limits.best) +
                                            ": give a count >= 1, or 0 for every target listed");
  if (options.limits.frequent < -1)
    throw OptionError("shortlist_frequent",
                      "{shortlist_frequent}=" + std::to_string(options.limits.frequent) +
                          ": give a count >= 0, or -1 for every one listed");
  const std::string path = shortlist_path(options.file, model_dir);
  ShortlistReadReport report;
  std::shared_ptr<const LexicalShortlist> out;
  try {
    const std::string line = first_line(path);
    ShortlistReadOptions read;
    read.format = format_of_line(line, path);
    read.marian_threshold = options.threshold;
    if (read.format == ShortlistFormat::kMarian && options.limits.frequent >= 0)
      read.marian_first = options.limits.frequent;
    if (read.format == ShortlistFormat::kVmap && options.threshold != 0)
      throw OptionError("shortlist_threshold", "{shortlist_threshold} applies to Marian's "
                        "shortlists, whose entries have probabilities; " + path + " is a vmap");
    const std::string first = first_token(line);
    out = std::make_shared<const LexicalShortlist>(read_shortlist(
        path, tokens_for(first, source), tokens_for(first, target), read, &report));
  } catch (const OptionError&) {
    throw;
  } catch (const Error& e) {
    throw OptionError("shortlist", std::string("{shortlist}: ") + e.what());
  }
  spdlog::info("shortlist {}: {} source n-grams, {} targets always allowed{}", path, out->size(),
               out->frequent().size(),
               report.unknown_source + report.unknown_target == 0
                   ? std::string()
                   : "; skipped " + std::to_string(report.unknown_source) +
                         " entries with source tokens and " +
                         std::to_string(report.unknown_target) +
                         " target tokens the vocabularies do not have");
  if (out->size() == 0 && out->frequent().empty())
    throw OptionError("shortlist", "{shortlist}: " + path + " holds no token of these "
                                   "vocabularies; is it the shortlist of another model?");
  return out;
}

}  // namespace t2t
