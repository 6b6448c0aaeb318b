// T2T's WMT translation problems from English into German, French, Czech and
// Romanian, with T2T 1.15's names, corpora, dev sets and vocabulary sizes,
// so that the data directories of T2T's most used models (one vocabulary
// shared by both languages: vocab.<problem>.<size>.subwords) resolve by
// name. Each problem is a table of corpora: an archive downloaded into
// --tmp_dir unless it is there, and the pair of files it unpacks, read as
// T2T's translate.compile_data reads them (.sgm markup dropped, .gz members
// decompressed, tab-separated files by column).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/data/text_problem.h"
#include "t2t/io/archive.h"
#include "t2t/io/download.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

enum class CorpusKind { kFiles, kTsv };

// One entry of a T2T corpus list.
struct WmtCorpus {
  std::string url;  // the archive; its name in tmp_dir is the URL's last part
  CorpusKind kind = CorpusKind::kFiles;
  // kFiles: the English and the other language's file, relative to tmp_dir
  // as the archive unpacks them. kTsv: `source` is a file-name pattern
  // ('*' within the last part) of tab-separated files, `target` unused.
  std::string source, target;
  int source_column = 0, target_column = 1;  // kTsv
};

WmtCorpus files(std::string url, std::string source, std::string target) {
  return {std::move(url), CorpusKind::kFiles, std::move(source), std::move(target)};
}

// The file name under which T2T keeps a download: the URL's last part.
std::string archive_name(const std::string& url) { return url.substr(url.rfind('/') + 1); }

bool is_archive(const std::string& name) {
  for (const char* ext : {".tgz", ".tar.gz", ".tar", ".zip"})
    if (ends_with(name, ext)) return true;
  return false;
}

// The files matching `pattern` (relative to tmp_dir; '*' in its last part).
std::vector<std::string> glob_files(const std::string& tmp_dir, const std::string& pattern) {
  const fs::path rel(pattern);
  const fs::path dir = fs::path(tmp_dir) / rel.parent_path();
  std::string re;
  for (char c : rel.filename().string()) {
    if (c == '*') re += ".*";
    else if (std::string("\\^$.|?+()[]{}").find(c) != std::string::npos) re += std::string("\\") + c;
    else re += c;
  }
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  const std::regex match(re);
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), match))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A .gz file decompressed beside itself (once), as T2T gunzips members.
std::string gunzipped(const std::string& path) {
  if (!ends_with(path, ".gz")) return path;
  const std::string plain = path.substr(0, path.size() - 3);
  if (!fs::exists(plain)) decompress_file(path, plain);
  return plain;
}

// Tab-separated lines, two columns of them as source and target; lines
// without a tab are skipped, as T2T skips them.
class ColumnReader : public SampleStream {
 public:
  ColumnReader(std::string path, int source_column, int target_column)
      : path_(std::move(path)), in_(path_), source_(source_column), target_(target_column) {
    if (!in_) throw Error("cannot open '" + path_ + "'");
  }
  bool next(TextPair* pair) override {
    std::string line;
    while (std::getline(in_, line)) {
      if (line.find('\t') == std::string::npos) continue;
      const auto parts = split(line, '\t');
      const size_t need = static_cast<size_t>(std::max(source_, target_));
      if (parts.size() <= need) continue;
      pair->source = trim(parts[source_]);
      pair->target = trim(parts[target_]);
      return true;
    }
    return false;
  }

 private:
  std::string path_;
  std::ifstream in_;
  int source_, target_;
};

// An English-to-X problem of T2T's translate_en*.py: one vocabulary for
// both languages, its corpora read in order.
class WmtTranslateProblem : public TranslateProblem {
 public:
  std::string source_language() const override { return "en"; }
  bool separate_vocabularies() const override { return false; }
  VocabSpec vocab_spec() const override {
    VocabSpec spec;
    spec.size = vocab_size();
    return spec;
  }

