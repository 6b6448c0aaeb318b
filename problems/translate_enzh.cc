// English-Chinese translation problems: WMT (News Commentary v13 + newsdev
// 2017), Tatoeba, and the sample the project ships in data/sample.
#include <filesystem>
#include <fstream>
#include <functional>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/data/text_problem.h"
#include "t2t/io/archive.h"
#include "t2t/io/download.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// T2T's choice for en-zh: one vocabulary per language, so that Chinese
// characters do not crowd out English subwords.
class TranslateEnzh : public TranslateProblem {
 public:
  std::string source_language() const override { return "en"; }
  std::string target_language() const override { return "zh"; }
  bool separate_vocabularies() const override { return true; }
};

std::string in_dir(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

bool all_exist(std::initializer_list<std::string> paths) {
  for (const auto& p : paths)
    if (!fs::exists(p)) return false;
  return true;
}

// Segments of a WMT .sgm file, the markup lines left out.
std::vector<std::string> read_sgm_segments(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open '" + path + "'");
  std::vector<std::string> segs;
  std::string line;
  while (std::getline(in, line))
    if (line.find("<seg") != std::string::npos) segs.push_back(strip_sgml(line));
  return segs;
}

constexpr const char* kNcV13Url =
    "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz";
constexpr const char* kWmtDevUrl = "http://data.statmt.org/wmt18/translation-task/dev.tgz";

}  // namespace

// News Commentary v13 (about 250k pairs) for training and newsdev2017
// (2002 pairs) for dev, the data T2T's translate_enzh_wmt32k uses.
class TranslateEnzhWmt32k : public TranslateEnzh {
 public:
  std::string description() const override {
    return "WMT en-zh: News Commentary v13 train, newsdev2017 dev; 32k vocabularies";
  }
  VocabSpec vocab_spec() const override {
    VocabSpec spec;
    spec.size = 1 << 15;
    return spec;
  }

  std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                 const std::string& tmp_dir) const override {
    if (split == "train") {
      const std::string dir = in_dir(tmp_dir, "training-parallel-nc-v13");
      const std::string en = in_dir(dir, "news-commentary-v13.zh-en.en");
      const std::string zh = in_dir(dir, "news-commentary-v13.zh-en.zh");
      if (!all_exist({en, zh})) {
        std::string archive = maybe_download(tmp_dir, "training-parallel-nc-v13.tgz", kNcV13Url);
        maybe_extract_archive(archive, tmp_dir);
      }
      return std::make_unique<ParallelTextReader>(en, zh);
    }
    const std::string en = in_dir(tmp_dir, "dev/newsdev2017-enzh-src.en.sgm");
    const std::string zh = in_dir(tmp_dir, "dev/newsdev2017-enzh-ref.zh.sgm");
    if (!all_exist({en, zh})) {
      std::string archive = maybe_download(tmp_dir, "dev.tgz", kWmtDevUrl);
      maybe_extract_archive(archive, tmp_dir);
    }
    auto src = read_sgm_segments(en);
    auto tgt = read_sgm_segments(zh);
    if (src.size() != tgt.size())
      throw Error("'" + en + "' has " + std::to_string(src.size()) + " segments but '" + zh +
                  "' has " + std::to_string(tgt.size()));
    std::vector<TextPair> pairs;
    for (size_t i = 0; i < src.size(); ++i) pairs.push_back({src[i], tgt[i]});
    return std::make_unique<VectorStream>(std::move(pairs));
  }
};
T2T_REGISTER_PROBLEM(TranslateEnzhWmt32k);

class TranslateEnzhWmt8k : public TranslateEnzhWmt32k {
 public:
  std::string description() const override {
    return "WMT en-zh: News Commentary v13 train, newsdev2017 dev; 8k vocabularies";
  }
  VocabSpec vocab_spec() const override {
    VocabSpec spec;
    spec.size = 1 << 13;
    return spec;
  }
  std::vector<SplitSpec> dataset_splits() const override { return {{"train", 10}, {"dev", 1}}; }
};
T2T_REGISTER_PROBLEM(TranslateEnzhWmt8k);

// Tatoeba's English-Mandarin pairs as published in the cmn-eng archive
// (cmn.txt: English TAB Chinese TAB attribution). Pre-split files
// train.en/.zh and dev.en/.zh in tmp_dir are used as they are.
class TranslateEnzhTatoeba : public TranslateEnzh {
 public:
  std::string description() const override {
    return "Tatoeba en-zh short sentences (cmn-eng); 8k vocabularies";
  }
  VocabSpec vocab_spec() const override {
    VocabSpec spec;
    spec.size = 1 << 13;
    return spec;
  }
  std::vector<SplitSpec> dataset_splits() const override { return {{"train", 10}, {"dev", 1}}; }

  std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                 const std::string& tmp_dir) const override {
    const std::string en = in_dir(tmp_dir, split + ".en");
    const std::string zh = in_dir(tmp_dir, split + ".zh");
    if (all_exist({en, zh})) return std::make_unique<ParallelTextReader>(en, zh);
    std::string cmn = in_dir(tmp_dir, "cmn.txt");
    if (!fs::exists(cmn)) {
      std::string archive =
          maybe_download(tmp_dir, "cmn-eng.zip", "http://www.manythings.org/anki/cmn-eng.zip");
      maybe_extract_archive(archive, tmp_dir);
      if (!fs::exists(cmn))
        throw Error("'" + archive + "' holds no cmn.txt; expected the Tatoeba cmn-eng archive");
    }
    return std::make_unique<HashSplitStream>(std::make_unique<TabSeparatedReader>(cmn),
                                             split == "dev", kDevEvery);
  }

 private:
  // One English sentence in 25 goes to dev: by a hash of the sentence, so
  // that an English sentence with several translations never straddles
  // train and dev.
  static constexpr int kDevEvery = 25;
};
T2T_REGISTER_PROBLEM(TranslateEnzhTatoeba);

// The English-Chinese sample that ships in data/sample: what the quickstart
// trains on, with nothing to download. T2T_SAMPLE_DIR overrides where it is.
class TranslateEnzhSample : public TranslateEnzh {
 public:
  std::string description() const override {
    return "the bundled en-zh sample (data/sample), offline; 1k vocabularies";
  }
  VocabSpec vocab_spec() const override {
    VocabSpec spec;
    spec.size = 1 << 10;
    return spec;
  }
  std::vector<SplitSpec> dataset_splits() const override { return {{"train", 2}, {"dev", 1}}; }

  std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                 const std::string&) const override {
    const char* env = std::getenv("T2T_SAMPLE_DIR");
    const std::string dir = env && *env ? env : T2T_SAMPLE_DIR;
    return std::make_unique<ParallelTextReader>(in_dir(dir, split + ".en"),
                                                in_dir(dir, split + ".zh"));
  }
};
T2T_REGISTER_PROBLEM(TranslateEnzhSample);

}  // namespace t2t
