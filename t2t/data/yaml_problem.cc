#include "t2t/data/yaml_problem.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/plugins.h"
#include "t2t/core/string_util.h"
#include "t2t/data/data_mix.h"
#include "t2t/data/text_problem.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

struct SplitFiles {
  std::string source, target, tsv;
};

struct YamlProblemConfig {
  std::string file;
  std::string name, description, source_language, target_language;
  std::map<std::string, SplitFiles> splits;  // "train" (or "train-<part>"), "dev"
  std::map<std::string, int> shards;
  std::vector<TrainingPart> parts;  // `train` given as a list
  VocabSpec vocab;
  bool separate = false;
  int64_t max_line_bytes = 4096;
};

class YamlProblem : public TranslateProblem {
 public:
  explicit YamlProblem(std::shared_ptr<const YamlProblemConfig> config) : c_(std::move(config)) {}

  std::string description() const override {
    return c_->description.empty() ? "declared in " + c_->file : c_->description;
  }
  VocabSpec vocab_spec() const override { return c_->vocab; }
  bool separate_vocabularies() const override { return c_->separate; }
  int64_t max_line_bytes() const override { return c_->max_line_bytes; }
  std::string source_language() const override { return c_->source_language; }
  std::string target_language() const override { return c_->target_language; }
  std::vector<SplitSpec> dataset_splits() const override {
    std::vector<SplitSpec> out;
    for (const auto& [split, files] : c_->splits) {
      auto it = c_->shards.find(split);
      int shards = split.rfind("train", 0) == 0 ? 10 : 1;
      if (it != c_->shards.end())
        shards = it->second;
      else if (split != "train" && split.rfind("train", 0) == 0 && c_->shards.count("train"))
        shards = c_->shards.at("train");  // a part without its own count
      out.push_back({split, shards});
    }
    // Training first, as every other problem lists it.
    std::stable_partition(out.begin(), out.end(),
                          [](const SplitSpec& s) { return s.name.rfind("train", 0) == 0; });
    return out;
  }
  std::vector<TrainingPart> training_parts() const override { return c_->parts; }
  std::unique_ptr<SampleStream> generate_samples(const std::string& split,
                                                 const std::string&) const override {
    const SplitFiles& f = c_->splits.at(split);
    if (!f.tsv.empty()) return std::make_unique<TabSeparatedReader>(f.tsv);
    return std::make_unique<ParallelTextReader>(f.source, f.target);
  }

 private:
  std::shared_ptr<const YamlProblemConfig> c_;
};

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw Error("problem declaration '" + file + "': " + what);
}

std::string get_string(const YAML::Node& node, const std::string& key, const std::string& file,
                       bool required) {
  if (!node[key]) {
    if (required) bad(file, "missing key '" + key + "'");
    return "";
  }
  if (!node[key].IsScalar()) bad(file, "'" + key + "' must be a string");
  return node[key].as<std::string>();
}

std::string resolve(const std::string& file, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(file).parent_path() / path).lexically_normal().string();
}

SplitFiles split_files(const YAML::Node& n, const std::string& file) {
  SplitFiles f;
  f.tsv = resolve(file, get_string(n, "tsv", file, false));
  if (f.tsv.empty()) {
    f.source = resolve(file, get_string(n, "source", file, true));
    f.target = resolve(file, get_string(n, "target", file, true));
  }
  return f;
}

double get_number(const YAML::Node& n, const std::string& key, const std::string& where,
                  const std::string& file) {
  try {
    return n[key].as<double>();
  } catch (const YAML::Exception&) {
    bad(file, where + ": '" + key + "' must be a number");
  }
}

// `train` as a list of parts mixed by weight (data_mix.h):
//   train:
//     - {name: real, source: train.en, target: train.zh}
//     - {name: bt, tsv: bt.tsv, weight: 0.5, tag: "<BT>", shards: 4}
void parse_parts(const YAML::Node& list, const std::string& file, YamlProblemConfig* c) {
  static const std::vector<std::string> known = {"name",   "source", "target", "tsv",
                                                 "weight", "epochs", "tag",    "shards"};
  if (list.size() == 0) bad(file, "'train' lists no parts");
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    const std::string where = "training part " + std::to_string(i + 1);
    if (!n.IsMap())
      bad(file, where + " must map name and source/target (or tsv) to its files");
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end())
        bad(file, where + ": unknown key '" + key + "'; known keys: " + join(known, ", "));
    }
    TrainingPart part;
    part.name = get_string(n, "name", file, true);
    if (n["weight"]) part.weight = get_number(n, "weight", where, file);
    if (n["epochs"]) {
      if (n["weight"]) bad(file, where + ": give weight or epochs, not both");
      part.epochs = get_number(n, "epochs", where, file);
      if (!(part.epochs > 0)) bad(file, where + ": epochs must be a number > 0");
    }
    part.tag = get_string(n, "tag", file, false);
    const std::string split = training_part_split(part.name);
    c->splits[split] = split_files(n, file);
    if (n["shards"]) {
      int shards = 0;
      try {
        shards = n["shards"].as<int>();
      } catch (const YAML::Exception&) {
      }
      if (shards < 1) bad(file, where + ": shards must be a positive integer");
      c->shards[split] = shards;
    }
    c->parts.push_back(std::move(part));
  }
  check_training_parts(c->parts, "problem declaration '" + file + "'");
}

