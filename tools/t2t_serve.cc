// t2t-serve: a trained model behind an HTTP/JSON endpoint, with the
// decoder's model flags. The server is in t2t/serve/; this file maps flags
// onto it.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"
#include "t2t/data/problem.h"
#include "t2t/serve/translation_server.h"
#include "t2t/translate/translator.h"
#include "tools/cli_common.h"

namespace {

using t2t::cli::UsageError;
using t2t::cli::usage_error;

void add_server_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Server")
      ("host", "Address to listen on. The default answers this machine only; 0.0.0.0 opens the "
       "server to the network (then use --api_key_file).",
       value<std::string>()->default_value("127.0.0.1"))
      ("port", "TCP port; 0 picks a free one (the log names it).",
       value<int>()->default_value("8080"))
      ("warm_up", "Before /ready answers 200, decode synthetic batches of every size the "
       "server forms, so that the first requests do not pay for what a fresh process makes "
       "on first use (memory, kernels per row count). false: ready as soon as the model is "
       "loaded.",
       value<bool>()->default_value("true"))
      ("max_batch_size", "Most sentences decoded in one batch. Sentences of concurrent requests "
       "that share search options are batched together, closest in length first.",
       value<int64_t>()->default_value("32"))
      ("max_batch_delay_ms", "How long the oldest waiting sentence may wait for others to fill "
       "its batch. Higher: fuller batches under load; lower: less latency when idle.",
       value<double>()->default_value("5"))
      ("batch_quiet_ms", "A batch also goes once no sentence has arrived for this long: "
       "clients answered together come back in a burst, and waiting past it for "
       "--max_batch_delay_ms only idles a core. 0: off.",
       value<double>()->default_value("1"))
      ("max_queue", "Most sentences waiting; a request that would go beyond gets 503 with "
       "Retry-After.", value<int64_t>()->default_value("1024"))
      ("max_request_sentences", "Most sentences in one request; more gets 413.",
       value<int64_t>()->default_value("64"))
      ("max_input_tokens", "Most subword tokens in one sentence, EOS included; more gets 413.",
       value<int64_t>()->default_value("256"))
      ("max_request_bytes", "Largest request body; larger gets 413.",
       value<int64_t>()->default_value("1048576"))
      ("max_beam_size", "Largest beam_size (and n_best) a request may ask for.",
       value<int64_t>()->default_value("16"))
      ("api_key_file", "File of API keys, one a line: every request except GET /health and "
       "/ready must then carry 'Authorization: Bearer KEY' (else 401); the page at / takes "
       "the key as /?key=KEY.",
       value<std::string>()->default_value(""))
      ("http_threads", "Requests handled at once. Each translate request holds one while its "
       "sentences are decoded; whole requests beyond wait for a free one (up to "
       "--max_waiting_requests). A request is read in full before it takes one.",
       value<int>()->default_value("128"))
      ("max_waiting_requests", "Most whole requests waiting for one of --http_threads; more get "
       "503 with Retry-After.", value<int>()->default_value("256"))
      ("max_connections", "Most connections open at once, whatever they are doing. A new one "
       "beyond closes the one that has been sending its request (or idling) the longest; "
       "when every one holds a whole request, the new one gets 503.",
       value<int>()->default_value("512"))
      ("header_timeout", "Seconds a client has to send its request line and headers, from its "
       "first byte (or from connecting); later gets 408 and the connection closed.",
       value<double>()->default_value("10"))
      ("body_timeout", "Seconds a client has to send its request body, once the headers are "
       "in; later gets 408 and the connection closed.",
       value<double>()->default_value("30"))
      ("keep_alive_timeout", "Seconds an idle connection is kept open for the client's next "
       "request. 0: one request a connection.",
       value<double>()->default_value("5"))
      ("write_timeout", "Seconds a client has to take an answer; one that does not read it is "
       "dropped.", value<double>()->default_value("10"))
      ("max_header_bytes", "Longest request line and headers together; longer gets 431.",
       value<int64_t>()->default_value("65536"))
      ("max_buffered_bytes", "Most bytes of request bodies held in memory at once, arriving or "
       "waiting for a thread; a request beyond gets 503 with Retry-After. At least "
       "--max_request_bytes.", value<int64_t>()->default_value("134217728"))
      ("shutdown_timeout", "On SIGTERM or SIGINT, seconds to finish queued requests before "
       "answering the rest 503 and exiting.", value<double>()->default_value("30"))
      ("watch_checkpoints", "Every this many seconds, load the newest checkpoint beside the "
       "serving one if there is a newer one. 0: only on POST /v1/reload.",
       value<double>()->default_value("0"))
      ("log_requests", "Log every request's texts and translations (off: texts never reach the "
       "log).");
}