  std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                 const std::string& tmp_dir) const override {
    const std::vector<WmtCorpus> list = split == "train" ? train_corpora() : dev_corpora();
    std::vector<std::unique_ptr<SampleStream>> parts;
    for (const WmtCorpus& c : list) {
      for (auto& part : open(c, tmp_dir)) parts.push_back(std::move(part));
    }
    return std::make_unique<ConcatStream>(std::move(parts));
  }

 protected:
  virtual int64_t vocab_size() const = 0;
  virtual std::vector<WmtCorpus> train_corpora() const = 0;
  virtual std::vector<WmtCorpus> dev_corpora() const = 0;

 private:
  // The streams of one corpus, its archive fetched and unpacked first when
  // its files are not in tmp_dir yet.
  std::vector<std::unique_ptr<SampleStream>> open(const WmtCorpus& c,
                                                  const std::string& tmp_dir) const {
    const std::string name = archive_name(c.url);
    const auto fetch = [&] {
      const std::string archive = maybe_download(tmp_dir, name, c.url);
      if (is_archive(name)) maybe_extract_archive(archive, tmp_dir);
    };
    std::vector<std::unique_ptr<SampleStream>> out;
    if (c.kind == CorpusKind::kTsv) {
      auto found = glob_files(tmp_dir, c.source);
      if (found.empty()) {
        fetch();
        found = glob_files(tmp_dir, c.source);
      }
      if (found.empty())
        throw Error(name + " in '" + tmp_dir + "' holds no file matching " + c.source +
                    ": t2t expects the layout T2T reads (" + c.url + ")");
      for (const auto& f : found) {
        if (ends_with(f, ".gz") && std::find(found.begin(), found.end(), gunzipped(f)) != found.end())
          continue;
        out.push_back(std::make_unique<ColumnReader>(gunzipped(f), c.source_column, c.target_column));
      }
      return out;
    }
    const std::string src = (fs::path(tmp_dir) / c.source).string();
    const std::string tgt = (fs::path(tmp_dir) / c.target).string();
    const auto present = [&](const std::string& p) {
      return fs::exists(p) || (ends_with(p, ".gz") && fs::exists(p.substr(0, p.size() - 3)));
    };
    if (!present(src) || !present(tgt)) fetch();
    for (const std::string& p : {src, tgt})
      if (!present(p))
        throw Error(name + " (from " + c.url + ") in '" + tmp_dir + "' did not give '" + p +
                    "': t2t expects the layout T2T reads; repack the archive so that it holds " +
                    (fs::path(p).lexically_relative(tmp_dir)).string() +
                    ", or remove it to have it downloaded again");
    if (ends_with(src, ".sgm") && ends_with(tgt, ".sgm")) {
      out.push_back(read_sgm_pairs(src, tgt));
      return out;
    }
    out.push_back(std::make_unique<ParallelTextReader>(gunzipped(src), gunzipped(tgt)));
    return out;
  }
};

// The archives several problems share.
constexpr const char* kNcV13 =
    "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz";
constexpr const char* kCommonCrawl = "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz";
constexpr const char* kEuroparlV7 = "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz";
constexpr const char* kWmt17Dev = "http://data.statmt.org/wmt17/translation-task/dev.tgz";

