// English-Chinese translation problems: WMT (News Commentary v13, CWMT and
// UN v1.0 + newsdev2017), Tatoeba, and the sample the project ships in
// data/sample.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/module_loader.h"
#include "t2t/core/string_util.h"
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

constexpr const char* kNcV13Url =
    "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz";
constexpr const char* kWmtDevUrl = "http://data.statmt.org/wmt18/translation-task/dev.tgz";

// An (English file, Chinese file) pair, relative to tmp_dir.
using FilePair = std::pair<std::string, std::string>;

// A corpus its owners hand out only after registration, so never
// downloaded: the user places the archive (or its extracted files) in
// tmp_dir, where T2T looks for them too, with T2T's names and layout.
struct ManualCorpus {
  std::string name;     // for messages
  std::string archive;  // file name in tmp_dir
  std::string url;      // where to register and download
  std::string contents;  // the members, in short, for messages
  std::vector<FilePair> members;
};

// CWMT as T2T's translate_enzh.py lists it: about 9M pairs.
ManualCorpus cwmt_corpus() {
  ManualCorpus c{"CWMT", "cwmt.tgz", "http://nlp.nju.edu.cn/cwmt-wmt/",
                 "cwmt/casia2015, casict2015, neu2017, datum2015 and datum2017/Book1-20 "
                 "*_en.txt with *_ch.txt or *_cn.txt",
                 {}};
  c.members = {{"cwmt/casia2015/casia2015_en.txt", "cwmt/casia2015/casia2015_ch.txt"},
               {"cwmt/casict2015/casict2015_en.txt", "cwmt/casict2015/casict2015_ch.txt"},
               {"cwmt/neu2017/NEU_en.txt", "cwmt/neu2017/NEU_cn.txt"},
               {"cwmt/datum2015/datum_en.txt", "cwmt/datum2015/datum_ch.txt"}};
  for (int i = 1; i <= 20; ++i) {
    const std::string book = "cwmt/datum2017/Book" + std::to_string(i);
    c.members.push_back({book + "_en.txt", book + "_cn.txt"});
  }
  return c;
}

// The United Nations Parallel Corpus v1.0, en-zh: about 15.9M pairs.
ManualCorpus un_corpus() {
  return {"UN v1.0",
          "UNv1.0.en-zh.tar.gz",
          "https://conferences.unite.un.org/UNCorpus",
          "en-zh/UNv1.0.en-zh.en and .zh",
          {{"en-zh/UNv1.0.en-zh.en", "en-zh/UNv1.0.en-zh.zh"}}};
}

// The file pairs of `c` in tmp_dir (absolute paths), or none when the user
// has not placed it there. Files already extracted are used as they are;
// otherwise the archive is extracted (once: see maybe_extract_archive).
std::vector<FilePair> manual_corpus_files(const ManualCorpus& c, const std::string& tmp_dir) {
  std::vector<std::string> wanted, missing;
  for (const auto& [en, zh] : c.members) wanted.insert(wanted.end(), {en, zh});
  for (const auto& f : wanted)
    if (!fs::exists(in_dir(tmp_dir, f))) missing.push_back(f);
  const std::string archive = in_dir(tmp_dir, c.archive);
  if (!missing.empty() && fs::exists(archive)) {
    const std::vector<std::string> held = maybe_extract_archive(archive, tmp_dir);
    for (const auto& f : missing) {
      if (std::find(held.begin(), held.end(), f) != held.end()) continue;
      std::string msg = c.name + " archive '" + archive + "' has no file '" + f + "'";
      const auto near = close_matches(f, held);
      if (!near.empty()) msg += " (did you mean " + join(near, ", ") + "?)";
      throw Error(msg + ". t2t expects the layout of T2T's " + c.archive +
                  "; repack the archive so that it holds " + f + ", or remove " + archive +
                  " to train without " + c.name);
    }
    missing.clear();
  }
  if (missing.size() == wanted.size()) return {};
  if (!missing.empty())
    throw Error(c.name + " is only partly in '" + tmp_dir + "': '" + in_dir(tmp_dir, missing[0]) +
                "' is missing (" + std::to_string(missing.size()) + " of " +
                std::to_string(wanted.size()) + " files). Place " + c.archive + " from " + c.url +
                " there, or remove the partial files to train without " + c.name);
  std::vector<FilePair> out;
  for (const auto& [en, zh] : c.members) out.push_back({in_dir(tmp_dir, en), in_dir(tmp_dir, zh)});
  return out;
}

}  // namespace