// --decode_hparams keys that shape t2t-decoder's files, not a server's
// answers: refused rather than silently ignored.
void refuse_file_decode_hparams(const std::string& decode_hparams) {
  t2t::HParams given = t2t::default_decode_hparams();
  given.parse(decode_hparams, "--decode_hparams");
  const t2t::HParams defaults = t2t::default_decode_hparams();
  const std::pair<const char*, const char*> keys[] = {
      {"batch_size", "use --max_batch_size"},
      {"return_beams", "a request asks for several hypotheses with \"n_best\""},
      {"write_beam_scores", "answers always carry \"scores\""},
      {"num_samples", "it applies to decoding the dev split"},
      {"delimiter", "each request's \"text\" is a list"}};
  for (const auto& [key, instead] : keys)
    if (t2t::hvalue_to_string(given.value(key)) != t2t::hvalue_to_string(defaults.value(key)))
      throw UsageError(std::string("--decode_hparams ") + key + " does not apply to t2t-serve: " +
                       instead);
}

int64_t positive(const cxxopts::ParseResult& flags, const std::string& name) {
  const int64_t v = flags[name].as<int64_t>();
  if (v < 1) throw UsageError("--" + name + "=" + std::to_string(v) + " must be at least 1");
  return v;
}

template <typename T>
T in_range(const cxxopts::ParseResult& flags, const std::string& name, T low, T high) {
  const T v = flags[name].as<T>();
  if (!(v >= low && v <= high))
    throw UsageError("--" + name + "=" + fmt::format("{}", v) + " must be between " +
                     fmt::format("{}", low) + " and " + fmt::format("{}", high));
  return v;
}

// A timeout in seconds: above 0 (or 0 where `zero_ok`), at most an hour.
double timeout(const cxxopts::ParseResult& flags, const std::string& name, bool zero_ok = false) {
  const double v = flags[name].as<double>();
  if (!(zero_ok ? v >= 0 : v > 0) || !(v <= 3600))
    throw UsageError("--" + name + "=" + fmt::format("{}", v) + " must be " +
                     (zero_ok ? "between 0" : "above 0") + " and at most 3600 seconds");
  return v;
}

