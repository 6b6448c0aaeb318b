// t2t-translate-all: translates one file with every checkpoint of a run,
// T2T's flags and file names, to follow BLEU along training. The work is
// in t2t/translate/translate_all; this file maps flags onto it.
#include <iostream>

#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"
#include "t2t/data/problem.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/translator.h"
#include "t2t/translate/translate_all.h"
#include "tools/cli_common.h"

namespace {

using t2t::cli::UsageError;
using t2t::cli::usage_error;

void add_translate_all_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Data")
      ("problem", "Registered problem name, e.g. translate_enzh_wmt32k; it also names the "
       "translation files.", value<std::string>()->default_value(""))
      ("data_dir", "Directory of the problem's vocabularies.",
       value<std::string>()->default_value(""));
  options.add_options("Model")
      ("model", "Registered model name.", value<std::string>()->default_value("transformer"))
      ("hparams_set", "Registered hparams set, needed only when --model_dir has no hparams.yaml "
       "(T2T's default was transformer_big_single_gpu; here the run's own hparams.yaml is used).",
       value<std::string>()->default_value(""))
      ("hparams_file", "YAML mapping of hparams applied over the run's (before --hparams).",
       value<std::string>()->default_value(""))
      ("hparams", "Comma-separated hparams applied over the run's, T2T syntax.",
       value<std::string>()->default_value(""))
      ("device", "auto (CUDA when available), cpu, cuda or cuda:N.",
       value<std::string>()->default_value("auto"));
  options.add_options("Translating")
      ("model_dir", "The training run (t2t-trainer's --output_dir): every model.ckpt-N.pt in it "
       "is translated with.", value<std::string>()->default_value(""))
      ("source", "The file to translate, one sentence a line.",
       value<std::string>()->default_value(""))
      ("translations_dir", "Where the translations go, one file per checkpoint named "
       "<problem>-<step>, as T2T names them. Relative to the current "
       "directory, as in T2T. A checkpoint whose file is already there is skipped, so a rerun "
       "resumes; delete the files to redo them (e.g. with another --beam_size).",
       value<std::string>()->default_value("translations"))
      ("min_steps", "Leave out checkpoints of fewer steps.", value<int64_t>()->default_value("0"))
      ("wait_minutes", "After the checkpoints there are, wait for new ones and translate them "
       "too, while training goes on; stop once none has come for this many minutes. 0: stop at "
       "once.", value<double>()->default_value("0"))
      ("beam_size", "Beam width (1: greedy).", value<int64_t>()->default_value("4"))
      ("alpha", "Length penalty exponent of beam search.", value<double>()->default_value("0.6"))
      ("decode_hparams", "Other decoding settings, as t2t-decoder's: 'extra_length=50,"
       "batch_size=64,log_results=false'. beam_size and alpha are the flags above.",
       value<std::string>()->default_value(""))
      ("parallel_batches", "On the CPU, batches decoded side by side (see t2t-decoder). 0: one "
       "per thread.", value<int>()->default_value("0"))
      ("quantize", "none, or int8 (CPU): decode with int8 weights, as t2t-decoder --quantize.",
       value<std::string>()->default_value("none"))
      ("glossary", "Terminology, as t2t-decoder's: a file of 'source term<TAB>target term' "
       "lines; each checkpoint's translations then hold the target terms of the source terms "
       "found.", value<std::string>()->default_value(""));
}

