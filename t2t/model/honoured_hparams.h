// T2T hparams every set carries (so T2T command lines and files work) but
// t2t does not read as T2T does. One table (honoured_hparams.cc) says which
// values are honoured and why the others are not:
//   activation_dtype            float32, bfloat16, float16: training's autocast
//                               (effective_mixed_precision, t2t/train/train_step.h);
//                               decoding computes in float32
//   weight_dtype                float32 only
//   symbol_modality_num_shards  any value >= 1; the same model whatever the value
//   use_pad_remover             true or false; the same results either way
//   dropout                     the set's value only: the transformer reads its
//                               own three dropouts instead
// (batch_shuffle_size is read by the data reader, sampling_* by the decoder.)
#pragma once

#include <string>
#include <vector>

#include "t2t/core/hparams.h"

namespace t2t {

// Checks `hp` against the table's rows for `model` and for every model.
// Throws OptionError (option hparams) naming each hparam whose value would
// not be honoured, where it came from, and what to set instead. Returns a
// line to log for each overridden value that is accepted but changes nothing.
std::vector<std::string> check_honoured_hparams(const HParams& hp, const std::string& model);

// The hparam names the table covers, for tests and --help texts.
std::vector<std::string> honoured_hparams_names();

}  // namespace t2t