// English-German: News Commentary v13, Common Crawl, Europarl v7; newstest2013.
class TranslateEndeWmt32k : public WmtTranslateProblem {
 public:
  std::string target_language() const override { return "de"; }
  std::string description() const override {
    return "WMT en-de: News Commentary v13, Common Crawl, Europarl v7 train, newstest2013 dev; "
           "32k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 15; }
  std::vector<WmtCorpus> train_corpora() const override {
    return {files(kNcV13, "training-parallel-nc-v13/news-commentary-v13.de-en.en",
                  "training-parallel-nc-v13/news-commentary-v13.de-en.de"),
            files(kCommonCrawl, "commoncrawl.de-en.en", "commoncrawl.de-en.de"),
            files(kEuroparlV7, "training/europarl-v7.de-en.en", "training/europarl-v7.de-en.de")};
  }
  std::vector<WmtCorpus> dev_corpora() const override {
    return {files(kWmt17Dev, "dev/newstest2013.en", "dev/newstest2013.de")};
  }
};
T2T_REGISTER_PROBLEM(TranslateEndeWmt32k);

class TranslateEndeWmt8k : public TranslateEndeWmt32k {
 public:
  std::string description() const override {
    return "WMT en-de as translate_ende_wmt32k; 8k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 13; }
};
T2T_REGISTER_PROBLEM(TranslateEndeWmt8k);

// English-French, T2T's small set: OpenNMT's 1M-pair baseline and its
// validation set.
class TranslateEnfrWmtSmall8k : public WmtTranslateProblem {
 public:
  std::string target_language() const override { return "fr"; }
  std::string description() const override {
    return "en-fr: OpenNMT's 1M-pair baseline train and valid; 8k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 13; }
  std::vector<WmtCorpus> train_corpora() const override {
    return {files(kBaseline1M, "baseline-1M-enfr/baseline-1M_train.en",
                  "baseline-1M-enfr/baseline-1M_train.fr")};
  }
  std::vector<WmtCorpus> dev_corpora() const override {
    return {files(kBaseline1M, "baseline-1M-enfr/baseline-1M_valid.en",
                  "baseline-1M-enfr/baseline-1M_valid.fr")};
  }

 private:
  static constexpr const char* kBaseline1M =
      "https://s3.amazonaws.com/opennmt-trainingdata/baseline-1M-enfr.tgz";
};
T2T_REGISTER_PROBLEM(TranslateEnfrWmtSmall8k);

class TranslateEnfrWmtSmall32k : public TranslateEnfrWmtSmall8k {
 public:
  std::string description() const override {
    return "en-fr as translate_enfr_wmt_small8k; 32k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 15; }
};
T2T_REGISTER_PROBLEM(TranslateEnfrWmtSmall32k);

// English-French, T2T's full set: Common Crawl, Europarl v7, News
// Commentary v9, the 10^9 corpus and UN; newstest2013.
class TranslateEnfrWmt32k : public WmtTranslateProblem {
 public:
  std::string target_language() const override { return "fr"; }
  std::string description() const override {
    return "WMT en-fr: Common Crawl, Europarl v7, News Commentary v9, Giga-FrEn, UN train, "
           "newstest2013 dev; 32k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 15; }
  std::vector<WmtCorpus> train_corpora() const override {
    return {files(kCommonCrawl, "commoncrawl.fr-en.en", "commoncrawl.fr-en.fr"),
            files(kEuroparlV7, "training/europarl-v7.fr-en.en", "training/europarl-v7.fr-en.fr"),
            files("http://www.statmt.org/wmt14/training-parallel-nc-v9.tgz",
                  "training/news-commentary-v9.fr-en.en", "training/news-commentary-v9.fr-en.fr"),
            files("http://www.statmt.org/wmt10/training-giga-fren.tar",
                  "giga-fren.release2.fixed.en.gz", "giga-fren.release2.fixed.fr.gz"),
            files("http://www.statmt.org/wmt13/training-parallel-un.tgz", "un/undoc.2000.fr-en.en",
                  "un/undoc.2000.fr-en.fr")};
  }
  std::vector<WmtCorpus> dev_corpora() const override {
    return {files(kWmt17Dev, "dev/newstest2013.en", "dev/newstest2013.fr")};
  }
};
T2T_REGISTER_PROBLEM(TranslateEnfrWmt32k);

class TranslateEnfrWmt8k : public TranslateEnfrWmt32k {
 public:
  std::string description() const override {
    return "WMT en-fr as translate_enfr_wmt32k; 8k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 13; }
};
T2T_REGISTER_PROBLEM(TranslateEnfrWmt8k);

// English-Czech: CzEng 1.6 (tab-separated, Czech in column 2, English in
// column 3), News Commentary v13, Common Crawl, Europarl v7; newstest2013.
// T2T 1.15 lists News Commentary without its archive; t2t fetches the one
// English-German and English-Chinese use, which holds cs-en too.
class TranslateEncsWmt32k : public WmtTranslateProblem {
 public:
  std::string target_language() const override { return "cs"; }
  std::string description() const override {
    return "WMT en-cs: CzEng 1.6, News Commentary v13, Common Crawl, Europarl v7 train, "
           "newstest2013 dev; 32k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 15; }
  std::vector<WmtCorpus> train_corpora() const override {
    WmtCorpus czeng{"https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-1458/"
                    "data-plaintext-format.tar",
                    CorpusKind::kTsv, "data.plaintext-format/*train.gz", "", 3, 2};
    return {czeng,
            files(kNcV13, "training-parallel-nc-v13/news-commentary-v13.cs-en.en",
                  "training-parallel-nc-v13/news-commentary-v13.cs-en.cs"),
            files(kCommonCrawl, "commoncrawl.cs-en.en", "commoncrawl.cs-en.cs"),
            files(kEuroparlV7, "training/europarl-v7.cs-en.en", "training/europarl-v7.cs-en.cs")};
  }
  std::vector<WmtCorpus> dev_corpora() const override {
    return {files(kWmt17Dev, "dev/newstest2013.en", "dev/newstest2013.cs")};
  }
};
T2T_REGISTER_PROBLEM(TranslateEncsWmt32k);

// English-Romanian: Europarl v7 and SETIMES v2; newsdev2016.
class TranslateEnroWmt8k : public WmtTranslateProblem {
 public:
  std::string target_language() const override { return "ro"; }
  std::string description() const override {
    return "WMT en-ro: Europarl v7, SETIMES v2 train, newsdev2016 dev; 8k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 13; }
  std::vector<WmtCorpus> train_corpora() const override {
    return {files("http://www.statmt.org/europarl/v7/ro-en.tgz", "europarl-v7.ro-en.en",
                  "europarl-v7.ro-en.ro"),
            files("http://opus.nlpl.eu/download.php?f=SETIMES/v2/moses/en-ro.txt.zip",
                  "SETIMES.en-ro.en", "SETIMES.en-ro.ro")};
  }
  std::vector<WmtCorpus> dev_corpora() const override {
    return {files("http://data.statmt.org/wmt16/translation-task/dev-romanian-updated.tgz",
                  "dev/newsdev2016-roen-ref.en.sgm", "dev/newsdev2016-roen-src.ro.sgm")};
  }
};
T2T_REGISTER_PROBLEM(TranslateEnroWmt8k);

class TranslateEnroWmt32k : public TranslateEnroWmt8k {
 public:
  std::string description() const override {
    return "WMT en-ro as translate_enro_wmt8k; 32k shared vocabulary";
  }

 protected:
  int64_t vocab_size() const override { return 1 << 15; }
};
T2T_REGISTER_PROBLEM(TranslateEnroWmt32k);

}  // namespace

}  // namespace t2t
