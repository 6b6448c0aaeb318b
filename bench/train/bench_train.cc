// Training benchmark: the registry's "transformer" trained through the real
// t2t::TrainStep (forward, label-smoothed loss, backward, gradient norm,
// Adam) for a fixed number of steps on synthetic, length-bucketed token
// batches, on the CPU or a GPU. Prints one JSON line per hparams set with
// target tokens/s, model FLOP/s, the fraction of this process's measured
// GEMM peak (float32, or the mixed-precision type) and peak RSS (and GPU
// memory); bench/train/reference_train.py prints the same line for plain
// PyTorch on the same batches (run.sh runs both).
//
//   t2t-bench-train --hparams_set=transformer_tiny,transformer_small --steps=20
//   t2t-bench-train --device=cuda --mixed_precision=bf16 --hparams_set=transformer_base
#include <c10/core/CachingDeviceAllocator.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

#include "bench/bench_util.h"
#include "t2t/core/cuda_graph.h"
#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/core/hparams.h"
#include "t2t/core/runtime.h"
#include "t2t/data/batching.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/train_step.h"

namespace {

using t2t::bench::basename;
using t2t::bench::cpu_seconds;
using t2t::bench::env_or_empty;
using t2t::bench::peak_rss_mib;
using t2t::bench::Profile;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CUDA kernels run after their launch returns: the clock may only be read
// once the device has caught up.
void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// Peak MiB the CUDA caching allocator handed out to tensors and held from
// the driver since the last reset. The device-generic allocator interface
// needs neither the CUDA headers nor a link to c10_cuda.
std::pair<double, double> peak_gpu_mib(const torch::Device& device) {
  const auto stats = c10::getDeviceAllocator(device.type())->getDeviceStats(device.index());
  const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return {stats.allocated_bytes[all].peak / 1048576.0, stats.reserved_bytes[all].peak / 1048576.0};
}

// --- synthetic batches: the same generator as reference_train.py -----------

// Length buckets of T2T's scheme (boundaries 8, then x1.1) around the
// lengths of news sentences in subword tokens; one batch per bucket, cycled.
constexpr std::array<std::pair<int64_t, int64_t>, 4> kBuckets{{{20, 22}, {28, 30}, {36, 39}, {46, 50}}};

at::Tensor padded(const std::vector<std::vector<int64_t>>& rows) {
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  auto t = torch::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)},
                        torch::kLong);
  auto a = t.accessor<int64_t, 2>();
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) a[i][j] = rows[i][j];
  return t;
}

// Per bucket [lo, hi): batch_size / hi examples (T2T's examples per bucket),
// each side 80%·lo..hi-1 tokens long, ending in EOS (1), other ids uniform
// in [2, vocab).
std::vector<t2t::Batch> synthetic_batches(uint64_t seed, int64_t vocab, int64_t batch_size) {
  t2t::SplitMix64 rng(seed);
  std::vector<t2t::Batch> batches;
  for (const auto& [lo, hi] : kBuckets) {
    std::vector<std::vector<int64_t>> inputs, targets;
    for (int64_t e = 0; e < std::max<int64_t>(1, batch_size / hi); ++e) {
      for (auto* rows : {&inputs, &targets}) {
        const int64_t n = rng.modulo_between((4 * lo) / 5, hi - 1);
        std::vector<int64_t> row;
        for (int64_t i = 0; i + 1 < n; ++i) row.push_back(rng.modulo_between(2, vocab - 1));
        row.push_back(1);
        rows->push_back(std::move(row));
      }
    }
    t2t::Batch b;
    b.inputs = padded(inputs);
    b.targets = padded(targets);
    b.input_tokens = b.inputs.ne(0).sum().item<int64_t>();
    b.target_tokens = b.targets.ne(0).sum().item<int64_t>();
    batches.push_back(std::move(b));
  }
  return batches;
}

// Sum over all id tensors of sum_i id_i * (i + 1): equal on both sides.
int64_t fingerprint(const std::vector<t2t::Batch>& batches) {
  int64_t total = 0;
  for (const auto& b : batches) {
    for (const auto& t : {b.inputs, b.targets}) {
      auto flat = t.flatten();
      total += (flat * torch::arange(1, flat.numel() + 1, torch::kLong)).sum().item<int64_t>();
    }
  }
  return total;
}

// --- FLOPs: the same formula as reference_train.py -------------------------

struct Shape {
  int64_t d, f, layers, vocab;
};

// Multiply-adds x2 of every matrix product of one forward pass over a padded
// batch [B, S] -> [B, T]: projections, attention scores and weighted sums
// (full square, as computed), feed-forward and logits.
double forward_matmul_flops(const Shape& c, double B, double S, double T) {
  const double d = c.d, f = c.f, L = c.layers;
  const double enc = L * (2 * B * S * (4 * d * d + 2 * d * f) + 4 * B * S * S * d);
  const double dec = L * (2 * B * T * (6 * d * d + 2 * d * f) + 4 * B * S * d * d +
                          4 * B * T * T * d + 4 * B * T * S * d);
  return enc + dec + 2 * B * T * d * c.vocab;
}

