#include "t2t/data/samples.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/text/pharaoh.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

std::ifstream open_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw OptionError("tmp_dir", "cannot open '" + path + "': " + std::strerror(errno) +
                                     ". Check the path, or let t2t-datagen download the data "
                                     "into {tmp_dir}");
  return in;
}

int64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

bool read_line(std::ifstream& in, std::string* line) {
  if (!std::getline(in, *line)) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

}  // namespace

std::string SampleStats::summary() const {
  std::string s = std::to_string(kept()) + " of " + std::to_string(read) + " pairs kept";
  std::vector<std::string> dropped;
  if (empty) dropped.push_back(std::to_string(empty) + " with an empty side");
  if (invalid_utf8) dropped.push_back(std::to_string(invalid_utf8) + " with invalid UTF-8");
  if (too_long) dropped.push_back(std::to_string(too_long) + " over the length limit");
  if (!dropped.empty()) s += " (dropped " + join(dropped, ", ") + ")";
  return s;
}

ParallelTextReader::ParallelTextReader(std::string source_path, std::string target_path)
    : source_path_(std::move(source_path)),
      target_path_(std::move(target_path)),
      source_(open_text(source_path_)),
      target_(open_text(target_path_)) {}

bool ParallelTextReader::next(TextPair* pair) {
  bool has_source = read_line(source_, &pair->source);
  bool has_target = read_line(target_, &pair->target);
  if (has_source != has_target) {
    const std::string& shorter = has_source ? target_path_ : source_path_;
    const std::string& longer = has_source ? source_path_ : target_path_;
    throw Error("parallel files differ in length: '" + shorter + "' ends after " +
                std::to_string(line_) + " lines but '" + longer +
                "' goes on. Each line of one must translate the same line of the other.");
  }
  if (has_source) ++line_;
  return has_source;
}

AlignedStream::AlignedStream(std::unique_ptr<SampleStream> inner, std::string alignment_path)
    : inner_(std::move(inner)), path_(std::move(alignment_path)), in_(path_, std::ios::binary) {
  if (!in_)
    throw OptionError("train_alignments", "cannot open the alignment file '" + path_ + "' ({train_alignments}): " +
                                              std::strerror(errno));
}

bool AlignedStream::next(TextPair* pair) {
  const bool has_pair = inner_->next(pair);
  std::string line;
  const bool has_line = read_line(in_, &line);
  if (has_pair != has_line)
    throw Error("alignment file '" + path_ + "' has " +
                (has_pair ? "only " + std::to_string(line_) + " lines but the training data goes on"
                          : "more lines than the training data's " + std::to_string(line_) +
                                " pairs") +
                ": it needs one line per training pair, in the order of the problem's raw "
                "training data");
  if (!has_pair) return false;
  ++line_;
  pair->aligned = true;
  pair->alignment_where = "alignment file '" + path_ + "' line " + std::to_string(line_);
  pair->alignment = parse_pharaoh(line, pair->alignment_where);
  return true;
}

TabSeparatedReader::TabSeparatedReader(std::string path)
    : path_(std::move(path)), in_(open_text(path_)) {}

int64_t ParallelTextReader::text_bytes() const {
  return file_bytes(source_path_) + file_bytes(target_path_);
}

int64_t TabSeparatedReader::text_bytes() const { return file_bytes(path_); }

bool TabSeparatedReader::next(TextPair* pair) {
  std::string line;
  while (read_line(in_, &line)) {
    ++line_;
    if (trim(line).empty()) continue;
    size_t tab = line.find('\t');
    if (tab == std::string::npos)
      throw Error("'" + path_ + "' line " + std::to_string(line_) +
                  " has no tab: expected 'source<TAB>target[<TAB>...]'");
    size_t tab2 = line.find('\t', tab + 1);
    pair->source = line.substr(0, tab);
    pair->target = line.substr(tab + 1, tab2 == std::string::npos ? std::string::npos : tab2 - tab - 1);
    return true;
  }
  return false;
}

HashSplitStream::HashSplitStream(std::unique_ptr<SampleStream> inner, bool dev, int every)
    : inner_(std::move(inner)), dev_(dev), every_(every) {
  if (every < 1) throw Error("HashSplitStream: every must be at least 1, got " +
                             std::to_string(every));
}