YamlProblemConfig parse_nodes(const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    bad(file, std::string("not valid YAML: ") + e.what());
  }
  if (!root.IsMap()) bad(file, "must be a YAML mapping");
  static const std::vector<std::string> known = {"name", "description", "source_language",
                                                 "target_language", "train", "dev", "test",
                                                 "vocab", "shards", "max_line_bytes"};
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      auto near = close_matches(key, known);
      bad(file, "unknown key '" + key + "'" +
                    (near.empty() ? "" : " (did you mean " + join(near, ", ") + "?)") +
                    "; known keys: " + join(known, ", "));
    }
  }
  YamlProblemConfig c;
  c.file = file;
  c.name = get_string(root, "name", file, true);
  if (c.name.empty() || c.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
                            std::string::npos)
    bad(file, "name '" + c.name + "' must be lower-case letters, digits and underscores");
  c.description = get_string(root, "description", file, false);
  c.source_language = get_string(root, "source_language", file, false);
  c.target_language = get_string(root, "target_language", file, false);
  if (c.source_language.empty()) c.source_language = "inputs";
  if (c.target_language.empty()) c.target_language = "targets";
  if (!root["train"]) bad(file, "missing key 'train'");
  for (const std::string split : {"train", "dev", "test"}) {
    if (!root[split]) continue;
    const YAML::Node n = root[split];
    if (split == "train" && n.IsSequence()) {
      parse_parts(n, file, &c);
      continue;
    }
    if (!n.IsMap())
      bad(file, "'" + split + "' must map source/target (or tsv) to files" +
                    (split == "train" ? std::string(", or list training parts") : std::string()));
    c.splits[split] = split_files(n, file);
  }
  if (root["vocab"]) {
    const YAML::Node v = root["vocab"];
    if (!v.IsMap()) bad(file, "'vocab' must be a mapping (type, size, model_type, separate)");
    try {
      if (v["type"]) c.vocab.type = parse_vocab_type(v["type"].as<std::string>());
      if (v["size"]) c.vocab.size = v["size"].as<int64_t>();
      if (v["model_type"]) c.vocab.model_type = v["model_type"].as<std::string>();
      if (v["separate"]) c.separate = v["separate"].as<bool>();
    } catch (const YAML::Exception& e) {
      bad(file, std::string("bad value under 'vocab': ") + e.what());
    } catch (const Error& e) {
      bad(file, e.what());
    }
    if (c.vocab.size < 1) bad(file, "vocab size must be positive");
    if (c.vocab.model_type != "unigram" && c.vocab.model_type != "bpe")
      bad(file, "vocab model_type must be unigram or bpe, not '" + c.vocab.model_type + "'");
  }
  if (root["shards"]) {
    if (!root["shards"].IsMap()) bad(file, "'shards' must map split names to counts");
    for (const auto& kv : root["shards"]) {
      const std::string split = kv.first.as<std::string>();
      // With training parts, "train" counts each part's shards unless it
      // gives its own.
      if (!c.splits.count(split) && !(split == "train" && !c.parts.empty()))
        bad(file, "shards given for '" + split + "', which has no files");
      int n = 0;
      try {
        n = kv.second.as<int>();
      } catch (const YAML::Exception&) {
      }
      if (n < 1) bad(file, "shards for '" + split + "' must be a positive integer");
      if (!c.shards.count(split)) c.shards[split] = n;  // a part's own count stays
    }
  }
  if (root["max_line_bytes"]) c.max_line_bytes = root["max_line_bytes"].as<int64_t>();
  return c;
}

// YAML declarations arrive through --t2t_usr_dir like plugins do.
const bool kRegistered = [] {
  register_user_file_loader(".yaml", register_yaml_problem);
  register_user_file_loader(".yml", register_yaml_problem);
  return true;
}();

YamlProblemConfig parse(const std::string& file) {
  try {
    return parse_nodes(file);
  } catch (const YAML::Exception& e) {
    // A key or value of a kind the spec never has (a list as a key, a tag).
    bad(file, std::string("cannot read it: ") + e.what());
  }
}

}  // namespace

void check_yaml_problem(const std::string& path) { parse(path); }

void register_yaml_problem(const std::string& path) {
  auto config = std::make_shared<const YamlProblemConfig>(parse(path));
  problem_registry().add(
      config->name, [config] { return std::unique_ptr<Problem>(new YamlProblem(config)); },
      {"YAML problem", path});
}

}  // namespace t2t
