// Decoding benchmark: sentences decoded through the real t2t::beam_search()
// (cached incremental decoder, T2T's beam search or greedy for beam 1,
// finished sentences leaving the batch) on the registry's "transformer",
// in the batches t2t::BatchTranslator::translate makes (t2t::decode_batches: longest
// first, stable, batch_size sentences per batch). Prints one JSON line: sentences/s,
// output tokens/s (EOS included, as the decoder counts them) and peak RSS.
// bench/decode/reference_decode.py prints the same line for the same model
// decoded by plain PyTorch; run.sh runs both.
//
// The model is either a trained run (--output_dir, with its hparams.yaml,
// latest checkpoint and the problem's vocabularies) decoding a text file
// (--source), or an untrained one (--hparams_set, --vocab, --seed) decoding
// synthetic ids. --export_dir writes what the reference needs to rebuild
// exactly that model and those inputs: model.json (hparams, tensor index),
// weights.bin (raw little-endian float32) and sources.json (source ids).
//
//   t2t-bench-decode --output_dir=RUN --data_dir=D --source=data/sample/dev.en
//                    --beam_size=4 --batch_size=32
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

#include "bench/bench_util.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/core/hparams.h"
#include "t2t/core/runtime.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/decode_batches.h"
#include "t2t/translate/decode_options.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/parallel_batches.h"
#include "t2t/translate/translator.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"

namespace {

using t2t::bench::basename;
using t2t::bench::cpu_seconds;
using t2t::bench::env_or_empty;
using t2t::bench::peak_rss_mib;
using t2t::bench::Profile;

namespace fs = std::filesystem;

struct Options {
  int64_t beam_size = 4;
  int64_t batch_size = 32;
  double alpha = 0.6;
  int64_t extra_length = 100;
  double patience = 0;  // SearchOptions::patience: 0, T2T's stopping test alone
  int64_t warmup_batches = 1;
  int64_t passes = 1;
  int parallel_batches = 0;
  torch::Device device = torch::kCPU;
  bool cuda_graphs = false;  // only reported: the Translator set it up
  std::string write_ids;
  std::string profile;
};

// The model and the source ids it decodes.
struct Workload {
  // Loads and readies the model as every front end does (quantization,
  // packed weights, CUDA graphs).
  std::unique_ptr<t2t::Translator> translator;
  std::shared_ptr<t2t::T2TModel> model;
  // The loaded model's, for what every batch decodes over (a shortlist's
  // columns); null for an untrained model.
  std::shared_ptr<const t2t::BatchTranslator> decoder;
  t2t::HParams hparams;
  std::vector<std::vector<int64_t>> sources;  // each ending in EOS
  std::string name;                           // for the JSON line
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A trained run decoding the non-empty lines of `source` (at most `limit`),
// encoded as t2t-decoder encodes them (same stripping, truncation, EOS).
Workload trained(t2t::TranslatorOptions options, const std::string& output_dir,
                 const std::string& data_dir, const std::string& problem_name,
                 const std::string& source, int64_t limit) {
  const std::string saved = (fs::path(output_dir) / "hparams.yaml").string();
  if (!fs::exists(saved)) throw t2t::Error(saved + " not found: train a model there first");
  Workload w;
  w.hparams = t2t::HParams::from_yaml_file(saved);
  options.problem = problem_name;
  options.hparams = w.hparams;
  options.data_dir = data_dir;
  options.output_dir = output_dir;
  w.translator = std::make_unique<t2t::Translator>(std::move(options));
  const auto loaded = w.translator->current();
  w.model = loaded->model;
  w.decoder = loaded->batch_translator;
  w.name = fs::path(output_dir).filename().string() + "@" + std::to_string(loaded->step);
  t2t::BatchTranslator& decoder = *loaded->batch_translator;
  std::ifstream in(source);
  if (!in) throw t2t::Error("cannot read --source=" + source);
  int64_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    auto ids = decoder.encode_source(line, source + " line " + std::to_string(line_no));
    if (ids.empty()) continue;
    w.sources.push_back(std::move(ids));
    if (limit > 0 && static_cast<int64_t>(w.sources.size()) >= limit) break;
  }
  if (w.sources.empty()) throw t2t::Error("--source=" + source + " has no non-empty line");
  return w;
}

// An untrained model (shared vocabulary) and `count` synthetic sources of
// 10..30 ids + EOS (`length` ids + EOS when > 0). Such a model rarely emits
// EOS, so its sentences run to their decode length: the same lengths on
// both sides without training, and one length for all with `length`.
Workload untrained(t2t::TranslatorOptions options, const std::string& set_name, int64_t vocab,
                   uint64_t seed, int64_t count, int64_t length) {
  Workload w;
  w.hparams = t2t::resolve_hparams(set_name, "", "");
  t2t::seed_everything(seed);
  w.model = t2t::model_registry().get("transformer")(w.hparams, t2t::FeatureInfo{vocab, vocab, true});
  // No vocabularies: it decodes ids only.
  w.translator = std::make_unique<t2t::Translator>(std::move(options), w.model, t2t::FeatureEncoders{});
  w.name = set_name + "-untrained";
  t2t::SplitMix64 rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> ids(length > 0 ? length : rng.modulo_between(10, 30));
    for (auto& id : ids) id = rng.modulo_between(2, vocab - 1);
    ids.push_back(t2t::kEosId);
    w.sources.push_back(std::move(ids));
  }
  return w;
}

