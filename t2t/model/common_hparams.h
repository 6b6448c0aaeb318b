// The hyperparameters every model starts from (T2T's basic_params1).
#pragma once

#include "t2t/core/hparams.h"

namespace t2t {

HParams basic_params1();

}  // namespace t2t
