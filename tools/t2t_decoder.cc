// t2t-decoder: translates with a trained model, T2T's flags.
#include <filesystem>

#include "hparams/decode_hparams.h"
#include "models/model_registry.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"
#include "t2t/data/problem.h"
#include "tools/cli_common.h"

namespace {

void add_decoder_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Decoding")
      ("decode_hparams", "Comma-separated decoding settings, e.g. 'beam_size=4,alpha=0.6'. "
       "Keys: beam_size, alpha, extra_length, batch_size, return_beams, write_beam_scores, ...",
       value<std::string>()->default_value(""))
      ("decode_from_file", "Translate this file, one sentence a line.",
       value<std::string>()->default_value(""))
      ("decode_to_file", "Write translations here (default: derived from --decode_from_file).",
       value<std::string>()->default_value(""))
      ("decode_reference", "Reference translations; BLEU is printed at the end.",
       value<std::string>()->default_value(""))
      ("decode_interactive", "Read sentences from standard input and answer each at once.")
      ("checkpoint_path", "Checkpoint to load (default: the latest in --output_dir).",
       value<std::string>()->default_value(""));
}

int decode(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  const std::string problem_name =
      required(flags, "problem", "--problem=translate_enzh_sample");
  const std::string model_name = required(flags, "model", "--model=transformer");
  const std::string output_dir = required(flags, "output_dir", "--output_dir=t2t_train/run1");
  required(flags, "data_dir", "--data_dir=t2t_data");

  // As T2T: the hparams the model was trained with, then --hparams on top.
  const std::string saved = (std::filesystem::path(output_dir) / "hparams.yaml").string();
  t2t::HParams hp;
  if (std::filesystem::exists(saved)) {
    hp = t2t::HParams::from_yaml_file(saved);
    if (!flags["hparams_file"].as<std::string>().empty())
      hp.apply_yaml_file(flags["hparams_file"].as<std::string>());
    hp.parse(flags["hparams"].as<std::string>(), "--hparams");
  } else {
    const std::string set_name =
        required(flags, "hparams_set", "--hparams_set=transformer_base (no " + saved + " found)");
    hp = t2t::resolve_hparams(set_name, flags["hparams_file"].as<std::string>(),
                              flags["hparams"].as<std::string>());
  }
  t2t::HParams dp = t2t::default_decode_hparams();
  dp.parse(flags["decode_hparams"].as<std::string>(), "--decode_hparams");
  const std::string device = t2t::resolve_device(flags["device"].as<std::string>());
  auto problem = t2t::create_problem(problem_name);
  t2t::model_registry().get(model_name);
  spdlog::info("{}", t2t::runtime_summary());
  spdlog::info("problem {}, model {}, device {}, beam_size {}, alpha {}", problem_name, model_name,
               device, dp.get_int("beam_size"), dp.get_float("alpha"));
  throw t2t::Error("this build of t2t has no decoder yet (t2t/decode)");
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-decoder",
                           "Translates with a trained model, T2T style:\n"
                           "  t2t-decoder --problem=translate_enzh_wmt32k --model=transformer \\\n"
                           "    --data_dir=D --output_dir=O --decode_hparams='beam_size=4,alpha=0.6' \\\n"
                           "    --decode_from_file=in.en --decode_to_file=out.zh\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  t2t::cli::add_model_flags(options);
  add_decoder_flags(options);
  return t2t::cli::run(argc, argv, options, decode);
}