// --- export for the reference ---------------------------------------------

void write_export(const Workload& w, const std::string& dir) {
  fs::create_directories(dir);
  std::ofstream bin(fs::path(dir) / "weights.bin", std::ios::binary);
  std::ostringstream index;
  int64_t offset = 0;
  bool first = true;
  for (const auto& item : w.model->named_parameters()) {
    const auto t = item.value().detach().to(torch::kCPU, torch::kFloat).contiguous();
    bin.write(reinterpret_cast<const char*>(t.data_ptr<float>()),
              static_cast<std::streamsize>(t.numel() * sizeof(float)));
    index << (first ? "" : ",\n    ") << "{\"name\": " << json_string(item.key())
          << ", \"offset\": " << offset << ", \"shape\": [";
    for (int64_t d = 0; d < t.dim(); ++d) index << (d ? ", " : "") << t.size(d);
    index << "]}";
    offset += t.numel();
    first = false;
  }
  if (!bin) throw t2t::Error("could not write " + (fs::path(dir) / "weights.bin").string());

  // Only what the architecture reads; the reference refuses values it does
  // not implement rather than silently decode another model.
  const auto& hp = w.hparams;
  auto int_or = [&](const char* name, int64_t fallback) {
    return hp.has(name) ? hp.get_int(name) : fallback;
  };
  std::ostringstream m;
  m.precision(17);
  m << "{\n  \"name\": " << json_string(w.name) << ",\n  \"hparams\": {"
    << "\"hidden_size\": " << hp.get_int("hidden_size")
    << ", \"filter_size\": " << hp.get_int("filter_size")
    << ", \"num_heads\": " << hp.get_int("num_heads")
    << ", \"attention_key_channels\": " << int_or("attention_key_channels", 0)
    << ", \"attention_value_channels\": " << int_or("attention_value_channels", 0)
    << ", \"norm_type\": " << json_string(hp.get_string("norm_type"))
    << ", \"norm_epsilon\": " << hp.get_float("norm_epsilon")
    << ", \"layer_preprocess_sequence\": " << json_string(hp.get_string("layer_preprocess_sequence"))
    << ", \"layer_postprocess_sequence\": "
    << json_string(hp.get_string("layer_postprocess_sequence"))
    << ", \"multiply_embedding_mode\": " << json_string(hp.get_string("multiply_embedding_mode"))
    << ", \"pos\": " << json_string(hp.has("pos") ? hp.get_string("pos") : "timing") << "},\n"
    << "  \"tensors\": [\n    " << index.str() << "\n  ]\n}\n";
  std::ofstream(fs::path(dir) / "model.json") << m.str();

  std::ofstream src(fs::path(dir) / "sources.json");
  src << "[";
  for (size_t i = 0; i < w.sources.size(); ++i) {
    src << (i ? ",\n " : "") << "[";
    for (size_t j = 0; j < w.sources[i].size(); ++j) src << (j ? ", " : "") << w.sources[i][j];
    src << "]";
  }
  src << "]\n";
}

// The untrained model as a t2t run (hparams.yaml and model.ckpt-0.pt), for
// tools that read runs, such as tools/export_ctranslate2.py.
void write_run(const Workload& w, const std::string& dir) {
  fs::create_directories(dir);
  w.hparams.save_yaml((fs::path(dir) / "hparams.yaml").string());
  t2t::CheckpointMeta meta;
  meta.hparams_yaml = w.hparams.to_yaml();
  t2t::save_checkpoint(dir, *w.model, nullptr, meta, 0);
}

// --- decoding ------------------------------------------------------------------