double step_flops(const Shape& c, const t2t::Batch& b) {
  return 3 * forward_matmul_flops(c, b.inputs.size(0), b.inputs.size(1), b.targets.size(1));
}

// The name PyTorch prints after "torch.", as the reference's JSON has it.
const char* dtype_name(torch::ScalarType dtype) {
  return dtype == torch::kBFloat16 ? "bfloat16" : dtype == torch::kHalf ? "float16" : "float32";
}

// Best GEMM rate over a few shapes (a square one and the feed-forward ones
// of transformer_base), best of `repeats` each, on this process's threads or
// its GPU, in the type the model's products run in (float32, or the
// mixed-precision type).
double peak_matmul_flops(const torch::Device& device, torch::ScalarType dtype, int repeats = 10) {
  const std::array<std::array<int64_t, 3>, 3> sizes{{{2048, 2048, 2048}, {4096, 512, 2048},
                                                     {4096, 2048, 512}}};
  // A GPU does one of these products in tens of microseconds, about what a
  // synchronization costs: time several back to back there.
  const int per_timing = device.is_cuda() ? 10 : 1;
  const auto options = torch::TensorOptions().device(device).dtype(dtype);
  double best = 0;
  for (const auto& [m, k, n] : sizes) {
    auto a = torch::randn({m, k}, options), b = torch::randn({k, n}, options),
         out = torch::empty({m, n}, options);
    torch::mm_out(out, a, b);
    for (int r = 0; r < repeats; ++r) {
      synchronize(device);
      const auto t0 = Clock::now();
      for (int i = 0; i < per_timing; ++i) torch::mm_out(out, a, b);
      synchronize(device);
      best = std::max(best, per_timing * 2.0 * m * k * n / seconds_since(t0));
    }
  }
  return best;
}

// The reference implements one architecture: refuse a set it would not
// reproduce rather than compare different models.
void check_reference_can_follow(const t2t::HParams& hp) {
  auto expect = [&](const std::string& key, const std::string& value) {
    if (hp.has(key) && t2t::hvalue_to_string(hp.value(key)) != value)
      throw t2t::Error("hparam " + key + "=" + t2t::hvalue_to_string(hp.value(key)) +
                       ": reference_train.py implements " + value + " only");
  };
  expect("layer_preprocess_sequence", "n");
  expect("layer_postprocess_sequence", "da");
  expect("norm_type", "layer");
  expect("shared_embedding_and_softmax_weights", "true");
  expect("use_target_space_embedding", "true");
  expect("multiply_embedding_mode", "sqrt_depth");
  expect("num_encoder_layers", "0");
  expect("num_decoder_layers", "0");
  expect("attention_key_channels", "0");
  expect("attention_value_channels", "0");
  expect("symbol_dropout", "0.0");
  expect("weight_decay", "0.0");
  expect("optimizer", "adam");
  if (hp.has("optimizer_multistep_accumulate_steps") &&
      hp.get_int("optimizer_multistep_accumulate_steps") > 1)
    throw t2t::Error("reference_train.py does not accumulate gradients");
}

// The hparams reference_train.py reads, as a JSON object.
std::string reference_config(const t2t::HParams& hp) {
  std::ostringstream o;
  o << "{";
  const char* ints[] = {"hidden_size", "filter_size", "num_heads", "num_hidden_layers",
                        "batch_size"};
  const char* floats[] = {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout",
                          "label_smoothing", "optimizer_adam_beta1", "optimizer_adam_beta2",
                          "optimizer_adam_epsilon", "norm_epsilon", "clip_grad_norm"};
  bool first = true;
  for (const char* k : ints) {
    o << (first ? "" : ", ") << '"' << k << "\": " << hp.get_int(k);
    first = false;
  }
  for (const char* k : floats) {
    // The shortest text that reads back as the same double.
    char text[32];
    const auto end = std::to_chars(text, text + sizeof(text), hp.get_float(k)).ptr;
    o << ", \"" << k << "\": " << std::string(text, end);
  }
  o << "}";
  return o.str();
}

struct Options {
  int64_t steps = 0, warmup_steps = 0, vocab = 0;
  uint64_t seed = 1;
  double lr = 1e-4;
  std::string device = "cpu";  // canonical: "cpu" or "cuda:N"
  std::string mixed_precision = "none";
  bool cuda_graphs = false;
  std::string overrides;
  std::string profile;  // chrome trace of the timed steps, when set
};

