#include "t2t/translate/run_hparams.h"

#include <filesystem>

#include "t2t/model/common_hparams.h"
#include "t2t/model/honoured_hparams.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/io/t2t_hparams_json.h"

namespace t2t {

HParams t2t_json_hparams(const std::string& set_name, const std::string& t2t_json) {
  if (set_name.empty())
    throw OptionError("hparams_set", "name the hparams set " + t2t_json + " was made from "
                                     "({hparams_set}, e.g. transformer_base)");
  HParams hp = resolve_hparams(set_name, "", "");
  const T2THparamsJson applied = apply_t2t_hparams_json(hp, t2t_json);
  if (!applied.changed.empty())
    spdlog::info("{} differs from the hparams set {} in {} value(s), taken from the file: {}",
                 t2t_json, set_name, applied.changed.size(), join(applied.changed, "; "));
  if (!applied.unusable.empty())
    spdlog::warn("{}: kept the hparams set {}'s value of {}", t2t_json, set_name,
                 join(applied.unusable, "; "));
  spdlog::debug("{}: {} key(s) t2t has no hparam for: {}", t2t_json, applied.unknown.size(),
                join(applied.unknown, ", "));
  return hp;
}

HParams decoding_hparams(const std::string& output_dir, const HParamsRequest& request) {
  const std::string saved = (std::filesystem::path(output_dir) / "hparams.yaml").string();
  const std::string t2t_json = t2t_hparams_json_path(output_dir);
  HParams hp;
  if (!std::filesystem::exists(saved) && std::filesystem::exists(t2t_json)) {
    // A Tensor2Tensor run: its hparams.json over the set it was trained with.
    hp = t2t_json_hparams(request.set_name, t2t_json);
    // How T2T trained (bfloat16 activations, say) is no request of this
    // caller: decoding runs as its quantize setting says.
    if (hp.has("activation_dtype") && hp.get_string("activation_dtype") != "float32") {
      spdlog::info("{}: trained with activation_dtype={}; decoding computes as its quantization "
                   "says",
                   t2t_json, hp.get_string("activation_dtype"));
      hp.set("activation_dtype", "float32");
    }
  } else if (!std::filesystem::exists(saved)) {
    if (request.set_name.empty())
      throw OptionError("hparams_set", "no " + saved + " found: name the hparams set the run was "
                                       "trained with ({hparams_set}, e.g. transformer_base)");
    return resolve_hparams(request.set_name, request.file, request.overrides, request.spell);
  } else {
    hp = HParams::from_yaml_file(saved);
    // A run written before t2t gained a common hparam (sampling_keep_top_k,
    // say) decodes as it did, and the overrides may still name the new key.
    const HParams defaults = basic_params1();
    for (const std::string& key : defaults.keys())
      if (!hp.has(key)) hp.add(key, defaults.value(key));
  }
  const auto name = [&request](const std::string& option) {
    return request.spell ? request.spell(option) : option;
  };
  if (!request.file.empty())
    hp.apply_yaml_file(request.file, name("hparams_file") + " " + request.file);
  hp.parse(request.overrides, name("hparams"));
  return hp;
}

void check_decoding_hparams(const HParams& hp, const std::string& model) {
  check_honoured_hparams(hp, model);  // its notes are logged when the model is built
  // A run trained with autocast saved its activation_dtype, like any
  // hparam; only a value asked for here is a request decoding cannot meet.
  if (!hp.has("activation_dtype") || !hp.overridden("activation_dtype")) return;
  const std::string dtype = hp.get_string("activation_dtype");
  if (dtype != "float32")
    throw OptionError("quantize", "hparam activation_dtype=" + dtype + " (from " +
                                      hp.override_source("activation_dtype") +
                                      ") applies to training (autocast, as " +
                                      command_suggestion("t2t-trainer", {{"mixed_precision", ""}}) +
                                      "); decoding computes in float32 unless "
                                      "{quantize} says otherwise. Leave it out and give "
                                      "{quantize}=bf16 (or, on the CPU, int8) for a faster "
                                      "decoding");
}

}  // namespace t2t
