// Streams of (source, target) text pairs: what a text problem's generator
// yields, read lazily so that no corpus is ever held in memory whole.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace t2t {

struct TextPair {
  std::string source;
  std::string target;
};

// What was dropped on the way, reported once a split is written.
struct SampleStats {
  int64_t read = 0;           // pairs seen
  int64_t empty = 0;          // a side empty after trimming
  int64_t invalid_utf8 = 0;   // a side not valid UTF-8
  int64_t too_long = 0;       // a side longer than the byte limit
  int64_t kept() const { return read - empty - invalid_utf8 - too_long; }
  std::string summary() const;
};

class SampleStream {
 public:
  virtual ~SampleStream() = default;
  // Fills `pair` and returns true, or returns false at the end.
  virtual bool next(TextPair* pair) = 0;
  // About how many bytes of text the pairs still to come hold in all (for
  // disk space estimates), or -1 when the stream cannot tell.
  virtual int64_t text_bytes() const { return -1; }
};

// Two line-aligned files, e.g. train.en / train.zh. Lines are read as bytes;
// a trailing '\r' is removed. Files of different lengths are an error naming
// both files and the line where one ran out.
class ParallelTextReader : public SampleStream {
 public:
  ParallelTextReader(std::string source_path, std::string target_path);
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override;  // both files' sizes

 private:
  std::string source_path_, target_path_;
  std::ifstream source_, target_;
  int64_t line_ = 0;
};

// One file with a source and a target per line, separated by a tab (more
// columns, e.g. an attribution, are ignored). A line without a tab is an
// error naming the file and line.
class TabSeparatedReader : public SampleStream {
 public:
  explicit TabSeparatedReader(std::string path);
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override;  // the file's size

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_ = 0;
};

// Pairs held in memory (small dev sets, tests).
class VectorStream : public SampleStream {
 public:
  explicit VectorStream(std::vector<TextPair> pairs) : pairs_(std::move(pairs)) {}
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override;

 private:
  std::vector<TextPair> pairs_;
  size_t pos_ = 0;
};

// Several streams one after the other.
class ConcatStream : public SampleStream {
 public:
  explicit ConcatStream(std::vector<std::unique_ptr<SampleStream>> parts)
      : parts_(std::move(parts)) {}
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override;  // -1 when a part cannot tell

 private:
  std::vector<std::unique_ptr<SampleStream>> parts_;
  size_t pos_ = 0;
};

// Keeps one part of a corpus that has no split of its own: the pairs whose
// source hashes to 0 modulo `every` (dev = true) or the others (dev =
// false). Hashing the source, not counting lines, keeps every translation
// of one source sentence on the same side, and gives the same split on
// every platform and run.
class HashSplitStream : public SampleStream {
 public:
  HashSplitStream(std::unique_ptr<SampleStream> inner, bool dev, int every);
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override;  // the part's share of the inner stream's

 private:
  std::unique_ptr<SampleStream> inner_;
  bool dev_;
  int every_;
};

// Drops pairs with an empty side, invalid UTF-8 or a side over
// `max_line_bytes` (0: no limit), trims whitespace, counts what it drops
// and warns about the first few with their position, and stops after
// `max_cases` kept pairs (0: all).
class FilteredStream : public SampleStream {
 public:
  FilteredStream(std::unique_ptr<SampleStream> inner, std::string what, int64_t max_line_bytes,
                 int64_t max_cases);
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override { return inner_->text_bytes(); }
  const SampleStats& stats() const { return stats_; }

 private:
  std::unique_ptr<SampleStream> inner_;
  std::string what_;
  int64_t max_line_bytes_, max_cases_;
  SampleStats stats_;
  int warnings_ = 0;
};

// Removes SGML markup from a WMT .sgm line: "<seg id="1">text</seg>" ->
// "text"; lines that are only markup give "".
std::string strip_sgml(const std::string& line);

// The segments of a WMT .sgm file (its <seg> lines, markup stripped), in
// order. Throws t2t::Error naming the file when it cannot be read.
std::vector<std::string> read_sgm_segments(const std::string& path);

// Both sides of a WMT dev or test set, `source` and `target` .sgm files, as
// pairs in memory; throws t2t::Error naming both when their segment counts
// differ.
std::unique_ptr<SampleStream> read_sgm_pairs(const std::string& source, const std::string& target);

}  // namespace t2t
