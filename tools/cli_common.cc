#include "tools/cli_common.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/plugins.h"
#include "t2t/core/registry.h"
#include "t2t/core/runtime.h"
#include "t2t/core/string_util.h"
#include "t2t/data/problem.h"
#include "t2t/translate/run_hparams.h"
#include "t2t/io/t2t_hparams_json.h"
#include "t2t/model/model_registry.h"

namespace t2t::cli {

namespace {
using cxxopts::value;

// Every command's refused flags, in one table so that the flag groups, run()
// and --help agree. A reason completes "--flag ...".
struct Refusal {
  const char* program;
  const char* flag;
  const char* reason;
};

const char kCluster[] =
    "is T2T's TensorFlow cluster flag: start N workers on this machine with --worker_gpu=N, "
    "or one t2t-trainer per worker on several machines under torchrun (RANK, WORLD_SIZE, "
    "MASTER_ADDR, MASTER_PORT)";
const char kTfThreads[] = "is TensorFlow's: use --threads (LibTorch's intra-op threads)";

const Refusal kRefusals[] = {
    // Shared flags that a command has no use for.
    {"t2t-trainer", "tmp_dir",
     "does not apply to t2t-trainer, which reads the encoded shards in --data_dir: it is read "
     "by t2t-datagen only (raw data). Drop it, and run t2t-datagen --tmp_dir=... first if the "
     "data is not there"},
    {"t2t-decoder", "tmp_dir",
     "does not apply to t2t-decoder, which reads the vocabularies in --data_dir: it is read by "
     "t2t-datagen only (raw data). Drop it"},
    {"t2t-serve", "tmp_dir",
     "does not apply to t2t-serve, which reads the vocabularies in --data_dir and the "
     "checkpoints in --output_dir: it is read by t2t-datagen only (raw data). Drop it"},
    {"t2t-serve", "random_seed",
     "seeds nothing in t2t-serve, which decodes with the argmax or beam search and draws "
     "nothing at random (sampling is t2t-decoder's): drop it"},
    {"t2t-bleu", "random_seed", "seeds nothing: BLEU draws nothing at random: drop it"},
    {"t2t-bleu", "threads", "has nothing to spread: t2t-bleu scores on one thread: drop it"},
    {"t2t-bleu", "t2t_usr_dir",
     "loads problems, models and hparams sets, and t2t-bleu uses none: it scores text files "
     "against their references: drop it"},
    {"t2t-avg-all", "random_seed", "seeds nothing: averaging draws nothing at random: drop it"},
    {"t2t-shortlist", "tmp_dir",
     "does not apply to t2t-shortlist, which reads the encoded shards in --data_dir: it is read "
     "by t2t-datagen only (raw data). Drop it"},
    {"t2t-shortlist", "random_seed",
     "seeds nothing: counting a corpus draws nothing at random: drop it"},
    {"t2t-shortlist", "threads", "has nothing to spread: t2t-shortlist counts on one thread: drop it"},
    {"t2t-import", "tmp_dir",
     "does not apply to t2t-import, which reads the vocabularies in --data_dir: it is read by "
     "t2t-datagen only (raw data). Drop it"},
    {"t2t-import", "random_seed",
     "seeds nothing: converting a checkpoint draws nothing at random: drop it"},
    {"t2t-import", "device",
     "does not apply: t2t-import converts on the CPU, and the checkpoint it writes loads on "
     "any device: drop it"},
    // T2T's own flags, which its users pass out of habit.
    {"t2t-trainer", "generate_data",
     "is not supported: t2t-trainer trains on data generated beforehand; run t2t-datagen "
     "--problem=... --data_dir=... --tmp_dir=... first"},
    {"t2t-trainer", "worker_replicas", kCluster},
    {"t2t-trainer", "worker_id", kCluster},
    {"t2t-trainer", "ps_replicas", kCluster},
    {"t2t-trainer", "gpu_automatic_mixed_precision",
     "is TensorFlow's: use --mixed_precision=fp16 (CUDA) or bf16, or hparam "
     "activation_dtype=float16 or bfloat16"},
    {"t2t-trainer", "use_tpu",
     "is not supported: t2t trains on the CPU and on CUDA GPUs (--device)"},
    {"t2t-trainer", "hparams_range",
     "is not supported: there is no hyperparameter search; give values with --hparams"},
    {"t2t-trainer", "intra_op_parallelism_threads", kTfThreads},
    {"t2t-trainer", "inter_op_parallelism_threads", kTfThreads},
    {"t2t-decoder", "intra_op_parallelism_threads", kTfThreads},
    {"t2t-decoder", "inter_op_parallelism_threads", kTfThreads},
    {"t2t-decoder", "decode_shards",
     "is not supported: one t2t-decoder decodes the whole input (on the CPU, "
     "--parallel_batches spreads it over the cores)"},
};

const char kRefusedGroup[] = "T2T flags refused here";

// Whether the command these options are for reads `flag` (its shared group
// then adds it).
bool reads(const cxxopts::Options& options, const std::string& flag) {
  for (const Refusal& r : kRefusals)
    if (options.program() == r.program && flag == r.flag) return false;
  return true;
}

}  // namespace

std::vector<RefusedFlag> refused_flags(const std::string& program) {
  std::vector<RefusedFlag> out;
  for (const Refusal& r : kRefusals)
    if (program == r.program) out.push_back({r.flag, r.reason});
  return out;
}

void add_common_flags(cxxopts::Options& options) {
  auto add = options.add_options("General");
  add("h,help", "Print this help and exit.")
     ("registry_help", "List every registered problem, model and hparams set, then exit.");
  if (reads(options, "t2t_usr_dir"))
    add("t2t_usr_dir", "Directory of user plugins: every *.so in it is loaded at start-up and "
        "may register its own problems, models and hparams sets (see problems/examples/).",
        value<std::string>()->default_value(""));
  if (reads(options, "threads"))
    add("threads", "Intra-op threads for LibTorch (OpenMP/MKL). 0 = all cores.",
        value<int>()->default_value("0"));
  if (reads(options, "random_seed"))
    add("random_seed", "Seed for every random generator, so a run can be repeated.",
        value<uint64_t>()->default_value("429459"));
  add("log_level", "trace, debug, info, warning, error or off.",
      value<std::string>()->default_value("info"));
}

void add_problem_flags(cxxopts::Options& options) {
  auto add = options.add_options("Data");
  add("problem", "Registered problem name, e.g. translate_enzh_wmt32k; append _rev for the "
      "reverse direction (zh->en).", value<std::string>()->default_value(""))
     ("data_dir", "Directory of the problem's encoded TFRecord shards and vocabularies.",
      value<std::string>()->default_value(""));
  if (reads(options, "tmp_dir"))
    add("tmp_dir", "Directory for downloaded and extracted raw data.",
        value<std::string>()->default_value("/tmp/t2t_datagen"));
}

void add_model_flags(cxxopts::Options& options) {
  options.add_options("Model")
      ("model", "Registered model name, e.g. transformer.", value<std::string>()->default_value(""))
      ("hparams_set", "Registered hparams set, e.g. transformer_base, transformer_tiny.",
       value<std::string>()->default_value(""))
      ("hparams_file", "YAML mapping of hparams overriding the set (applied before --hparams).",
       value<std::string>()->default_value(""))
      ("hparams", "Comma-separated overrides, T2T syntax: 'batch_size=2048,learning_rate=0.2'. "
       "Applied last.", value<std::string>()->default_value(""))
      ("output_dir", "Directory of checkpoints, hparams.yaml and event files.",
       value<std::string>()->default_value(""));
  if (reads(options, "device"))
    options.add_options("Model")("device", "auto (CUDA when available), cpu, cuda or cuda:N.",
                                 value<std::string>()->default_value("auto"));
}

void add_decoding_flags(cxxopts::Options& options) {
  options.add_options("Decoding")
      ("decode_hparams", "Comma-separated decoding settings, e.g. 'beam_size=4,alpha=0.6'. "
       "Keys: beam_size, alpha, extra_length, batch_size, return_beams, write_beam_scores, "
       "patience (0: T2T's stopping test; 2: also stop as CTranslate2, faster, rarely another "
       "result), no_repeat_ngram_size, repetition_penalty, alignment (hard, soft or a "
       "threshold), alignment_layer, alignment_head, batch_tokens, ... (README, t2t-decoder)",
       value<std::string>()->default_value(""))
      ("checkpoint_path", "Checkpoint to load (default: the latest in --output_dir).",
       value<std::string>()->default_value(""))
      ("parallel_batches", "On the CPU, batches decoded side by side, each with --threads / N "
       "threads: small decoding steps use one core well but gain little from more, so this "
       "raises throughput. 0: one batch per thread; 1: one batch at a time.",
       value<int>()->default_value("0"))
      ("quantize", "none; int8: on the CPU, the model's dense layers and softmax run with "
       "int8 weights (quantized at load time from the float checkpoint, per output row) and "
       "activations quantized per call; bf16: every weight and activation in bfloat16 (CPU "
       "or GPU; scores in float32). Faster, at a small cost in quality.",
       value<std::string>()->default_value("none"))
      ("cuda_graphs", "On a GPU (--device=cuda): decode at a few bucketed shapes (sentences, "
       "positions, source length) with buffers kept from batch to batch, and replay each "
       "shape's step as a CUDA graph from its second use on: one launch a step instead of "
       "hundreds. Same translations up to rounding; refused on a CPU.")
      ("glossary", "Terminology: a UTF-8 file of 'source term<TAB>target term' lines ('#' "
       "comments). Where a source term occurs in a sentence (as whole words), its target term "
       "must appear in the translation (lexically constrained beam search; needs beam_size >= "
       "the number of terms + 1).",
       value<std::string>()->default_value(""))
      ("shortlist", "A lexical shortlist (t2t-shortlist writes one; CTranslate2's vmap and "
       "Marian's text shortlist are read too): each batch computes the output layer over the "
       "target tokens its source tokens list, the always-allowed ones and EOS only. Faster, "
       "above all with int8 and large vocabularies; translations may differ slightly. A "
       "relative name that is no file is looked for in the model directory.",
       value<std::string>()->default_value(""))
      ("shortlist_best", "With --shortlist: targets taken per source token, best first (0: "
       "every one the file lists).",
       value<int64_t>()->default_value("0"))
      ("shortlist_frequent", "With --shortlist: always-allowed targets taken, most frequent "
       "first (-1: every one the file lists; a Marian file: its vocabulary's first N ids, 100 "
       "for -1).",
       value<int64_t>()->default_value("-1"))
      ("shortlist_threshold", "With a Marian --shortlist: entries of lower probability are "
       "dropped.",
       value<double>()->default_value("0"))
      ("ensemble", "Comma-separated checkpoints (files, T2T prefixes or run directories) "
       "decoded together with --checkpoint_path's model: per step their log-probabilities "
       "are averaged. Same problem, vocabularies and hparams.",
       value<std::string>()->default_value(""))
      ("ensemble_weights", "Comma-separated weights of the main model and each --ensemble "
       "member, in that order (default: equal).",
       value<std::string>()->default_value(""));
}

HParams t2t_run_hparams(const cxxopts::ParseResult& flags, const std::string& t2t_json) {
  const std::string set_name = required(
      flags, "hparams_set", "--hparams_set=transformer_base (the set " + t2t_json + " was made from)");
  return t2t_json_hparams(set_name, t2t_json);
}

HParams run_hparams(const cxxopts::ParseResult& flags, const std::string& output_dir) {
  HParamsRequest request;
  request.set_name = flags["hparams_set"].as<std::string>();
  request.file = flags["hparams_file"].as<std::string>();
  request.overrides = flags["hparams"].as<std::string>();
  request.spell = flag_spelling;
  // A missing --hparams_set is a command-line mistake (exit status 2).
  const std::string saved = (std::filesystem::path(output_dir) / "hparams.yaml").string();
  const std::string t2t_json = t2t_hparams_json_path(output_dir);
  if (request.set_name.empty() && !std::filesystem::exists(saved))
    required(flags, "hparams_set",
             std::filesystem::exists(t2t_json)
                 ? "--hparams_set=transformer_base (the set " + t2t_json + " was made from)"
                 : "--hparams_set=transformer_base (no " + saved + " found)");
  HParams hp = decoding_hparams(output_dir, request);
  try {
    check_decoding_hparams(hp, flags["model"].as<std::string>());
  } catch (const Error& e) {
    throw usage_error(e);
  }
  return hp;
}

DecodeOptions decoding_options(const cxxopts::ParseResult& flags) {
  HParams dp = default_decode_hparams();
  dp.parse(flags["decode_hparams"].as<std::string>(), "--decode_hparams");
  DecodeOptions options = decode_options(dp);
  options.parallel_batches = flags["parallel_batches"].as<int>();
  if (options.parallel_batches < 0) throw UsageError("--parallel_batches must be >= 0");
  return options;
}

std::string flag_spelling(const std::string& option) {
  // The library's names for what T2T's flags call otherwise.
  if (option == "checkpoint") return "--checkpoint_path";
  // Keys of --decode_hparams (default_decode_hparams()).
  static const HParams decode_keys = default_decode_hparams();
  if (decode_keys.has(option)) return "--decode_hparams " + option;
  if (option == "n_best") return "--decode_hparams return_beams";
  if (option == "constraints") return "--constraints_file";
  if (option == "prefix") return "--prefix_file";
  if (option == "main_weight") return "--ensemble_weights";
  if (option == "alignment_threshold") return "--decode_hparams alignment";
  if (option == "piece_lines") return "--decode_piece_lines";
  return "--" + option;
}

std::string flag_message(const OptionError& e) { return e.render(flag_spelling); }

UsageError usage_error(const Error& e) {
  if (const auto* option = dynamic_cast<const OptionError*>(&e))
    return UsageError(flag_message(*option));
  return UsageError(e.what());
}

std::unique_ptr<Translator> make_translator(const cxxopts::ParseResult& flags,
                                            TranslatorOptions options, Translator::Load when) {
  std::unique_ptr<Translator> translator;
  try {
    options.quantize = parse_quantization(flags["quantize"].as<std::string>());
    // Tools that define these flags (add_decoding_flags): count() is 0 for
    // a flag a tool lacks, and for one left at its default ("").
    auto given = [&](const char* name) {
      return flags.count(name) ? flags[name].as<std::string>() : std::string();
    };
    options.glossary = given("glossary");
    options.shortlist.file = given("shortlist");
    if (flags.count("shortlist")) {
      options.shortlist.limits.best = flags["shortlist_best"].as<int64_t>();
      options.shortlist.limits.frequent = flags["shortlist_frequent"].as<int64_t>();
      options.shortlist.threshold = flags["shortlist_threshold"].as<double>();
    } else {
      for (const char* name : {"shortlist_best", "shortlist_frequent", "shortlist_threshold"})
        if (flags.count(name))
          throw UsageError(std::string("--") + name + " goes with --shortlist, which is not given");
    }
    for (const std::string& path : split(given("ensemble"), ','))
      if (!trim(path).empty()) options.ensemble.push_back({trim(path), 1.0});
    const std::string weights = given("ensemble_weights");
    if (!weights.empty()) {
      const auto parts = split(weights, ',');
      if (options.ensemble.empty() || parts.size() != options.ensemble.size() + 1)
        throw UsageError("--ensemble_weights needs one weight per model: the main one and each "
                         "of the " + std::to_string(options.ensemble.size()) +
                         " --ensemble members, got " + std::to_string(parts.size()));
      std::vector<double> w;
      for (const auto& part : parts) {
        char* end = nullptr;
        const std::string text = trim(part);
        w.push_back(std::strtod(text.c_str(), &end));
        if (text.empty() || *end != '\0' || !(w.back() > 0))
          throw UsageError("--ensemble_weights: '" + text + "' is not a number > 0");
      }
      options.main_weight = w[0];
      for (size_t i = 0; i < options.ensemble.size(); ++i) options.ensemble[i].weight = w[i + 1];
    }
    translator = std::make_unique<Translator>(std::move(options), Translator::Load::kLater);
  } catch (const OptionError& e) {
    throw UsageError(flag_message(e));
  }
  if (when == Translator::Load::kNow) translator->load();
  return translator;
}

std::vector<std::string> list_flag(const cxxopts::ParseResult& flags, const std::string& name) {
  if (!flags.count(name)) return {};
  auto values = flags[name].as<std::vector<std::string>>();
  for (const std::string& v : values)
    if (v.empty())
      throw UsageError("--" + name + " has an empty item; give files or names separated by "
                       "commas, or the flag once for each");
  return values;
}

std::string required(const cxxopts::ParseResult& flags, const std::string& name,
                     const std::string& example) {
  std::string v = flags[name].as<std::string>();
  if (v.empty()) throw UsageError("--" + name + " is required, e.g. " + example);
  return v;
}

namespace {

template <typename Describe>
void list_section(std::ostringstream& out, const std::string& title,
                  const std::vector<std::string>& names, Describe describe) {
  out << title << " (" << names.size() << "):\n";
  if (names.empty()) out << "  (none registered)\n";
  for (const auto& n : names) {
    std::string d = describe(n);
    out << "  " << n;
    if (!d.empty()) out << std::string(n.size() < 34 ? 34 - n.size() : 1, ' ') << d;
    out << "\n";
  }
}

// cxxopts reports "Argument 'x' failed to parse" without the flag's name;
// find the flag that carried the value so the message can name it.
std::string name_bad_value(int argc, char** argv, const std::string& fallback) {
  const size_t open = fallback.find("‘"), close = fallback.find("’");
  if (open == std::string::npos || close == std::string::npos) return fallback;
  const std::string bad = fallback.substr(open + 3, close - open - 3);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq != std::string::npos && arg.substr(eq + 1) == bad)
      return arg.substr(0, eq) + ": '" + bad + "' is not a valid value for this flag (a number is expected)";
    if (i + 1 < argc && starts_with(arg, "--") && bad == argv[i + 1])
      return arg + ": '" + bad + "' is not a valid value for this flag (a number is expected)";
  }
  return fallback;
}

}  // namespace