// Sum over sentences of sum_i id_i * (i + 1) of the source ids: equal on both
// sides when they decode the same inputs.
int64_t fingerprint(const std::vector<std::vector<int64_t>>& rows) {
  int64_t total = 0, i = 0;
  for (const auto& r : rows)
    for (int64_t id : r) total += id * ++i;
  return total;
}

void run(Workload& w, const Options& opt, int threads) {
  t2t::SearchOptions search;
  search.beam_size = opt.beam_size;
  search.alpha = opt.alpha;
  search.extra_length = opt.extra_length;
  search.patience = opt.patience;
  const auto batches = t2t::decode_batches(w.sources, opt.batch_size);
  std::vector<torch::Tensor> inputs;
  for (const auto& b : batches) inputs.push_back(t2t::padded_batch(w.sources, b).to(opt.device));

  // As t2t::BatchTranslator::translate runs them: on the CPU several batches side
  // by side (parallel_batches.h), each filling its own sentences' results;
  // on a GPU one at a time.
  const int workers = opt.device.is_cpu() ? t2t::parallel_batches(opt.parallel_batches, threads,
                                                                  static_cast<int64_t>(batches.size()))
                                          : 1;
  std::vector<t2t::Hypothesis> results(w.sources.size());
  std::vector<t2t::SearchStats> batch_stats(batches.size());
  const auto run_pass = [&](bool count) {
    t2t::for_each_batch(static_cast<int64_t>(batches.size()), workers, threads, [&](int64_t i) {
      const auto columns =
          w.decoder ? w.decoder->output_columns(w.sources, batches[i]) : t2t::OutputColumns();
      auto out = t2t::beam_search(*w.model, inputs[i], search, count ? &batch_stats[i] : nullptr,
                                  {}, {}, columns);
      for (size_t r = 0; r < batches[i].size(); ++r)
        if (!out[r].empty()) results[batches[i][r]] = std::move(out[r][0]);
    });
  };

  const t2t::Stopwatch warmup_clock;
  if (opt.warmup_batches < 0) {
    // A whole pass run as the timed ones are: oneDNN compiles its float32
    // GEMMs per shape and thread count on first use.
    run_pass(false);
  } else {
    for (int64_t i = 0; i < opt.warmup_batches && i < static_cast<int64_t>(inputs.size()); ++i)
      t2t::beam_search(*w.model, inputs[i], search, nullptr, {}, {},
                       w.decoder ? w.decoder->output_columns(w.sources, batches[i])
                                 : t2t::OutputColumns());
  }
  const double warmup_s = warmup_clock.seconds();

  t2t::SearchStats stats;
  Profile profile(opt.profile);
  const double cpu0 = cpu_seconds();
  const t2t::Stopwatch clock;
  for (int64_t pass = 0; pass < opt.passes; ++pass) run_pass(pass == 0);
  for (const auto& s : batch_stats) {
    stats.steps += s.steps;
    stats.row_steps += s.row_steps;
  }
  const double seconds = clock.seconds() / static_cast<double>(opt.passes);
  const double cpu = (cpu_seconds() - cpu0) / static_cast<double>(opt.passes);
  profile.finish();

  int64_t input_tokens = 0, output_tokens = 0, finished = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    input_tokens += static_cast<int64_t>(w.sources[i].size());
    output_tokens += static_cast<int64_t>(results[i].ids.size()) + (results[i].finished ? 1 : 0);
    finished += results[i].finished ? 1 : 0;
  }
  if (!opt.write_ids.empty()) {
    std::ofstream ids(opt.write_ids);
    for (const auto& r : results) {
      for (size_t j = 0; j < r.ids.size(); ++j) ids << (j ? " " : "") << r.ids[j];
      ids << '\n';
    }
    if (!ids) throw t2t::Error("could not write --write_ids=" + opt.write_ids);
  }

  const double n = static_cast<double>(w.sources.size());
  std::ostringstream o;
  o.precision(10);
  o << "{\"side\": \"t2t\", \"model\": " << json_string(w.name) << ", \"beam_size\": "
    << opt.beam_size << ", \"batch_size\": " << opt.batch_size << ", \"alpha\": " << opt.alpha
    << ", \"extra_length\": " << opt.extra_length << ", \"patience\": " << opt.patience
    << ", \"threads\": " << threads
    << ", \"device\": " << json_string(opt.device.str())
    << ", \"cuda_graphs\": " << (opt.cuda_graphs ? "true" : "false")
    << ", \"parallel_batches\": " << workers
    << ", \"sentences\": " << w.sources.size() << ", \"input_tokens\": " << input_tokens
    << ", \"output_tokens\": " << output_tokens << ", \"finished\": " << finished
    << ", \"decoder_steps\": " << stats.steps << ", \"row_steps\": " << stats.row_steps
    << ", \"passes\": " << opt.passes << ", \"warmup_s\": " << warmup_s
    << ", \"seconds\": " << seconds << ", \"cpu_seconds\": " << cpu
    << ", \"sentences_per_s\": " << n / seconds
    << ", \"output_tokens_per_s\": " << output_tokens / seconds
    << ", \"peak_rss_mib\": " << peak_rss_mib() << ", \"sources\": " << fingerprint(w.sources)
    << ", \"torch\": \"" << TORCH_VERSION << "\", \"omp_wait_policy\": "
    << json_string(env_or_empty("OMP_WAIT_POLICY"))
    << ", \"preload\": " << json_string(basename(env_or_empty("LD_PRELOAD"))) << "}";
  std::cout << o.str() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  // stdout carries the JSON line the benchmark scripts parse; logging (the
  // attention kernel said on a GPU, for one) goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  cxxopts::Options options("t2t-bench-decode",
                           "Decodes sentences through t2t::beam_search and prints one JSON line "
                           "of speed figures.");
  options.add_options()  //
      ("output_dir", "A trained run: hparams.yaml and its latest checkpoint.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("data_dir", "The problem's vocabularies (with --output_dir).",
       cxxopts::value<std::string>()->default_value(""))  //
      ("problem", "The run's problem.",
       cxxopts::value<std::string>()->default_value("translate_enzh_sample"))  //
      ("source", "Source sentences, one a line (with --output_dir).",
       cxxopts::value<std::string>()->default_value("data/sample/dev.en"))  //
      ("hparams_set", "Instead of --output_dir: an untrained model of this set decoding "
                      "synthetic ids.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("vocab", "Vocabulary of the untrained model.",
       cxxopts::value<int64_t>()->default_value("8000"))  //
      ("seed", "Seed of the untrained model and its inputs.",
       cxxopts::value<uint64_t>()->default_value("1"))  //
      ("source_length", "Ids (before EOS) of every synthetic source of an untrained model; "
                        "0: 10 to 30.",
       cxxopts::value<int64_t>()->default_value("0"))  //
      ("write_run", "Save the untrained model as a t2t run here (hparams.yaml, "
                    "model.ckpt-0.pt) and decode nothing.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("max_sentences", "Decode at most this many sources (0: all; 200 synthetic ones for an "
                        "untrained model).",
       cxxopts::value<int64_t>()->default_value("0"))  //
      ("beam_size", "1: greedy.", cxxopts::value<int64_t>()->default_value("4"))  //
      ("batch_size", "Sentences per batch.", cxxopts::value<int64_t>()->default_value("32"))  //
      ("alpha", "Length penalty exponent.", cxxopts::value<double>()->default_value("0.6"))  //
      ("extra_length", "Output tokens allowed beyond the input length.",
       cxxopts::value<int64_t>()->default_value("100"))  //
      ("patience", "As t2t-decoder's --decode_hparams patience: 0 stops a sentence by T2T's "
                   "test alone; 2 also as CTranslate2 with patience 2.",
       cxxopts::value<double>()->default_value("0"))  //
      ("warmup_batches", "Untimed batches first; -1: one untimed pass run as the timed ones.",
       cxxopts::value<int64_t>()->default_value("1"))  //
      ("passes", "Timed passes over all sources; the figures are per pass.",
       cxxopts::value<int64_t>()->default_value("1"))  //
      ("threads", "Intra-op threads; 0: all cores.", cxxopts::value<int>()->default_value("0"))  //
      ("parallel_batches", "Batches decoded side by side, as t2t-decoder's flag (0: one per "
       "thread; 1: one at a time with every thread).",
       cxxopts::value<int>()->default_value("0"))  //
      ("export_dir", "Write model.json, weights.bin and sources.json here for the reference, "
                     "and decode nothing.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("write_ids", "Write the best hypothesis' ids, one sentence a line, in source order.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("profile", "Write a chrome trace of the timed decoding here (slows it).",
       cxxopts::value<std::string>()->default_value(""))  //
      ("shortlist", "A lexical shortlist, as t2t-decoder's flag (with --output_dir).",
       cxxopts::value<std::string>()->default_value(""))  //
      ("shortlist_best", "As t2t-decoder's flag.", cxxopts::value<int64_t>()->default_value("0"))  //
      ("shortlist_frequent", "As t2t-decoder's flag.",
       cxxopts::value<int64_t>()->default_value("-1"))  //
      ("quantize", "none, or int8 as t2t-decoder's flag (CPU).",
       cxxopts::value<std::string>()->default_value("none"))  //
      ("device", "cpu, cuda, cuda:N or auto, as t2t-decoder's flag.",
       cxxopts::value<std::string>()->default_value("cpu"))  //
      ("cuda_graphs", "As t2t-decoder's flag: static shapes, each step replayed as a CUDA "
       "graph (--device=cuda).")  //
      ("h,help", "Print this help.");
  return t2t::bench::bench_main(argc, argv, options, [&](const cxxopts::ParseResult& flags) {
    const int threads = t2t::set_num_threads(flags["threads"].as<int>());
    const std::string quantize = flags["quantize"].as<std::string>();
    t2t::TranslatorOptions translator;
    translator.quantize = t2t::parse_quantization(quantize);
    translator.device = flags["device"].as<std::string>();
    translator.cuda_graphs = flags.count("cuda_graphs") > 0;
    translator.shortlist.file = flags["shortlist"].as<std::string>();
    translator.shortlist.limits.best = flags["shortlist_best"].as<int64_t>();
    translator.shortlist.limits.frequent = flags["shortlist_frequent"].as<int64_t>();
    const bool cuda_graphs = translator.cuda_graphs;
    const std::string export_dir = flags["export_dir"].as<std::string>();
    const std::string run_dir = flags["write_run"].as<std::string>();
    if ((!export_dir.empty() || !run_dir.empty()) && quantize != "none")
      throw t2t::Error("--export_dir and --write_run write float weights: drop --quantize");
    const int64_t limit = flags["max_sentences"].as<int64_t>();
    Workload w;
    if (!flags["hparams_set"].as<std::string>().empty()) {
      if (!translator.shortlist.file.empty())
        throw t2t::Error("--shortlist needs a trained run's vocabularies: give --output_dir");
      if (flags["source_length"].as<int64_t>() < 0)
        throw t2t::Error("--source_length must be >= 0 (0: 10 to 30 ids)");
      w = untrained(translator, flags["hparams_set"].as<std::string>(), flags["vocab"].as<int64_t>(),
                    flags["seed"].as<uint64_t>(), limit > 0 ? limit : 200,
                    flags["source_length"].as<int64_t>());
    } else {
      for (const char* name : {"source_length", "write_run"})
        if (flags.count(name))
          throw t2t::Error(std::string("--") + name + " is for an untrained model: give --hparams_set");
      if (flags["output_dir"].as<std::string>().empty() || flags["data_dir"].as<std::string>().empty())
        throw t2t::Error("give --output_dir and --data_dir (a trained run), or --hparams_set");
      w = trained(translator, flags["output_dir"].as<std::string>(), flags["data_dir"].as<std::string>(),
                  flags["problem"].as<std::string>(), flags["source"].as<std::string>(), limit);
    }
    if (!export_dir.empty() || !run_dir.empty()) {
      if (!export_dir.empty()) write_export(w, export_dir);
      if (!run_dir.empty()) write_run(w, run_dir);
      return 0;
    }
    w.name += quantize == "none" ? "" : "-" + quantize;
    Options opt;
    opt.beam_size = flags["beam_size"].as<int64_t>();
    opt.batch_size = flags["batch_size"].as<int64_t>();
    opt.alpha = flags["alpha"].as<double>();
    opt.extra_length = flags["extra_length"].as<int64_t>();
    opt.patience = flags["patience"].as<double>();
    if (!(opt.patience >= 0)) throw t2t::Error("--patience must be >= 0");
    opt.warmup_batches = flags["warmup_batches"].as<int64_t>();
    opt.passes = flags["passes"].as<int64_t>();
    opt.parallel_batches = flags["parallel_batches"].as<int>();
    opt.device = w.translator->device();
    opt.write_ids = flags["write_ids"].as<std::string>();
    opt.profile = flags["profile"].as<std::string>();
    if (opt.batch_size < 1 || opt.passes < 1)
      throw t2t::Error("--batch_size and --passes must be >= 1");
    if (opt.warmup_batches < -1)
      throw t2t::Error("--warmup_batches must be >= 0, or -1 for one whole untimed pass");
    opt.cuda_graphs = cuda_graphs;
    run(w, opt, threads);
    return 0;
  });
}
