// What a Translator is built from: one typed struct, filled once by each
// front end from its own spelling of the options (t2t-decoder's flags,
// t2t-serve's, Python's keyword arguments, a benchmark's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "t2t/core/hparams.h"
#include "t2t/translate/batch_queue.h"
#include "t2t/translate/decode_options.h"

namespace t2t {

// How the weights are held for decoding (option `quantize`).
enum class Quantization {
  kNone,  // as the checkpoint holds them (an int8 checkpoint stays int8)
  kInt8,  // CPU only: dense layers and softmax with int8 weights
  kBf16,  // every weight and activation in bfloat16
};

// "none", "int8", "bf16". Throws OptionError naming quantize otherwise.
Quantization parse_quantization(const std::string& name);
const char* quantization_name(Quantization q);

struct TranslatorOptions {
  std::string problem;               // a registered problem: its vocabularies
  std::string model = "transformer";  // a registered model
  HParams hparams;                   // the run's, as decoding_hparams() finds them
  std::string data_dir;              // where the problem's vocabularies are
  std::string output_dir;            // the run; its latest checkpoint by default
  // A checkpoint file, T2T's model.ckpt-N prefix, or a run directory (its
  // latest); empty: output_dir's latest.
  std::string checkpoint;
  std::string device = "cpu";        // cpu, cuda, cuda:N or auto
  Quantization quantize = Quantization::kNone;
  bool cuda_graphs = false;          // CUDA only: static shapes, steps replayed as graphs
  // The search and batching every call starts from (a call may change the
  // search: search_request.h). decoding.parallel_batches also sets how many
  // batches of the shared queue are decoded side by side on the CPU.
  DecodeOptions decoding;
  // The queue that concurrent callers' sentences share (Translator::submit).
  BatchPolicy batching;
  // After each load, decode synthetic batches so that the first real
  // requests take no longer than the later ones (servers).
  bool warm_up = false;
};

}  // namespace t2t