void run_set(const std::string& set_name, const Options& opt, int threads) {
  const t2t::HParams hp = t2t::resolve_hparams(set_name, "", opt.overrides);
  check_reference_can_follow(hp);
  const int64_t vocab =
      opt.vocab > 0 ? opt.vocab : (set_name == "transformer_base" ? 32768 : 8192);
  const torch::Device device(opt.device);
  const torch::ScalarType matmul_dtype =
      t2t::autocast_dtype(opt.mixed_precision, device).value_or(torch::kFloat);
  // Each set's GPU peak is its own, as one process per set gives the reference.
  // (The caching allocator exists only once CUDA is initialised, which the
  // first tensor on the device does.)
  if (device.is_cuda()) {
    torch::zeros({1}, torch::TensorOptions().device(device));
    c10::getDeviceAllocator(device.type())->resetPeakStats(device.index());
  }

  t2t::seed_everything(opt.seed);
  auto batches = synthetic_batches(opt.seed, vocab, hp.get_int("batch_size"));
  const int64_t batches_fingerprint = fingerprint(batches);
  // Resident on the device from the start, as the reference keeps them: the
  // comparison is of training steps, not of host-to-device copies.
  for (auto& b : batches) {
    b.inputs = b.inputs.to(device);
    b.targets = b.targets.to(device);
  }
  std::shared_ptr<t2t::T2TModel> model =
      t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{vocab, vocab, true});
  model->to(device);  // before the optimizer takes the parameters, as the trainer does
  int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  auto optimizer = t2t::make_optimizer(*model, hp);
  t2t::TrainStep train_step(*model, *optimizer, hp, device, opt.mixed_precision);
  // As t2t-trainer --cuda_graphs: the steps on one side stream, each batch
  // shape's captured at its second step.
  std::optional<t2t::UseSideStream> side_stream;
  if (opt.cuda_graphs) {
    side_stream.emplace(device);
    train_step.use_static_shapes(t2t::batching_scheme(hp), /*graphs=*/true);
  }

  // Steps are queued as the trainer queues them, reading nothing back; the
  // first and the last are run to read their loss.
  double first_loss = 0, last_loss = 0;
  int64_t overflow_steps = 0;
  auto step = [&](const t2t::Batch& b, double* loss) {
    if (loss == nullptr) {
      train_step.queue({b}, opt.lr);
      return;
    }
    const t2t::StepResult r = train_step.run({b}, opt.lr);
    *loss = r.loss_sum / std::max(1.0, r.tokens);
  };
  // fp16's loss scaling skips a step now and then by design (the
  // reference's GradScaler does too); any other skip is a broken run.
  auto check_skips = [&]() {
    train_step.stats().snapshot();
    const t2t::StepReport r = train_step.stats().take();
    overflow_steps += r.overflow;
    if (r.nonfinite > 0)
      throw t2t::Error(std::to_string(r.nonfinite) + " benchmark steps were skipped (non-finite loss)");
  };

  const auto t_start = Clock::now();
  for (int64_t i = 0; i < opt.warmup_steps; ++i)
    step(batches[i % batches.size()], i == 0 ? &first_loss : nullptr);
  synchronize(device);
  const double warmup_s = seconds_since(t_start);
  double tokens = 0, flops = 0;
  const Shape shape{hp.get_int("hidden_size"), hp.get_int("filter_size"),
                    hp.get_int("num_hidden_layers"), vocab};
  Profile profile(opt.profile, device.is_cuda());
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < opt.steps; ++i) {
    const auto& b = batches[i % batches.size()];
    const bool first = opt.warmup_steps == 0 && i == 0;
    step(b, i + 1 == opt.steps ? &last_loss : first ? &first_loss : nullptr);
    tokens += b.target_tokens;
    flops += step_flops(shape, b);
  }
  synchronize(device);
  const double seconds = seconds_since(t0);
  const double cpu = cpu_seconds() - cpu0;
  profile.finish();
  check_skips();
  if (opt.warmup_steps == 0 && opt.steps == 1) first_loss = last_loss;
  std::string gpu_memory;
  if (device.is_cuda()) {
    // Read before the GEMM measurement below allocates its own matrices.
    const auto [allocated, reserved] = peak_gpu_mib(device);
    std::ostringstream m;
    m << ", \"peak_gpu_allocated_mib\": " << allocated << ", \"peak_gpu_reserved_mib\": " << reserved;
    gpu_memory = m.str();
  }
  const double peak = peak_matmul_flops(device, matmul_dtype);

  std::ostringstream o;
  o.precision(10);
  o << "{\"side\": \"t2t\", \"hparams_set\": \"" << set_name << "\", \"vocab\": " << vocab
    << ", \"device\": \"" << opt.device << "\", \"cuda_graphs\": " << (opt.cuda_graphs ? "true" : "false") << ", \"mixed_precision\": \"" << opt.mixed_precision
    << "\", \"matmul_dtype\": \"" << dtype_name(matmul_dtype) << "\", \"threads\": " << threads
    << ", \"params\": " << params << ", \"steps\": " << opt.steps
    << ", \"warmup_steps\": " << opt.warmup_steps << ", \"warmup_s\": " << warmup_s
    << ", \"seconds\": " << seconds << ", \"cpu_seconds\": " << cpu << ", \"target_tokens_per_s\": " << tokens / seconds
    << ", \"flops_per_s\": " << flops / seconds << ", \"peak_matmul_flops_per_s\": " << peak
    << ", \"fraction_of_peak\": " << flops / seconds / peak
    << ", \"peak_rss_mib\": " << peak_rss_mib() << gpu_memory
    << ", \"first_loss\": " << first_loss << ", \"last_loss\": " << last_loss
    << ", \"overflow_steps\": " << overflow_steps << ", \"batches\": " << batches_fingerprint
    << ", \"torch\": \"" << TORCH_VERSION << "\", \"omp_wait_policy\": \"" << env_or_empty("OMP_WAIT_POLICY")
    << "\", \"preload\": \"" << basename(env_or_empty("LD_PRELOAD"))
    << "\", \"config\": " << reference_config(hp) << "}";
  std::cout << o.str() << std::endl;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // stdout carries the JSON line the benchmark scripts parse; logging (the
  // attention kernel said on a GPU, for one) goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  cxxopts::Options options("t2t-bench-train",
                           "Trains the transformer through t2t::TrainStep on synthetic batches "
                           "and prints one JSON line of speed figures per hparams set.");
  options.add_options()  //
      ("hparams_set", "Comma-separated hparams sets.",
       cxxopts::value<std::string>()->default_value(
           "transformer_tiny,transformer_small,transformer_base"))  //
      ("hparams", "Overrides in T2T's syntax, applied to every set.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("steps", "Timed steps.", cxxopts::value<int64_t>()->default_value("20"))  //
      ("warmup_steps", "Untimed steps first.", cxxopts::value<int64_t>()->default_value("4"))  //
      ("vocab", "Shared vocabulary size; 0: 8192, 32768 for transformer_base.",
       cxxopts::value<int64_t>()->default_value("0"))  //
      ("threads", "Intra-op threads; 0: all cores.", cxxopts::value<int>()->default_value("0"))  //
      ("seed", "Seed of the batches and the model.",
       cxxopts::value<uint64_t>()->default_value("1"))  //
      ("lr", "Constant learning rate.", cxxopts::value<double>()->default_value("1e-4"))  //
      ("device", "cpu, cuda, cuda:N or auto (CUDA when available).", cxxopts::value<std::string>()->default_value("cpu"))  //
      ("mixed_precision", "none, bf16 or fp16 (CUDA only), as t2t-trainer's flag.",
       cxxopts::value<std::string>()->default_value("none"))  //
      ("cuda_graphs", "As t2t-trainer's flag: each batch shape's step captured into a CUDA "
       "graph (padded to its length bucket) and replayed.",
       cxxopts::value<bool>()->default_value("false"))  //
      ("profile", "Write a chrome trace of the timed steps here (one set only; slows them).",
       cxxopts::value<std::string>()->default_value(""))  //
      ("h,help", "Print this help.");
  return t2t::bench::bench_main(argc, argv, options, [&](const cxxopts::ParseResult& flags) {
    Options opt;
    opt.steps = flags["steps"].as<int64_t>();
    opt.warmup_steps = flags["warmup_steps"].as<int64_t>();
    opt.vocab = flags["vocab"].as<int64_t>();
    opt.seed = flags["seed"].as<uint64_t>();
    opt.lr = flags["lr"].as<double>();
    opt.overrides = flags["hparams"].as<std::string>();
    opt.profile = flags["profile"].as<std::string>();
    opt.device = t2t::resolve_device(flags["device"].as<std::string>());
    opt.mixed_precision = flags["mixed_precision"].as<std::string>();
    opt.cuda_graphs = flags["cuda_graphs"].as<bool>();
    if (opt.cuda_graphs && opt.device.rfind("cuda", 0) != 0)
      throw t2t::Error("--cuda_graphs needs --device=cuda, not " + opt.device);
    t2t::autocast_dtype(opt.mixed_precision, torch::Device(opt.device));  // refuses bad values now
    if (opt.steps < 1 || opt.warmup_steps < 0) throw t2t::Error("--steps must be >= 1 and --warmup_steps >= 0");
    const int threads = t2t::set_num_threads(flags["threads"].as<int>());
    for (const auto& set_name : split_commas(flags["hparams_set"].as<std::string>()))
      run_set(set_name, opt, threads);
    return 0;
  });
}