int64_t HashSplitStream::text_bytes() const {
  const int64_t all = inner_->text_bytes();
  if (all < 0) return -1;
  return dev_ ? all / every_ : all - all / every_;
}

bool HashSplitStream::next(TextPair* pair) {
  // Not FNV-1a's own basis (this one lacks its last decimal digit), but the
  // one every split made so far used: changing it would move sentences
  // between train and dev of existing data.
  constexpr uint64_t kBasis = 1469598103934665603ULL;
  while (inner_->next(pair)) {
    if ((fnv1a64(pair->source, kBasis) % static_cast<uint64_t>(every_) == 0) == dev_) return true;
  }
  return false;
}

bool ConcatStream::next(TextPair* pair) {
  for (; pos_ < parts_.size(); parts_[pos_++].reset())
    if (parts_[pos_]->next(pair)) return true;
  return false;
}

int64_t ConcatStream::text_bytes() const {
  int64_t sum = 0;
  for (size_t i = pos_; i < parts_.size(); ++i) {
    const int64_t n = parts_[i]->text_bytes();
    if (n < 0) return -1;
    sum += n;
  }
  return sum;
}

int64_t VectorStream::text_bytes() const {
  int64_t sum = 0;
  for (size_t i = pos_; i < pairs_.size(); ++i)
    sum += pairs_[i].source.size() + pairs_[i].target.size() + 2;
  return sum;
}

bool VectorStream::next(TextPair* pair) {
  if (pos_ >= pairs_.size()) return false;
  *pair = pairs_[pos_++];
  return true;
}

FilteredStream::FilteredStream(std::unique_ptr<SampleStream> inner, std::string what,
                               int64_t max_line_bytes, int64_t max_cases)
    : inner_(std::move(inner)),
      what_(std::move(what)),
      max_line_bytes_(max_line_bytes),
      max_cases_(max_cases) {}

bool FilteredStream::next(TextPair* pair) {
  while (true) {
    if (max_cases_ > 0 && stats_.kept() >= max_cases_) return false;
    if (!inner_->next(pair)) return false;
    ++stats_.read;
    const char* why = nullptr;
    if (!is_valid_utf8(pair->source) || !is_valid_utf8(pair->target)) {
      ++stats_.invalid_utf8;
      why = "invalid UTF-8";
    } else {
      pair->source = trim(pair->source);
      pair->target = trim(pair->target);
      if (pair->source.empty() || pair->target.empty()) {
        ++stats_.empty;
        why = "an empty side";
      } else if (max_line_bytes_ > 0 &&
                 (static_cast<int64_t>(pair->source.size()) > max_line_bytes_ ||
                  static_cast<int64_t>(pair->target.size()) > max_line_bytes_)) {
        ++stats_.too_long;
        why = "a side over the length limit";
      }
    }
    if (!why) return true;
    // Empty lines are common and harmless; the rest deserve a look.
    if (std::strcmp(why, "an empty side") != 0 && warnings_ < 5) {
      ++warnings_;
      spdlog::warn("{}: skipping pair {} ({}){}", what_, stats_.read, why,
                   warnings_ == 5 ? "; further skips are only counted" : "");
    }
  }
}

std::string strip_sgml(const std::string& line) {
  std::string out;
  bool in_tag = false;
  for (char c : line) {
    if (c == '<') in_tag = true;
    else if (c == '>') in_tag = false;
    else if (!in_tag) out += c;
  }
  return trim(out);
}

std::vector<std::string> read_sgm_segments(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open '" + path + "'");
  std::vector<std::string> segs;
  std::string line;
  while (std::getline(in, line))
    if (line.find("<seg") != std::string::npos) segs.push_back(strip_sgml(line));
  return segs;
}

std::unique_ptr<SampleStream> read_sgm_pairs(const std::string& source, const std::string& target) {
  const auto src = read_sgm_segments(source), tgt = read_sgm_segments(target);
  if (src.size() != tgt.size())
    throw Error("'" + source + "' has " + std::to_string(src.size()) + " segments but '" + target +
                "' has " + std::to_string(tgt.size()));
  std::vector<TextPair> pairs;
  pairs.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) pairs.push_back({src[i], tgt[i]});
  return std::make_unique<VectorStream>(std::move(pairs));
}

}  // namespace t2t
