// What the three command-line front ends share: T2T's flag names and
// defaults, --help and --registry_help, and one way of turning errors into
// a message and an exit status (2 for a bad command line, 1 for a failure).
#pragma once

#include <cxxopts.hpp>

#include <functional>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/translator.h"

namespace t2t::cli {

// Flag groups; a command adds the ones it understands. A group leaves out
// the flags that the command (options.program()) does not read, which
// refused_flags() names: run() refuses them with the reason.
void add_common_flags(cxxopts::Options& options);   // registry help, plugins, runtime, logging
void add_problem_flags(cxxopts::Options& options);  // --problem --data_dir --tmp_dir
void add_model_flags(cxxopts::Options& options);    // --model --hparams_set --hparams ...
// What t2t-decoder and t2t-serve share: --decode_hparams --checkpoint_path
// --parallel_batches --quantize.
void add_decoding_flags(cxxopts::Options& options);

// A command-line mistake: printed with a pointer to --help, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A library error met while reading the command line, as a UsageError: an
// OptionError in the command line's words (flag_message), else as it is.
UsageError usage_error(const Error& e);

// A flag a command does not read: one of the shared groups' that it has no
// use for, or one of T2T's that its T2T namesake takes and users pass out of
// habit. run() accepts it on the command line only to refuse it (exit status
// 2) with `reason`, which says why and what to do instead; --help lists them.
struct RefusedFlag {
  std::string flag;    // without "--"
  std::string reason;  // completes "--flag ..."
};
// The flags `program` (e.g. "t2t-bleu") refuses.
std::vector<RefusedFlag> refused_flags(const std::string& program);

// The values of a list flag (a std::vector<std::string> value, given
// again or with commas), in order; empty when not given. Throws UsageError
// for an empty item ("a,,b").
std::vector<std::string> list_flag(const cxxopts::ParseResult& flags, const std::string& name);

// The value of a string flag that must be given; throws UsageError with an
// example when it is empty.
std::string required(const cxxopts::ParseResult& flags, const std::string& name,
                     const std::string& example);

// The hparams a trained run decodes with, as T2T takes them: the run's
// saved hparams.yaml with --hparams_file and --hparams on top, or, without
// one, --hparams_set (then required) resolved the same way. Throws
// UsageError for a value the model would not honour
// (t2t/model/honoured_hparams.h), and for activation_dtype other than float32
// asked for here: decoding computes in float32.
HParams run_hparams(const cxxopts::ParseResult& flags, const std::string& output_dir);

// The hparams of a run Tensor2Tensor trained: --hparams_set's, then those
// of its hparams.json (`t2t_json`), logging where the two differ and what
// t2t cannot take. The caller applies --hparams_file and --hparams after.
HParams t2t_run_hparams(const cxxopts::ParseResult& flags, const std::string& t2t_json);

// --decode_hparams and --parallel_batches as typed options.
DecodeOptions decoding_options(const cxxopts::ParseResult& flags);

// How the command line spells a library option (OptionError): the flag
// ("--quantize", "--checkpoint_path"), or the key of --decode_hparams
// ("--decode_hparams beam_size").
std::string flag_spelling(const std::string& option);
// An OptionError's message in the command line's words.
std::string flag_message(const OptionError& e);

// A Translator over `options` with --quantize read here. What it refuses
// before loading (an option the device cannot take) is a command-line
// mistake (UsageError); with Load::kNow it then loads, and what fails there
// is a failure (t2t::Error, exit status 1).
std::unique_ptr<Translator> make_translator(const cxxopts::ParseResult& flags,
                                            TranslatorOptions options, Translator::Load when);

// argv of this process as run() received it (for relaunching itself).
const std::vector<std::string>& command_line();

// Every registered problem, model and hparams set, for --registry_help.
std::string registry_help();

// Parses argv and runs `body` after the shared set-up (logging, plugins from
// --t2t_usr_dir, registry check, threads, seed: those of them the command
// has). Handles --help and --registry_help, and refuses the command's
// refused_flags(). Returns the process exit status.
int run(int argc, char** argv, cxxopts::Options& options,
        const std::function<int(const cxxopts::ParseResult&)>& body);

}  // namespace t2t::cli
