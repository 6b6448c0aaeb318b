// Loading a checkpoint for decoding and readying the model: the steps
// behind Translator (translator.h), which every front end goes through.
// Only t2t/translate (and its tests) include this header.
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "t2t/core/hparams.h"
#include "t2t/translate/translator.h"

namespace t2t {

// Builds `model_name` from `hparams` and the problem's vocabularies in
// data_dir, and loads `checkpoint` (a file, T2T's prefix, or a run
// directory meaning its latest) or else the latest checkpoint of
// output_dir, onto `device`: t2t's (float, or int8 for the CPU:
// int8_checkpoint.h) or T2T's. The result has no decoder yet. Throws
// OptionError naming checkpoint or output_dir when there is none, t2t::Error
// when the checkpoint does not match the hparams.
LoadedModel load_model(const Problem& problem, const std::string& model_name,
                       const HParams& hparams, const std::string& data_dir,
                       const std::string& output_dir, const std::string& checkpoint,
                       const c10::Device& device);

// Refuses, before anything is loaded, what `device` cannot do: int8 off the
// CPU (OptionError naming quantize), CUDA graphs off CUDA (naming
// cuda_graphs).
void check_quantization(Quantization quantize, const c10::Device& device);
void check_cuda_graphs(bool cuda_graphs, const c10::Device& device);

// Readies a loaded model: applies `quantize` (a model loaded from an int8
// checkpoint stays int8 under kNone and kInt8, and refuses kBf16), lays the
// float CPU weights out for their kernels (InferenceModel::pack_for_inference),
// and gives back the memory decoding will not read: the pages of the
// weights so packed, and (on a thread of idle priority) those of the
// libraries' code that only start-up ran (mapped_file.h). With
// `cuda_graphs` the model decodes at static shapes and replays each shape's
// step as a CUDA graph (InferenceModel::set_static_decoding). Throws OptionError
// naming quantize or cuda_graphs when the model (or this LibTorch) cannot.
void prepare_model(T2TModel& model, Quantization quantize, bool cuda_graphs);

}  // namespace t2t
