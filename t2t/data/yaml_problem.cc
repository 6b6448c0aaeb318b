#include "t2t/data/yaml_problem.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/plugins.h"
#include "t2t/core/string_util.h"
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
  std::map<std::string, SplitFiles> splits;  // "train", "dev"
  std::map<std::string, int> shards;
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
      out.push_back({split, it != c_->shards.end() ? it->second : (split == "train" ? 10 : 1)});
    }
    // "train" first, as every other problem lists it.
    std::stable_partition(out.begin(), out.end(), [](const SplitSpec& s) { return s.name == "train"; });
    return out;
  }
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
  for (const std::string split : {"train", "dev", "test"}) {
    if (!root[split]) continue;
    const YAML::Node n = root[split];
    if (!n.IsMap()) bad(file, "'" + split + "' must map source/target (or tsv) to files");
    SplitFiles f;
    f.tsv = resolve(file, get_string(n, "tsv", file, false));
    if (f.tsv.empty()) {
      f.source = resolve(file, get_string(n, "source", file, true));
      f.target = resolve(file, get_string(n, "target", file, true));
    }
    c.splits[split] = f;
  }
  if (!c.splits.count("train")) bad(file, "missing key 'train'");
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
      if (!c.splits.count(split)) bad(file, "shards given for '" + split + "', which has no files");
      int n = 0;
      try {
        n = kv.second.as<int>();
      } catch (const YAML::Exception&) {
      }
      if (n < 1) bad(file, "shards for '" + split + "' must be a positive integer");
      c.shards[split] = n;
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
