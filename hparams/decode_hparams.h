// Decoding hyperparameters (--decode_hparams), T2T's names and defaults
// (tensor2tensor/utils/decoding.py: decode_hparams).
#pragma once

#include "t2t/core/hparams.h"

namespace t2t {

HParams default_decode_hparams();

}  // namespace t2t
