// t2t-decoder: translates with a trained model, or scores given
// translations (--score_file), T2T's flags. The work is in t2t/translate/;
// this file maps flags onto it.
#include <filesystem>
#include <iostream>
#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/op_profile.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/runtime.h"
#include "t2t/data/problem.h"
#include "t2t/translate/decode_modes.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/score_file.h"
#include "t2t/translate/translator.h"
#include "tools/cli_common.h"

namespace {

void add_decoder_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Decoding")
      ("decode_from_file", "Translate this file, one sentence a line.",
       value<std::string>()->default_value(""))
      ("decode_to_file", "Write translations here (default: derived from --decode_from_file).",
       value<std::string>()->default_value(""))
      ("decode_reference", "Reference translations; BLEU is printed at the end. Several "
       "references: repeat the flag or separate the files with commas.",
       value<std::vector<std::string>>())
      ("decode_interactive", "Read sentences from standard input and answer each at once.")
      ("decode_piece_lines", "With --decode_from_file: translate it N lines at a time, each "
       "finished piece kept in <decode_to_file>.pieces/, so that a run killed at any point and "
       "started again with the same flags goes on after the last finished piece and writes what "
       "one run would (back-translation or distillation of a large corpus). Each piece logs the "
       "share done and the time left; the pieces are joined at the end. 0: the whole file in "
       "one go.",
       value<int64_t>()->default_value("0"))
      ("prefix_file", "With --decode_from_file: a file of one target prefix per input line "
       "(empty: none). Each translation starts with its prefix and the search continues from "
       "it (interactive translation, post-editing).",
       value<std::string>()->default_value(""))
      ("constraints_file", "With --decode_from_file: a file of one line per input line, the "
       "target terms that line's translation must contain, tab-separated (empty: none). "
       "Lexically constrained beam search (dynamic beam allocation); needs beam_size >= the "
       "number of terms + 1. Adds to --glossary's terms.",
       value<std::string>()->default_value(""))
      ("alignment_file", "With --decode_hparams alignment=hard|soft|<threshold> and "
       "--decode_from_file: write each line's word alignment here, a line each, instead of as "
       "a tab-separated column after the translation. Hard: Pharaoh 'source-target' word "
       "index pairs; soft: per target word, its weights over the source words.",
       value<std::string>()->default_value(""))
      ("score_file", "Score instead of translating: a file of 'input<TAB>target' lines. Writes to "
       "--decode_to_file (default: standard output) one number a line, in the file's order, "
       "printed %.6f: the natural-log probability of the target given the input, i.e. the sum "
       "over the target's subword tokens, EOS included, of log p(token | input, the tokens "
       "before it), teacher-forced, without label smoothing. It is <= 0, higher = likelier. "
       "(T2T writes its training loss there instead: label-smoothed, averaged per token, "
       "positive.) Lines are scored in batches of --decode_hparams batch_size. With "
       "--decode_hparams alignment=hard|soft|<threshold>, each score is followed by a tab and "
       "the pair's word alignment.",
       value<std::string>()->default_value(""))
      ("profile", "After translating, print the time spent in each LibTorch operator and in "
       "t2t's own scopes (t2t::encode, t2t::decode_step, t2t::top_candidates), by self time, "
       "from loading done to the last line written. Slows decoding by a few percent.");
}

// --decode_hparams keys that shape a search, which scoring runs none of:
// refused when changed rather than silently ignored.
void refuse_search_decode_hparams(const std::string& decode_hparams) {
  t2t::HParams given = t2t::default_decode_hparams();
  given.parse(decode_hparams, "--decode_hparams");
  const t2t::HParams defaults = t2t::default_decode_hparams();
  for (const char* key : {"beam_size", "alpha", "extra_length", "patience", "return_beams",
                          "write_beam_scores", "num_samples", "delimiter", "no_repeat_ngram_size",
                          "repetition_penalty"})
    if (t2t::hvalue_to_string(given.value(key)) != t2t::hvalue_to_string(defaults.value(key)))
      throw t2t::cli::UsageError(std::string("--decode_hparams ") + key + " does not apply to "
                                 "--score_file, which scores the given targets without a search");
}

// --score_file: the scores of the given pairs, to --decode_to_file or
// standard output.
int score(t2t::Translator& translator, const std::string& path, const std::string& to_file) {
  std::vector<t2t::WordAlignment> alignments;
  const auto scores = translator.score_file(path, &alignments);
  const std::string text = t2t::format_scores(scores, alignments,
                                              translator.options().decoding.soft_alignment);
  if (to_file.empty()) {
    std::cout << text << std::flush;
  } else {
    t2t::write_file_atomic(to_file, text);
    spdlog::info("wrote {}", to_file);
  }
  return 0;
}