std::string registry_help() {
  std::ostringstream out;
  list_section(out, "Problems", problem_registry().names(),
               [](const std::string& n) { return create_problem(n)->description(); });
  list_section(out, "Models", model_registry().names(), [](const std::string&) { return ""; });
  list_section(out, "Hparams sets", hparams_registry().names(), [](const std::string& n) {
    // The few values that tell sets apart at a glance.
    HParams hp = hparams_registry().get(n)();
    std::vector<std::string> parts;
    for (const char* key : {"hidden_size", "filter_size", "num_hidden_layers", "num_heads",
                            "batch_size"})
      if (hp.has(key)) parts.push_back(std::string(key) + "=" + hvalue_to_string(hp.value(key)));
    return join(parts, " ");
  });
  return out.str();
}

namespace {
std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

const std::vector<std::string>& command_line() { return stored_command_line(); }

namespace {

// The refused flags join the options, so that the command line parses with
// them and they can be refused by name; --help lists them with the reasons.
void add_refused_flags(cxxopts::Options& options) {
  auto add = options.add_options(kRefusedGroup);
  for (const RefusedFlag& r : refused_flags(options.program())) {
    try {
      // An implicit value, so that T2T's bare booleans (--generate_data)
      // parse too.
      add(r.flag, r.reason, value<std::string>()->implicit_value(""));
    } catch (const cxxopts::exceptions::option_already_exists&) {
      // The command reads it after all; its own definition stands.
    }
  }
}

std::string help_text(const cxxopts::Options& options) {
  std::vector<std::string> groups;
  for (const auto& g : options.groups())
    if (g != kRefusedGroup) groups.push_back(g);
  std::string text = options.help(groups);
  const auto refused = refused_flags(options.program());
  if (refused.empty()) return text;
  text += "\n " + std::string(kRefusedGroup) + " (an error that says what to do instead):\n";
  for (const RefusedFlag& r : refused) {
    // "--flag", then its reason wrapped under it.
    text += "  --" + r.flag + "\n";
    std::string line = "      ";
    for (const std::string& word : split(r.reason, ' ')) {
      if (line.size() + word.size() > 78 && line.size() > 6) {
        text += line + "\n";
        line = "      ";
      }
      line += (line.size() > 6 ? " " : "") + word;
    }
    text += line + "\n";
  }
  return text;
}

// A flag given twice would silently keep its last value (absl's rule,
// which T2T's users meet as a wrong result, not an error): refused, with
// the values given.
// A list flag (a std::vector value) may be given again: its values
// accumulate. Any other flag given twice is refused.
void refuse_repeated_flags(const cxxopts::Options& options, const cxxopts::ParseResult& flags) {
  std::set<std::string> lists;
  for (const std::string& group : options.groups())
    for (const auto& o : options.group_help(group).options)
      if (o.is_container)
        for (const std::string& name : o.l) lists.insert(name);
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> order;
  for (const auto& kv : flags.arguments()) {
    auto& v = values[kv.key()];
    if (v.empty()) order.push_back(kv.key());
    v.push_back(kv.value());
  }
  for (const std::string& key : order) {
    const auto& v = values[key];
    if (v.size() < 2 || lists.count(key)) continue;
    std::vector<std::string> given;
    for (const std::string& value : v) given.push_back("--" + key + "=" + value);
    throw UsageError("--" + key + " is given " + std::to_string(v.size()) + " times (" +
                     join(given, ", ") + "): a flag takes one value, and the last is not taken "
                     "silently; give it once");
  }
}

}  // namespace

int run(int argc, char** argv, cxxopts::Options& options,
        const std::function<int(const cxxopts::ParseResult&)>& body) {
  const std::string program = options.program();
  stored_command_line().assign(argv, argv + argc);
  try {
    ensure_runtime_environment(argc, argv);
    quiet_library_backtraces();
    prepare_cuda();
    add_refused_flags(options);
    cxxopts::ParseResult flags;
    try {
      flags = options.parse(argc, argv);
    } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
      throw UsageError(name_bad_value(argc, argv, e.what()));
    } catch (const cxxopts::exceptions::exception& e) {
      throw UsageError(e.what());
    }
    for (const RefusedFlag& r : refused_flags(program))
      if (flags.count(r.flag)) throw UsageError("--" + r.flag + " " + r.reason + ".");
    refuse_repeated_flags(options, flags);
    if (!flags.unmatched().empty())
      throw UsageError("unexpected argument '" + flags.unmatched().front() +
                       "'; flags are written --name=value");
    if (flags.count("help")) {
      std::cout << help_text(options) << std::flush;
      return 0;
    }
    setup_logging(flags["log_level"].as<std::string>());
    check_registrations();
    if (reads(options, "t2t_usr_dir")) {
      const std::string usr_dir = flags["t2t_usr_dir"].as<std::string>();
      if (!usr_dir.empty()) load_user_dir(usr_dir);
    }
    if (flags.count("registry_help")) {
      std::cout << registry_help() << std::flush;
      return 0;
    }
    if (reads(options, "threads")) {
      const int threads = flags["threads"].as<int>();
      if (threads < 0) throw UsageError("--threads=" + std::to_string(threads) + " must be >= 0");
      set_num_threads(threads);
    }
    // A command without --random_seed draws nothing at random; the default
    // seed keeps it repeatable all the same.
    seed_everything(reads(options, "random_seed") ? flags["random_seed"].as<uint64_t>()
                                                  : uint64_t{429459});
    return body(flags);
  } catch (const UsageError& e) {
    std::cerr << program << ": error: " << e.what() << "\nRun '" << program
              << " --help' for the flags.\n";
    return 2;
  } catch (const OptionError& e) {
    std::cerr << program << ": error: " << flag_message(e) << "\n";
    return 1;
  } catch (const Error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace t2t::cli
