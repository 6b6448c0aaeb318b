#include "t2t/io/t2t_hparams_json.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"

namespace t2t {

std::string t2t_hparams_json_path(const std::string& output_dir) {
  return (std::filesystem::path(output_dir) / "hparams.json").string();
}

T2THparamsJson apply_t2t_hparams_json(HParams& hp, const std::string& path) {
  // JSON is YAML, and yaml-cpp is what t2t reads hparams with already.
  YAML::Node root;
  try {
    root = YAML::Load(read_file(path));
  } catch (const YAML::Exception& e) {
    throw Error(path + " is not T2T's hparams.json (a JSON object): " + e.what());
  }
  if (!root.IsMap()) throw Error(path + " is not T2T's hparams.json (a JSON object)");
  const HParams before = hp;
  T2THparamsJson out;
  const std::string source = "T2T's " + path;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar())
      throw Error(path + " is not T2T's hparams.json: a key is not a string");
    const std::string key = kv.first.Scalar();
    if (!hp.has(key)) {
      out.unknown.push_back(key);
      continue;
    }
    // T2T's sets without a position signal set pos to None, which T2T reads
    // as no signal: t2t's "none".
    if (key == "pos" && kv.second.IsNull()) {
      hp.apply_yaml_string("pos: none", source);
      continue;
    }
    if (kv.second.IsNull() || kv.second.IsMap()) {
      out.unusable.push_back(key + ": " + (kv.second.IsNull() ? "null" : "an object"));
      continue;
    }
    // One key at a time, so that a value of the wrong type only costs that
    // key (reported) and not the rest.
    try {
      YAML::Emitter one;
      one << YAML::BeginMap << YAML::Key << key << YAML::Value << kv.second << YAML::EndMap;
      hp.apply_yaml_string(one.c_str(), source);
    } catch (const Error& e) {
      out.unusable.push_back(key + ": " + e.what());
    } catch (const YAML::Exception& e) {
      out.unusable.push_back(key + ": " + e.what());
    }
  }
  out.changed = before.diff(hp);
  return out;
}

}  // namespace t2t
