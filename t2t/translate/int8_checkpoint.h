// int8 checkpoints: a model saved with its matrices in int8, decoding
// exactly as quantize=int8 on its float checkpoint. A t2t checkpoint whose
// meta says weights "int8": each matrix of InferenceModel::int8_weights stored
// under its name as int8 values, "<name>_int8_scale" its float32 per-row
// scales; other tensors as in the float checkpoint. Decode only: not
// trained on nor averaged.
#pragma once

#include <string>

#include "t2t/checkpoint/checkpoint.h"

namespace t2t {

class T2TModel;

// Writes <dir>/model.ckpt-<meta.step>.pt from `model`'s float weights
// (not yet quantized), through a rename, and points <dir>/checkpoint at it.
// Returns the path.
std::string save_int8_checkpoint(const T2TModel& model, const std::string& dir,
                                 CheckpointMeta meta);

// Sets `model` from the tensors of an int8 checkpoint read from `path`:
// int8 layers built from the saved values (their float weights released),
// the rest copied. Throws t2t::Error naming `path` when they do not fit.
void load_int8_tensors(TensorMap tensors, T2TModel& model, const std::string& path);

}  // namespace t2t
