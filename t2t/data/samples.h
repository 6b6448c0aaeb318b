// Streams of (source, target) text pairs, read lazily so no corpus is held
// in memory whole.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

struct TextPair {
  std::string source;
  std::string target;
  // The pair's word alignment (source word, target word), set by an
  // AlignedStream; `alignment_where` names its line for errors.
  bool aligned = false;
  std::vector<std::pair<int64_t, int64_t>> alignment;
  std::string alignment_where;
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
  // About how many bytes of text are still to come, or -1 when unknown.
  virtual int64_t text_bytes() const { return -1; }
};

// Two line-aligned files, read as bytes, a trailing '\r' removed. Files of
// different lengths are an error naming both and the line.
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

// One file of "source<TAB>target" lines (further columns ignored). A line
// without a tab is an error naming the file and line.
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

// One part of a corpus without its own split: pairs whose source hashes to
// 0 modulo `every` (dev) or the others. Hashing the source keeps every
// translation of a sentence on the same side, on every platform.
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

// The inner stream's pairs, each with its line of a Pharaoh alignment file
// (parsed; "" is a pair without links) read alongside, before any pair is
// filtered, so that the file is line-parallel to the raw pairs. A file
// shorter or longer than the stream is an error naming it.
class AlignedStream : public SampleStream {
 public:
  AlignedStream(std::unique_ptr<SampleStream> inner, std::string alignment_path);
  bool next(TextPair* pair) override;
  int64_t text_bytes() const override { return inner_->text_bytes(); }

 private:
  std::unique_ptr<SampleStream> inner_;
  std::string path_;
  std::ifstream in_;
  int64_t line_ = 0;
};

// Trims; drops (and counts, warning about the first few) pairs with an
// empty side, invalid UTF-8 or a side over `max_line_bytes` (0: no limit);
// stops after `max_cases` kept pairs (0: all).
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

// A WMT dev or test set's two .sgm files as pairs in memory; throws
// t2t::Error naming both when their segment counts differ.
std::unique_ptr<SampleStream> read_sgm_pairs(const std::string& source, const std::string& target);

}  // namespace t2t