// How tokens are picked, for the start-up line: nothing for argmax.
std::string sampling_summary(const t2t::SamplingOptions& sampling) {
  if (!sampling.random) return "";
  return fmt::format(", sampling at temperature {}{} with seed {}", sampling.temperature,
                     sampling.keep_top_k > 0 ? fmt::format(" from the top {}", sampling.keep_top_k)
                                             : std::string(),
                     sampling.seed);
}

int decode(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  const std::string problem_name =
      required(flags, "problem", "--problem=translate_enzh_sample");
  const std::string model_name = required(flags, "model", "--model=transformer");
  const std::string output_dir = required(flags, "output_dir", "--output_dir=t2t_train/run1");
  required(flags, "data_dir", "--data_dir=t2t_data");

  t2t::TranslatorOptions translator_options;
  translator_options.hparams = t2t::cli::run_hparams(flags, output_dir);
  const t2t::HParams& hp = translator_options.hparams;
  t2t::DecodeOptions options = t2t::cli::decoding_options(flags);
  const std::string score_path = flags["score_file"].as<std::string>();
  if (!score_path.empty() && flags["decode_to_file"].as<std::string>().empty()) {
    // The scores go to standard output: the log moves out of their way.
    spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
    t2t::setup_logging(flags["log_level"].as<std::string>());
  }
  try {
    options.search.sampling = t2t::sampling_options(hp, flags["random_seed"].as<uint64_t>());
    if (score_path.empty()) t2t::check_sampling_search(options.search);
  } catch (const t2t::Error& e) {
    throw t2t::cli::usage_error(e);
  }

  const std::string from_file = flags["decode_from_file"].as<std::string>();
  const std::string to_file = flags["decode_to_file"].as<std::string>();
  const std::vector<std::string> references = t2t::cli::list_flag(flags, "decode_reference");
  const bool interactive = flags.count("decode_interactive") > 0;
  if (interactive && !from_file.empty())
    throw t2t::cli::UsageError("give either --decode_interactive or --decode_from_file, not both");
  if (interactive && !references.empty())
    throw t2t::cli::UsageError("--decode_reference needs --decode_from_file or the dev split, "
                               "not --decode_interactive");
  const int64_t piece_lines = flags["decode_piece_lines"].as<int64_t>();
  if (piece_lines < 0)
    throw t2t::cli::UsageError("--decode_piece_lines=" + std::to_string(piece_lines) +
                               ": give the lines of a piece, or 0 for the whole file at once");
  if (piece_lines > 0 && from_file.empty())
    throw t2t::cli::UsageError("--decode_piece_lines goes with --decode_from_file");
  if (piece_lines > 0 && !references.empty())
    throw t2t::cli::UsageError("--decode_piece_lines does not keep the translations in memory "
                               "for --decode_reference: score the output with t2t-bleu "
                               "afterwards");
  const bool profiling = flags.count("profile") > 0;
  if (profiling && interactive)
    throw t2t::cli::UsageError("--profile times a whole file or the dev split: it goes without "
                               "--decode_interactive");
  t2t::FileDecodeExtras extras;
  extras.prefix_path = flags["prefix_file"].as<std::string>();
  extras.constraints_path = flags["constraints_file"].as<std::string>();
  extras.alignment_path = flags["alignment_file"].as<std::string>();
  for (const char* flag : {"prefix_file", "constraints_file", "alignment_file"})
    if (!flags[flag].as<std::string>().empty() && from_file.empty())
      throw t2t::cli::UsageError(std::string("--") + flag + " goes with --decode_from_file (its "
                                 "records are the input file's lines)");
  if (!extras.alignment_path.empty() && !options.search.alignment)
    throw t2t::cli::UsageError("--alignment_file needs --decode_hparams alignment=hard (or soft, "
                               "or a threshold such as 0.3)");
  if (!score_path.empty() && !flags["glossary"].as<std::string>().empty())
    throw t2t::cli::UsageError("--glossary constrains a search; --score_file scores given "
                               "translations without one");
  if (options.search.alignment && from_file.empty() && !interactive && score_path.empty())
    throw t2t::cli::UsageError("--decode_hparams alignment goes with --decode_from_file or "
                               "--decode_interactive, not the dev split");
  if (!score_path.empty()) {
    if (interactive || !from_file.empty() || !references.empty())
      throw t2t::cli::UsageError("--score_file scores given translations: it goes without "
                                 "--decode_from_file, --decode_interactive and --decode_reference");
    refuse_search_decode_hparams(flags["decode_hparams"].as<std::string>());
  }
  const t2t::OutputNaming naming{model_name, flags["hparams_set"].as<std::string>(), problem_name};
  auto output_name = [&](const std::string& base) {
    if (naming.hparams_set.empty())
      throw t2t::cli::UsageError("T2T's default output name needs --hparams_set; give it, or "
                                 "--decode_to_file=FILE");
    return t2t::decode_filename(base, naming, options.search.beam_size, options.search.alpha);
  };

  translator_options.problem = problem_name;
  translator_options.model = model_name;
  translator_options.data_dir = flags["data_dir"].as<std::string>();
  translator_options.output_dir = output_dir;
  translator_options.checkpoint = flags["checkpoint_path"].as<std::string>();
  translator_options.device = flags["device"].as<std::string>();
  translator_options.cuda_graphs = flags.count("cuda_graphs") > 0;
  translator_options.decoding = options;
  auto translator = t2t::cli::make_translator(flags, std::move(translator_options),
                                              t2t::Translator::Load::kLater);
  spdlog::info("{}", t2t::runtime_summary());
  const t2t::Stopwatch load_clock;
  translator->load();
  const auto loaded = translator->current();
  const t2t::Quantization quantize = translator->options().quantize;
  const std::string search =
      score_path.empty() ? fmt::format(", beam_size {}, alpha {}{}", options.search.beam_size,
                                       options.search.alpha,
                                       sampling_summary(options.search.sampling))
                         : std::string(", scoring --score_file");
  spdlog::info("problem {}, model {} from {} (step {}, loaded in {:.3f} s), device {}{}, "
               "batch_size {}{}", problem_name, model_name, loaded->checkpoint, loaded->step,
               load_clock.seconds(), translator->device().str(),
               loaded->int8_checkpoint ? ", int8 weights"
               : quantize == t2t::Quantization::kNone
                   ? ""
                   : std::string(", ") + t2t::quantization_name(quantize) + " weights",
               options.batch_size, search);
  if (translator->options().cuda_graphs)
    spdlog::info("decoding steps at static shapes, replayed as CUDA graphs");

  std::optional<t2t::OpProfile> profile;
  if (profiling) profile.emplace();
  const t2t::Stopwatch clock;
  auto print_profile = [&] {
    if (profile) std::cerr << "\n" << profile->report(clock.seconds()) << std::flush;
  };
  if (!score_path.empty()) {
    const int status = score(*translator, score_path, to_file);
    print_profile();
    return status;
  }
  if (interactive) {
    translator->translate_stream(std::cin, std::cout);
    return 0;
  }
  t2t::DecodeOutcome outcome;
  if (!from_file.empty() && piece_lines > 0) {
    outcome = translator->translate_file_in_pieces(
        from_file, to_file.empty() ? output_name(from_file) : to_file, piece_lines, nullptr, extras);
  } else if (!from_file.empty()) {
    outcome = translator->translate_file(
        from_file, to_file.empty() ? output_name(from_file) : to_file, nullptr, extras);
  } else {
    // T2T's dev-split decoding; its files go beside --decode_to_file when
    // given, else into the run directory.
    const std::string base = to_file.empty()
        ? (std::filesystem::path(output_dir) / (problem_name + "-dev")).string()
        : to_file;
    outcome = translator->translate_dev_split(output_name(base));
  }
  print_profile();
  if (!references.empty()) {
    std::vector<std::vector<std::string>> refs;
    std::vector<std::string> names;
    for (const std::string& path : references) {
      refs.push_back(t2t::read_records(path, options.delimiter, "decode_reference"));
      names.push_back("--decode_reference=" + path);
    }
    std::cout << t2t::bleu_report(outcome.hypotheses, refs, names);
  } else if (!outcome.references.empty()) {
    std::cout << t2t::bleu_report(outcome.hypotheses, {outcome.references},
                                  {"the dev split's targets"});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-decoder",
                           "Translates with a trained model, T2T style:\n"
                           "  t2t-decoder --problem=translate_enzh_wmt32k --model=transformer \\\n"
                           "    --data_dir=D --output_dir=O --decode_hparams='beam_size=4,alpha=0.6' \\\n"
                           "    --decode_from_file=in.en --decode_to_file=out.zh\n"
                           "Sampling instead of the argmax, T2T's model hparams, greedy only:\n"
                           "  t2t-decoder ... --decode_hparams=beam_size=1 --random_seed=3 \\\n"
                           "    --hparams=sampling_method=random,sampling_temp=0.7,"
                           "sampling_keep_top_k=40\n"
                           "  Sentence k of the input draws from (--random_seed, k) alone: the same "
                           "seed and input\n"
                           "  give the same output; another batch_size or thread count changes a "
                           "sample only\n"
                           "  through float rounding of its logits.\n"
                           "Back-translation of a large monolingual file, resumable after a kill "
                           "(a _rev problem\n"
                           "  translates the other way; rerun the same command to go on):\n"
                           "  t2t-decoder --problem=translate_enzh_wmt32k_rev ... "
                           "--decode_from_file=mono.zh \\\n"
                           "    --decode_to_file=bt.en --decode_piece_lines=10000\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  t2t::cli::add_model_flags(options);
  t2t::cli::add_decoding_flags(options);
  add_decoder_flags(options);
  return t2t::cli::run(argc, argv, options, decode);
}