// --decode_hparams with --beam_size and --alpha, which T2T's tool passes
// as the decoder's.
t2t::DecodeOptions decode_options(const cxxopts::ParseResult& flags) {
  t2t::HParams dp = t2t::default_decode_hparams();
  dp.parse(flags["decode_hparams"].as<std::string>(), "--decode_hparams");
  const t2t::HParams defaults = t2t::default_decode_hparams();
  for (const char* key : {"beam_size", "alpha"})
    if (t2t::hvalue_to_string(dp.value(key)) != t2t::hvalue_to_string(defaults.value(key)))
      throw UsageError(std::string("give ") + key + " with --" + key + ", not in --decode_hparams");
  for (const char* key : {"num_samples", "return_beams"})
    if (t2t::hvalue_to_string(dp.value(key)) != t2t::hvalue_to_string(defaults.value(key)))
      throw UsageError(std::string("--decode_hparams ") + key + " does not apply to "
                       "t2t-translate-all, which writes the best translation of every line");
  dp.set("beam_size", flags["beam_size"].as<int64_t>());
  dp.set("alpha", flags["alpha"].as<double>());
  t2t::DecodeOptions options;
  try {
    options = t2t::decode_options(dp);
  } catch (const t2t::Error& e) {
    throw usage_error(e);
  }
  options.parallel_batches = flags["parallel_batches"].as<int>();
  if (options.parallel_batches < 0) throw UsageError("--parallel_batches must be >= 0");
  return options;
}

int translate_all(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  t2t::TranslateAllOptions spec;
  t2t::TranslatorOptions& options = spec.translator;
  options.output_dir = required(flags, "model_dir", "--model_dir=t2t_train/run1");
  spec.source = required(flags, "source", "--source=newstest.en");
  options.problem = required(flags, "problem", "--problem=translate_enzh_wmt32k");
  options.data_dir = required(flags, "data_dir", "--data_dir=t2t_data");
  options.model = required(flags, "model", "--model=transformer");
  spec.translations_dir = required(flags, "translations_dir", "--translations_dir=translations");
  spec.min_steps = flags["min_steps"].as<int64_t>();
  spec.wait_minutes = flags["wait_minutes"].as<double>();
  if (!(spec.wait_minutes >= 0)) throw UsageError("--wait_minutes must be >= 0");

  options.hparams = t2t::cli::run_hparams(flags, options.output_dir);
  options.decoding = decode_options(flags);
  if (options.decoding.search.alignment)
    throw UsageError("--decode_hparams alignment is t2t-decoder's: the files here are "
                     "translations for t2t-bleu, one a line");
  t2t::SearchOptions& search = options.decoding.search;
  try {
    search.sampling = t2t::sampling_options(options.hparams, flags["random_seed"].as<uint64_t>());
  } catch (const t2t::Error& e) {
    throw usage_error(e);
  }
  if (search.sampling.random && search.beam_size > 1)
    throw UsageError("hparam sampling_method=random samples in greedy decoding only, as in T2T: "
                     "give --beam_size=1, or leave sampling_method at argmax for beam search");
  options.device = flags["device"].as<std::string>();
  // Checked once here, before the first checkpoint: each is then loaded by
  // a Translator of its own.
  const auto checked = t2t::cli::make_translator(flags, options, t2t::Translator::Load::kLater);
  options = checked->options();
  options.device = checked->device().str();
  spdlog::info("{}", t2t::runtime_summary());
  spdlog::info("translating {} with every checkpoint of {} into {}: problem {}, model {}, "
               "device {}, beam_size {}, alpha {}",
               spec.source, options.output_dir, spec.translations_dir, options.problem,
               options.model, options.device, search.beam_size, search.alpha);
  const auto result = t2t::translate_all(spec);
  std::cout << "translated " << result.translated << " checkpoint(s), skipped "
            << result.skipped << " already in " << spec.translations_dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "t2t-translate-all",
      "Translates a file with every checkpoint of a training run, T2T's flags:\n"
      "  t2t-translate-all --model_dir=O --source=dev.en --problem=translate_enzh_wmt32k \\\n"
      "    --data_dir=D [--translations_dir=translations] [--beam_size=4 --alpha=0.6]\n"
      "Each checkpoint model.ckpt-N.pt (or a T2T run's model.ckpt-N) gives\n"
      "<translations_dir>/<problem>-N (T2T's names: the\n"
      "step is the digits after the last '-'), written whole or not at all and dated like its\n"
      "checkpoint; those already there are skipped. Score one with\n"
      "  t2t-bleu --translation=translations/translate_enzh_wmt32k-N --reference=dev.zh\n");
  t2t::cli::add_common_flags(options);
  add_translate_all_flags(options);
  return t2t::cli::run(argc, argv, options, translate_all);
}
