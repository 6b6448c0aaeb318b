// Loading a checkpoint for decoding and readying the model: the steps
// behind Translator. Only t2t/translate and its tests include this header.
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "t2t/core/hparams.h"
#include "t2t/translate/translator.h"

namespace t2t {

// Builds `model_name` and loads `checkpoint` (a file, T2T's prefix, or a
// run directory meaning its latest; "" = output_dir's latest) onto
// `device`, t2t's or T2T's format. The result has no decoder yet. Throws
// OptionError naming checkpoint or output_dir when there is none, t2t::Error
// when the checkpoint does not match the hparams.
LoadedModel load_model(const Problem& problem, const std::string& model_name,
                       const HParams& hparams, const std::string& data_dir,
                       const std::string& output_dir, const std::string& checkpoint,
                       const c10::Device& device);

// OptionError, before anything is loaded, for int8 off the CPU (naming
// quantize) and CUDA graphs off CUDA (naming cuda_graphs).
void check_quantization(Quantization quantize, const c10::Device& device);
void check_cuda_graphs(bool cuda_graphs, const c10::Device& device);

// Readies a loaded model: applies `quantize` (an int8 checkpoint's model
// stays int8 under kNone and kInt8, and refuses kBf16), packs the float CPU
// weights for their kernels, gives back memory decoding will not read
// (mapped_file.h), and with `cuda_graphs` decodes at static shapes. Throws
// OptionError naming quantize or cuda_graphs when the model cannot.
void prepare_model(T2TModel& model, Quantization quantize, bool cuda_graphs);

}  // namespace t2t
