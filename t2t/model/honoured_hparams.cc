#include "t2t/model/honoured_hparams.h"

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/core/string_util.h"

namespace t2t {

namespace {

// One hparam that t2t carries for T2T's sake: which values it honours.
struct Row {
  const char* name;
  const char* model;  // the model whose hparam it is; nullptr: every model's
  // Why `hp`'s value is not honoured and what to do instead; "" when it is.
  std::string (*refuse)(const HParams& hp);
  // Why a value the user asked for changes nothing here; "" when it has its
  // effect. Told only for values the user set, not for the ones every set
  // inherits from T2T.
  std::string (*note)(const HParams& hp);
};

std::string none(const HParams&) { return ""; }

std::string text(const HParams& hp, const char* name) { return hvalue_to_string(hp.value(name)); }

const Row kRows[] = {
    // T2T's switch for mixed precision. Training honours all three through
    // effective_mixed_precision() (t2t/train/train_step.h); decoding
    // computes in float32 and says so (tools/cli_common.cc).
    {"activation_dtype", nullptr,
     [](const HParams& hp) -> std::string {
       const std::string v = hp.get_string("activation_dtype");
       if (v == "float32" || v == "bfloat16" || v == "float16") return "";
       return "use float32, bfloat16 (bf16 autocast on the CPU or CUDA, as "
              "{mixed_precision}=bf16) or float16 (fp16 autocast with loss scaling, CUDA only, as "
              "{mixed_precision}=fp16)";
     },
     none},
    // T2T keeps weights in bfloat16 on TPUs only; here the weights, the
    // optimizer and the checkpoints are float32, and the speed of lower
    // precision comes from autocasting the activations.
    {"weight_dtype", nullptr,
     [](const HParams& hp) -> std::string {
       if (hp.get_string("weight_dtype") == "float32") return "";
       return "weights are kept in float32 here; for mixed precision set "
              "activation_dtype=bfloat16 (or float16 on CUDA), or give {mixed_precision}, and "
              "leave weight_dtype at float32";
     },
     none},
    // T2T cuts each embedding matrix into this many variables so that
    // parameter servers can share it; the rows and the math stay the same.
    // Any count T2T takes gives the same model here, one matrix.
    {"symbol_modality_num_shards", "transformer",
     [](const HParams& hp) -> std::string {
       if (hp.get_int("symbol_modality_num_shards") >= 1) return "";
       return "it must be at least 1 (T2T splits each embedding matrix into that many pieces)";
     },
     [](const HParams& hp) -> std::string {
       return "T2T splits each embedding matrix into that many variables to spread it over "
              "parameter servers, with the same math; t2t keeps one matrix, so every value "
              "trains the same model";
     }},
    // T2T's pad remover lets the encoder's feed-forward layers skip padded
    // positions, for speed only: the outputs at real positions are the same.
    // Here they run over every position; either value gives the same model.
    {"use_pad_remover", "transformer", none,
     [](const HParams& hp) -> std::string {
       return "T2T's pad remover only lets the encoder's feed-forward layers skip padded "
              "positions, for speed, with the same results; here they run over every position, "
              "so true and false train and decode the same model";
     }},
    // basic_params1's generic dropout, which T2T's transformer does not
    // read either. Every transformer set inherits 0.2; a user who changes
    // it expects an effect it cannot have, so the change is refused.
    {"dropout", "transformer",
     [](const HParams& hp) -> std::string {
       if (!hp.overridden("dropout")) return "";
       auto own = [&](const char* name) {
         return std::string(name) + (hp.has(name) ? "=" + text(hp, name) : std::string());
       };
       return "the transformer does not read T2T's generic dropout (T2T's does not either); its "
              "dropouts are " + own("layer_prepostprocess_dropout") +
              " (embeddings and sub-layer outputs), " + own("attention_dropout") +
              " (attention weights) and " + own("relu_dropout") +
              " (the feed-forward layers' hidden units): set those instead";
     },
     none},
};

// "hparam name=value (from --hparams)": the value and where it came from.
std::string named(const HParams& hp, const char* name) {
  const std::string source = hp.override_source(name);
  return std::string("hparam ") + name + "=" + text(hp, name) +
         (source.empty() ? " (from the hparams set)" : " (from " + source + ")");
}

}  // namespace

std::vector<std::string> check_honoured_hparams(const HParams& hp, const std::string& model) {
  std::vector<std::string> refusals, notes;
  for (const Row& row : kRows) {
    if (!hp.has(row.name) || (row.model && model != row.model)) continue;
    const std::string why = row.refuse(hp);
    if (!why.empty()) {
      refusals.push_back(named(hp, row.name) + " is not honoured: " + why + ".");
      continue;
    }
    if (!hp.overridden(row.name)) continue;
    const std::string note = row.note(hp);
    if (!note.empty()) notes.push_back(named(hp, row.name) + " changes nothing: " + note + ".");
  }
  // The reasons name options as "{name}", for the front end to spell.
  if (!refusals.empty()) throw OptionError("hparams", join(refusals, " "));
  return notes;
}

std::vector<std::string> honoured_hparams_names() {
  std::vector<std::string> out;
  for (const Row& row : kRows) out.push_back(row.name);
  return out;
}

}  // namespace t2t