// News Commentary v13 (about 250k pairs) for training and newsdev2017
// (2002 pairs) for dev, the data T2T's translate_enzh_wmt32k uses; and, as
// T2T does, CWMT and the UN corpus after it when the user has placed them
// in tmp_dir (together about 25M pairs).
class TranslateEnzhWmt32k : public TranslateEnzh {
 public:
  std::string description() const override {
    return "WMT en-zh: News Commentary v13 (+ CWMT, UN v1.0 when placed in tmp_dir) train, "
           "newsdev2017 dev; 32k vocabularies";
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
      std::vector<std::unique_ptr<SampleStream>> parts;
      parts.push_back(std::make_unique<ParallelTextReader>(en, zh));
      for (const auto& [en_file, zh_file] : manual_training_files(tmp_dir))
        parts.push_back(std::make_unique<ParallelTextReader>(en_file, zh_file));
      return std::make_unique<ConcatStream>(std::move(parts));
    }
    const std::string en = in_dir(tmp_dir, "dev/newsdev2017-enzh-src.en.sgm");
    const std::string zh = in_dir(tmp_dir, "dev/newsdev2017-enzh-ref.zh.sgm");
    if (!all_exist({en, zh})) {
      std::string archive = maybe_download(tmp_dir, "dev.tgz", kWmtDevUrl);
      maybe_extract_archive(archive, tmp_dir);
    }
    return read_sgm_pairs(en, zh);
  }

 protected:
  // The corpora that need registration, appended to News Commentary.
  virtual std::vector<ManualCorpus> manual_corpora() const { return {cwmt_corpus(), un_corpus()}; }

 private:
  // The file pairs of every manual corpus in tmp_dir. What is absent is said
  // once per run (the train split is read twice: vocabulary, then shards).
  std::vector<FilePair> manual_training_files(const std::string& tmp_dir) const {
    std::vector<FilePair> files;
    std::vector<std::string> absent;
    for (const ManualCorpus& c : manual_corpora()) {
      auto found = manual_corpus_files(c, tmp_dir);
      if (found.empty()) {
        absent.push_back(c.name + " (" + in_dir(tmp_dir, c.archive) + " holding " + c.contents +
                         "; from " + c.url + ")");
      } else {
        if (!told_) spdlog::info("{}: adding {} ({} file pairs) to the training data", name(),
                                 c.name, found.size());
        files.insert(files.end(), found.begin(), found.end());
      }
    }
    if (!absent.empty() && !told_)
      spdlog::info("{}: training without {}, which T2T adds to News Commentary when present: "
                   "download by hand (registration needed), put in tmp_dir (the archive or "
                   "its extracted files) and run again",
                   name(), join(absent, " and "));
    told_ = true;
    return files;
  }

  mutable bool told_ = false;
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

 protected:
  // T2T keeps its 8k problem to News Commentary.
  std::vector<ManualCorpus> manual_corpora() const override { return {}; }
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
// trains on, with nothing to download.
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
    const std::string dir = sample_dir();
    return std::make_unique<ParallelTextReader>(in_dir(dir, split + ".en"),
                                                in_dir(dir, split + ".zh"));
  }

 private:
  // T2T_SAMPLE_DIR, else the copy an installed tree holds
  // (<prefix>/share/t2t/sample beside <prefix>/lib), else the source tree's.
  static std::string sample_dir() {
    const char* env = std::getenv("T2T_SAMPLE_DIR");
    if (env && *env) return env;
    const std::filesystem::path installed =
        std::filesystem::path(libt2t_directory()) / ".." / "share" / "t2t" / "sample";
    std::error_code ec;
    if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal().string();
    return T2T_SAMPLE_DIR;
  }
};
T2T_REGISTER_PROBLEM(TranslateEnzhSample);

}  // namespace t2t
