// Named hyperparameter sets of the Transformer, with T2T's published values
// (tensor2tensor/models/transformer.py). Each is registered under its name.
#pragma once

#include "t2t/core/hparams.h"

namespace t2t {

HParams transformer_base_v1();
HParams transformer_base_v2();
HParams transformer_base_v3();
HParams transformer_base();
HParams transformer_big();
HParams transformer_tiny();

}  // namespace t2t
