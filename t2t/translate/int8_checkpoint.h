// int8 checkpoints: a model saved for decoding with its matrices already in
// int8 (t2t-avg-all --quantize=int8), which t2t-decoder, t2t-serve,
// t2t-translate-all and the Python Translator load without quantizing at
// start and decode with exactly as --quantize=int8 on the float checkpoint
// it came from. The file is a t2t checkpoint (model.ckpt-N.pt) whose meta
// says weights "int8": each matrix the model quantizes
// (InferenceModel::int8_weights) is stored under its name as int8 values, with
// "<name>_int8_scale" holding its float32 per-row scales; every other tensor
// is the float checkpoint's. It can be decoded, not trained on nor averaged.
#pragma once

#include <string>

#include "t2t/checkpoint/checkpoint.h"

namespace t2t {

class T2TModel;

// Writes <dir>/model.ckpt-<meta.step>.pt from `model`, whose float weights
// are loaded (not yet quantized), with `meta` (its weights set to "int8"),
// through a temporary file and a rename; points <dir>/checkpoint at it.
// Returns the path written.
std::string save_int8_checkpoint(const T2TModel& model, const std::string& dir,
                                 CheckpointMeta meta);

// Sets `model` from the tensors of an int8 checkpoint read from `path`:
// int8 layers built from the saved values (their float weights released),
// the rest copied. Throws t2t::Error naming `path` when they do not fit.
void load_int8_tensors(TensorMap tensors, T2TModel& model, const std::string& path);

}  // namespace t2t
