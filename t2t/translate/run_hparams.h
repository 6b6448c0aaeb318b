// The hparams a trained run decodes with: the run's hparams.yaml, or T2T's
// hparams.json over its set, then what the caller adds.
#pragma once

#include <string>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"

namespace t2t {

// What a caller asks of the hparams, beside the run's own.
struct HParamsRequest {
  std::string set_name;   // option hparams_set; "" when not given
  std::string file;       // option hparams_file; "" for none
  std::string overrides;  // option hparams, "key=value,..."
  // How the caller spells those options in the sources the overrides are
  // recorded with ("hparam dropout=0.3 (from --hparams)"); null: as named.
  OptionSpelling spell;
};

// T2T's hparams.json over `set_name`, each change logged (t2t::Error when
// set_name is empty).
HParams t2t_json_hparams(const std::string& set_name, const std::string& t2t_json);

// <output_dir>/hparams.yaml (missing common hparams at their defaults),
// else T2T's hparams.json over request.set_name (activation_dtype back to
// float32), else the set alone; then request.file and request.overrides.
// Throws t2t::Error naming hparams_set when there is nothing to start from,
// or the key of a bad override.
HParams decoding_hparams(const std::string& output_dir, const HParamsRequest& request);

// t2t::Error for hparams the model would not honour, or an activation_dtype
// (decoding computes as quantize says).
void check_decoding_hparams(const HParams& hparams, const std::string& model);

}  // namespace t2t
