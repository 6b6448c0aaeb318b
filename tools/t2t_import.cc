// t2t-import: converts a checkpoint Tensor2Tensor wrote (TensorFlow's
// model.ckpt-N in a T2T output directory) into t2t's own (model.ckpt-N.pt
// with hparams.yaml), once, for users who want t2t's files: every t2t tool
// reads T2T's directory directly as well. The work is the model's
// load_tensorflow and the Adam reader of t2t/train; this file maps flags.
#include <filesystem>
#include <iostream>
#include <string>

#include "t2t/model/honoured_hparams.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/data/problem.h"
#include "t2t/io/t2t_hparams_json.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"
#include "t2t/text/text_encoder.h"
#include "t2t/train/tf_adam_state.h"
#include "t2t/train/train_step.h"
#include "tools/cli_common.h"

namespace {

namespace fs = std::filesystem;
using t2t::cli::UsageError;
using t2t::cli::usage_error;

void add_import_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Importing")
      ("checkpoint_path", "T2T's checkpoint to convert, by its prefix (model.ckpt-N, without "
       ".index). Default: the one --output_dir's `checkpoint` file names, else its newest.",
       value<std::string>()->default_value(""))
      ("import_dir", "Where t2t's checkpoint and hparams.yaml go. Default: --output_dir, beside "
       "T2T's files, where t2t's tools then take it before T2T's.",
       value<std::string>()->default_value(""));
}

int import_checkpoint(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  const std::string problem_name = required(flags, "problem", "--problem=translate_enzh_wmt32k");
  const std::string model_name = required(flags, "model", "--model=transformer");
  const std::string data_dir = required(flags, "data_dir", "--data_dir=$T2T_DATA");
  const std::string output_dir = required(flags, "output_dir", "--output_dir=$T2T_TRAIN");
  std::string prefix = flags["checkpoint_path"].as<std::string>();
  if (prefix.empty()) {
    prefix = t2t::find_tf_checkpoint(output_dir);
    if (prefix.empty())
      throw t2t::Error("--output_dir=" + output_dir + " holds no T2T checkpoint "
                       "(model.ckpt-N.index); name one with --checkpoint_path");
  } else if (!t2t::is_tf_checkpoint(prefix)) {
    throw UsageError("--checkpoint_path=" + prefix + " is no T2T checkpoint (" + prefix +
                     ".index does not exist): give its prefix, e.g. " + output_dir +
                     "/model.ckpt-1000");
  }
  std::string import_dir = flags["import_dir"].as<std::string>();
  if (import_dir.empty()) import_dir = output_dir;

  // T2T's hparams.json over --hparams_set, then --hparams_file and
  // --hparams, as t2t-trainer and t2t-decoder take a T2T run's.
  const std::string t2t_json = t2t::t2t_hparams_json_path(output_dir);
  t2t::HParams hp;
  if (fs::exists(t2t_json)) {
    hp = t2t::cli::t2t_run_hparams(flags, t2t_json);
    if (!flags["hparams_file"].as<std::string>().empty())
      hp.apply_yaml_file(flags["hparams_file"].as<std::string>(),
                         "--hparams_file " + flags["hparams_file"].as<std::string>());
    hp.parse(flags["hparams"].as<std::string>(), "--hparams");
  } else {
    hp = t2t::resolve_hparams(
        required(flags, "hparams_set", "--hparams_set=transformer_base (no " + t2t_json + ")"),
        flags["hparams_file"].as<std::string>(), flags["hparams"].as<std::string>(),
        t2t::cli::flag_spelling);
  }
  try {
    t2t::check_honoured_hparams(hp, model_name);
  } catch (const t2t::Error& e) {
    throw usage_error(e);
  }

  const auto problem = t2t::create_problem(problem_name);
  const t2t::FeatureEncoders enc = problem->feature_encoders(data_dir);
  const t2t::FeatureInfo info{enc.inputs->vocab_size(), enc.targets->vocab_size(), enc.shared};
  auto model = t2t::model_registry().get(model_name)(hp, info);
  const t2t::TFCheckpointReader reader(prefix);
  t2t::tensorflow_import(*model).load_tensorflow(reader, t2t::kT2TTargetSpace);
  t2t::CheckpointMeta meta;
  meta.step = reader.has("global_step") ? reader.read_scalar_int("global_step") : 0;
  meta.hparams_yaml = hp.to_yaml();
  // Adam's moments too, when T2T kept them, so that t2t-trainer can go on
  // from the converted checkpoint as from T2T's.
  auto optimizer = t2t::make_optimizer(*model, hp);
  bool with_adam = true;
  try {
    t2t::load_adam_state_from_tf(*optimizer, *model, reader, hp, t2t::kT2TTargetSpace);
  } catch (const t2t::Error& e) {
    with_adam = false;
    spdlog::warn("weights only, no optimizer state: {}", e.what());
  }
  const std::string path =
      t2t::save_checkpoint(import_dir, *model, with_adam ? optimizer.get() : nullptr, meta, 0);
  hp.save_yaml((fs::path(import_dir) / "hparams.yaml").string());
  // T2T's hparams.json goes along: t2t-trainer reads a run's hparams from it
  // when it is there, so that training goes on in --import_dir with the
  // command line that goes on in T2T's directory.
  std::error_code ec;
  if (fs::exists(t2t_json) && !fs::equivalent(output_dir, import_dir, ec)) {
    fs::copy_file(t2t_json, fs::path(import_dir) / "hparams.json",
                  fs::copy_options::overwrite_existing, ec);
    if (ec) throw t2t::Error("cannot copy " + t2t_json + " into " + import_dir + ": " + ec.message());
  }
  std::cout << "converted " << prefix << " (step " << meta.step << ") into " << path
            << (with_adam ? " with Adam's moments" : "") << "\n"
            << "decode it with: t2t-decoder --output_dir=" << import_dir << " ...\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "t2t-import",
      "Converts a Tensor2Tensor checkpoint into t2t's own (model.ckpt-N.pt, hparams.yaml):\n"
      "  t2t-import --problem=translate_enzh_wmt32k --model=transformer \\\n"
      "    --hparams_set=transformer_base --data_dir=$T2T_DATA --output_dir=$T2T_TRAIN\n"
      "t2t-decoder, t2t-serve and t2t-trainer also read T2T's directory as it is; this is\n"
      "for those who want t2t's files (tools/export_ctranslate2.py reads those).\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  t2t::cli::add_model_flags(options);
  add_import_flags(options);
  return t2t::cli::run(argc, argv, options, import_checkpoint);
}
