// T2T hparams that every set carries under T2T's names and values (so that
// T2T command lines and hparams files keep working) but that t2t does not
// read as T2T does. One table (honoured_hparams.cc) says, for each, which
// values are honoured and why the others are not; nothing is silently
// ignored:
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

// Checks `hp` against the table's rows for `model` (a registered model
// name; rows for other models are skipped, rows for every model are not).
// Throws OptionError (option hparams) naming each hparam whose value `model`
// would not honour, where the value came from, and what to set instead. Returns one
// line for each value that is accepted but changes nothing here and that
// the user asked for (HParams::overridden), to be logged at start-up.
std::vector<std::string> check_honoured_hparams(const HParams& hp, const std::string& model);

// The hparam names the table covers, for tests and --help texts.
std::vector<std::string> honoured_hparams_names();

}  // namespace t2t
