// What a Translator is built from, filled by each front end from its own
// spelling of the options.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t2t/core/hparams.h"
#include "t2t/translate/batch_queue.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/shortlist_file.h"

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

// One more model decoded with the main one (an ensemble): a checkpoint file,
// T2T's model.ckpt-N prefix, or a run directory (its latest), of the same
// model and hparams and the same target vocabulary.
struct EnsembleMember {
  std::string checkpoint;
  double weight = 1.0;
};

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
  // What every call starts from (search_request.h); parallel_batches also
  // sets the shared queue's CPU workers.
  DecodeOptions decoding;
  // Translator::submit's shared queue.
  BatchPolicy batching;
  // BatchTranslator::warm_up() after each load.
  bool warm_up = false;
  // A glossary file (glossary.h): the target term of each source term found
  // in a sentence must appear in its translation. "": none.
  std::string glossary;
  // A lexical shortlist: each batch's output layer over the target ids its
  // sources make likely (shortlist_file.h).
  ShortlistOptions shortlist;
  // Models decoded together with the main one, their log-probabilities
  // averaged each step with these weights and main_weight.
  std::vector<EnsembleMember> ensemble;
  double main_weight = 1.0;
};

}  // namespace t2t