int serve(const cxxopts::ParseResult& flags) {
  using t2t::cli::required;
  const std::string problem_name = required(flags, "problem", "--problem=translate_enzh_sample");
  const std::string model_name = required(flags, "model", "--model=transformer");
  const std::string output_dir = required(flags, "output_dir", "--output_dir=t2t_train/run1");
  const std::string data_dir = required(flags, "data_dir", "--data_dir=t2t_data");

  t2t::ServerConfig config;
  config.spell = t2t::cli::flag_spelling;
  config.host = flags["host"].as<std::string>();
  config.port = flags["port"].as<int>();
  if (config.port < 0 || config.port > 65535)
    throw UsageError("--port=" + std::to_string(config.port) + " is not a TCP port (0..65535)");
  t2t::TranslatorOptions options;
  options.batching.max_batch_size = positive(flags, "max_batch_size");
  const double delay_ms = flags["max_batch_delay_ms"].as<double>();
  if (!(delay_ms >= 0 && delay_ms <= 60000))
    throw UsageError("--max_batch_delay_ms must be between 0 and 60000");
  options.batching.max_delay = std::chrono::microseconds(static_cast<int64_t>(delay_ms * 1000));
  const double quiet_ms = flags["batch_quiet_ms"].as<double>();
  if (!(quiet_ms >= 0 && quiet_ms <= 60000))
    throw UsageError("--batch_quiet_ms must be between 0 and 60000");
  options.batching.quiet_gap = std::chrono::microseconds(static_cast<int64_t>(quiet_ms * 1000));
  options.batching.max_queue = positive(flags, "max_queue");
  config.limits.max_request_sentences = positive(flags, "max_request_sentences");
  config.limits.max_beam_size = positive(flags, "max_beam_size");
  config.max_input_tokens = positive(flags, "max_input_tokens");
  config.max_request_bytes = positive(flags, "max_request_bytes");
  if (config.limits.max_request_sentences > options.batching.max_queue)
    throw UsageError("--max_request_sentences is larger than --max_queue: such a request could "
                     "never be queued");
  config.http_threads = in_range(flags, "http_threads", 1, 4096);
  config.gate.max_waiting_requests = in_range(flags, "max_waiting_requests", 1, 1000000);
  config.gate.max_connections = in_range(flags, "max_connections", 1, 1000000);
  config.gate.header_timeout_s = timeout(flags, "header_timeout");
  config.gate.body_timeout_s = timeout(flags, "body_timeout");
  config.gate.keep_alive_timeout_s = timeout(flags, "keep_alive_timeout", true);
  config.gate.write_timeout_s = timeout(flags, "write_timeout");
  config.gate.max_header_bytes = in_range<int64_t>(flags, "max_header_bytes", 1024, 16 << 20);
  config.gate.max_buffered_bytes = positive(flags, "max_buffered_bytes");
  if (config.gate.max_buffered_bytes < config.max_request_bytes)
    throw UsageError("--max_buffered_bytes=" + std::to_string(config.gate.max_buffered_bytes) +
                     " is below --max_request_bytes=" + std::to_string(config.max_request_bytes) +
                     ": a request of that size could never be taken");
  config.api_key_file = flags["api_key_file"].as<std::string>();
  config.log_requests = flags.count("log_requests") > 0;
  config.shutdown_timeout_s = flags["shutdown_timeout"].as<double>();
  if (!(config.shutdown_timeout_s >= 0)) throw UsageError("--shutdown_timeout must be >= 0");
  config.watch_checkpoints_s = flags["watch_checkpoints"].as<double>();
  if (!(config.watch_checkpoints_s >= 0)) throw UsageError("--watch_checkpoints must be >= 0");
  if (config.watch_checkpoints_s > 0 && !flags["ensemble"].as<std::string>().empty())
    throw UsageError("--watch_checkpoints reloads one model; an --ensemble is not reloaded "
                     "(its members' newer checkpoints would not come together)");

  const std::string decode_hparams = flags["decode_hparams"].as<std::string>();
  refuse_file_decode_hparams(decode_hparams);
  options.decoding = t2t::cli::decoding_options(flags);
  if (options.decoding.search.beam_size > config.limits.max_beam_size)
    throw UsageError("--decode_hparams beam_size=" +
                     std::to_string(options.decoding.search.beam_size) +
                     " is above --max_beam_size=" + std::to_string(config.limits.max_beam_size));
  options.hparams = t2t::cli::run_hparams(flags, output_dir);
  // A server's sentences have no place in one input to key their draws by
  // (t2t/search/sampling.h): random sampling is t2t-decoder's alone.
  try {
    if (t2t::sampling_options(options.hparams, 0).random)
      throw UsageError("hparam sampling_method=random is not supported by t2t-serve, which "
                       "decodes with the argmax or beam search: use t2t-decoder "
                       "--decode_hparams=beam_size=1 to sample, or leave sampling_method at argmax");
  } catch (const t2t::Error& e) {
    throw usage_error(e);
  }
  options.problem = problem_name;
  options.model = model_name;
  options.data_dir = data_dir;
  options.output_dir = output_dir;
  options.checkpoint = flags["checkpoint_path"].as<std::string>();
  options.device = flags["device"].as<std::string>();
  options.cuda_graphs = flags.count("cuda_graphs") > 0;
  options.warm_up = flags["warm_up"].as<bool>();
  // Loaded by serve() once it listens: /health answers meanwhile.
  auto translator = t2t::cli::make_translator(flags, std::move(options), t2t::Translator::Load::kLater);
  const t2t::TranslatorOptions& made = translator->options();
  spdlog::info("{}", t2t::runtime_summary());
  spdlog::info("problem {}, model {}, device {}{}{}", problem_name, model_name,
               translator->device().str(),
               made.quantize == t2t::Quantization::kNone
                   ? ""
                   : std::string(", ") + t2t::quantization_name(made.quantize) + " weights",
               made.cuda_graphs ? ", decoding steps replayed as CUDA graphs" : "");
  return t2t::serve(config, *translator);
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "t2t-serve",
      "Serves a trained model over HTTP/JSON, batching the sentences of concurrent requests:\n"
      "  t2t-serve --problem=translate_enzh_wmt32k --model=transformer --data_dir=D \\\n"
      "    --output_dir=O --port=8080\n"
      "  curl -s localhost:8080/v1/translate -d '{\"text\": [\"Hello world.\"]}'\n"
      "Endpoints: POST /v1/translate {\"text\": [...], \"beam_size\": 4, \"alpha\": 0.6, "
      "\"n_best\": 1}\n"
      "  -> {\"translations\": [...], \"scores\": [...], \"model_step\": N};\n"
      "  POST /v1/reload (the newest checkpoint beside the serving one), GET /health, GET /ready,\n"
      "  GET /metrics (Prometheus), GET / (a page to try the model in a browser; with\n"
      "  --api_key_file open /?key=KEY). SIGTERM or SIGINT: finish what is queued, then exit 0.\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  t2t::cli::add_model_flags(options);
  t2t::cli::add_decoding_flags(options);
  add_server_flags(options);
  return t2t::cli::run(argc, argv, options, serve);
}
