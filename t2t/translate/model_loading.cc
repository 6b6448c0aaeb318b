#include "t2t/translate/model_loading.h"

#include <pthread.h>
#include <sched.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/allocator.h"
#include "t2t/kernels/cpu_features.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/io/mapped_file.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/skip_init.h"
#include "t2t/model/inference_model.h"
#include "t2t/model/ensemble_model.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"
#include "t2t/text/text_encoder.h"
#include "t2t/translate/int8_checkpoint.h"

namespace t2t {

namespace fs = std::filesystem;

LoadedModel load_model(const Problem& problem, const std::string& model_name,
                       const HParams& hparams, const std::string& data_dir,
                       const std::string& output_dir, const std::string& checkpoint_path,
                       const c10::Device& device) {
  LoadedModel loaded;
  // A t2t checkpoint (model.ckpt-N.pt), else one Tensor2Tensor wrote
  // (model.ckpt-N.index and its data shards).
  std::string tf_checkpoint;
  if (!checkpoint_path.empty()) {
    const bool tf_prefix = is_tf_checkpoint(checkpoint_path);
    if (!fs::exists(checkpoint_path) && !tf_prefix)
      throw OptionError("checkpoint", "{checkpoint}=" + checkpoint_path + " does not exist; give "
                        "a model.ckpt-N.pt file, T2T's model.ckpt-N (without .index), or a run "
                        "directory");
    if (tf_prefix) {
      tf_checkpoint = checkpoint_path;
    } else if (fs::is_directory(checkpoint_path)) {
      loaded.checkpoint = latest_checkpoint(checkpoint_path);
      if (loaded.checkpoint.empty()) tf_checkpoint = find_tf_checkpoint(checkpoint_path);
    } else {
      loaded.checkpoint = checkpoint_path;
    }
    if (loaded.checkpoint.empty() && tf_checkpoint.empty())
      throw OptionError("checkpoint", "{checkpoint}=" + checkpoint_path + " holds no checkpoint "
                        "(model.ckpt-N.pt, or T2T's model.ckpt-N.index)");
  } else {
    loaded.checkpoint = latest_checkpoint(output_dir);
    if (loaded.checkpoint.empty()) tf_checkpoint = find_tf_checkpoint(output_dir);
    if (loaded.checkpoint.empty() && tf_checkpoint.empty())
      throw OptionError("output_dir", "{output_dir}=" + output_dir + " holds no checkpoint "
                        "(model.ckpt-N.pt, or T2T's model.ckpt-N.index): train there first with "
                        "t2t-trainer, or name one with {checkpoint}");
  }

  loaded.encoders = problem.feature_encoders(data_dir);
  FeatureInfo info{loaded.encoders.inputs->vocab_size(), loaded.encoders.targets->vocab_size(),
                   loaded.encoders.shared};
  {
    // A t2t checkpoint sets every parameter (its loader checks): none is
    // drawn at random first, nor made resident before the file's values.
    std::optional<SkipInitialization> skip;
    if (tf_checkpoint.empty()) skip.emplace();
    loaded.model = model_registry().get(model_name)(hparams, info);
  }
  if (!tf_checkpoint.empty()) {
    loaded.checkpoint = tf_checkpoint;
    const TFCheckpointReader reader(tf_checkpoint);
    tensorflow_import(*loaded.model).load_tensorflow(reader, kT2TTargetSpace);
    loaded.step = reader.has("global_step") ? reader.read_scalar_int("global_step") : 0;
    spdlog::info("read T2T's TensorFlow checkpoint {} (step {})", tf_checkpoint, loaded.step);
  } else {
    auto does_not_fit = [&](const Error& e) {
      return OptionError("checkpoint", "checkpoint " + loaded.checkpoint + " does not fit model '" +
                                           model_name + "' as built from the run's hparams.yaml, "
                                           "{hparams} and the vocabularies in " + data_dir +
                                           ": " + option_message(e));
    };
    CheckpointMeta meta;
    TensorMap tensors;
    try {
      tensors = read_checkpoint_tensors(loaded.checkpoint, &meta);
    } catch (const Error& e) {
      throw does_not_fit(e);
    }
    loaded.step = meta.step;
    if (meta.weights == "int8" && !device.is_cpu())
      throw OptionError("device", loaded.checkpoint + " holds int8 weights (" +
                                      command_suggestion("t2t-avg-all", {{"quantize", "int8"}}) +
                                      "), which decode on the CPU only: use {device}=cpu, or its "
                                      "float checkpoint on " + device.str());
    if (!meta.weights.empty() && meta.weights != "int8")
      throw Error(loaded.checkpoint + " holds weights of kind '" + meta.weights +
                  "', which this t2t does not know: decode it with the t2t that wrote it");
    try {
      if (meta.weights == "int8") {
        load_int8_tensors(std::move(tensors), *loaded.model, loaded.checkpoint);
        loaded.int8_checkpoint = true;
        spdlog::info("{} holds int8 weights: decoding in int8", loaded.checkpoint);
      } else {
        load_model_tensors(tensors, *loaded.model, loaded.checkpoint);
      }
    } catch (const Error& e) {
      throw does_not_fit(e);
    }
  }
  loaded.model->to(device);
  loaded.model->eval();
  return loaded;
}

Quantization parse_quantization(const std::string& name) {
  if (name == "none") return Quantization::kNone;
  if (name == "int8") return Quantization::kInt8;
  if (name == "bf16") return Quantization::kBf16;
  throw OptionError("quantize", "{quantize}=" + name + " is not one of none, int8, bf16");
}

const char* quantization_name(Quantization q) {
  switch (q) {
    case Quantization::kInt8: return "int8";
    case Quantization::kBf16: return "bf16";
    case Quantization::kNone: break;
  }
  return "none";
}

void check_quantization(Quantization quantize, const c10::Device& device) {
  if (quantize == Quantization::kInt8 && !device.is_cpu())
    throw OptionError("quantize", "{quantize}=int8 runs on the CPU only (LibTorch's int8 kernels "
                                  "are CPU kernels): use {device}=cpu, or leave {quantize} out on " +
                                      device.str());
}

namespace {

void quantize(T2TModel& model, Quantization q) {
  if (q == Quantization::kNone) return;
  const std::string mode = quantization_name(q);
  InferenceModel* inference = as_inference_model(model);
  if (inference && inference->quantized()) {
    // An int8 checkpoint: nothing to do for int8, and nothing else to do.
    if (q == Quantization::kInt8) return;
    throw OptionError("quantize", "{quantize}=" + mode + ": the checkpoint's weights are int8 "
                                  "already; decode it without {quantize}, or give {quantize}=" +
                                      mode + " with its float checkpoint");
  }
  const Stopwatch clock;
  if (q == Quantization::kBf16) {
    // Parameters and buffers in bfloat16, so every product and the
    // attention run in it; the model hands its logits back in float32 for
    // the search's scores (T2TModel::decode_step).
    model.to(torch::kBFloat16);
    spdlog::info("converted the model's weights to bf16 in {:.1f} s", clock.seconds());
    const auto params = model.parameters();
    if (!params.empty() && params[0].device().is_cpu() && !cpu_computes_bf16())
      spdlog::warn("bf16 weights on a CPU without AVX512_BF16 or AMX: LibTorch emulates the bf16 "
                   "products, slower than float32 here; int8 is the fast quantization on this "
                   "CPU");
    return;
  }
  if (!inference)
    throw OptionError("quantize", "{quantize}=" + mode + ": model '" + model.name() +
                                      "' has no int8 implementation; decode it without {quantize}");
  try {
    inference->quantize_int8();
    inference->release_float_weights();  // a decoder never reads them again
  } catch (const Error& e) {
    throw OptionError("quantize", "{quantize}=" + mode + ": " + option_message(e));
  }
  spdlog::info("quantized the model's weights to {} in {:.1f} s", mode, clock.seconds());
}

}  // namespace

void check_cuda_graphs(bool cuda_graphs, const c10::Device& device) {
  if (cuda_graphs && !device.is_cuda())
    throw OptionError("cuda_graphs", "{cuda_graphs} captures decoding steps on a GPU: it needs "
                                     "{device}=cuda, not {device}=" + device.str());
}

void prepare_model(T2TModel& model, Quantization quantize_mode, bool cuda_graphs) {
  if (auto* ensemble = dynamic_cast<EnsembleModel*>(&model)) {
    for (const auto& member : ensemble->members()) prepare_model(*member, quantize_mode, cuda_graphs);
    return;
  }
  // Decoding allocates and frees the same buffers step after step: freed
  // blocks cached per thread beyond a few MiB are peak memory, not speed.
  limit_thread_caches(size_t{4} << 20);
  quantize(model, quantize_mode);
  // After the weights are final: graphs read them where they lie.
  InferenceModel* inference = as_inference_model(model);
  if (cuda_graphs) {
    if (!inference)
      throw OptionError("cuda_graphs", "model '" + model.name() + "' cannot decode at static "
                                       "shapes (CUDA graphs); decode it without {cuda_graphs}");
    inference->set_static_decoding(true, true);
  }
  // After quantizing: int8 layers and bf16 weights have nothing to pack.
  torch::NoGradGuard no_grad;
  if (inference) inference->pack_for_inference();
  // The packed copies are what decoding reads now. The weights they were
  // made from, where they lie in the checkpoint's mapping, need not stay
  // resident beside them: the kernel reads them from the file again if
  // they are used (an embedding's rows, as they are looked up).
  for (const auto& p : model.parameters()) give_back_pages(p);
  // Likewise the code LibTorch ran only at start-up, on a thread of its
  // own: reading the libraries' page map takes time the first translation
  // need not wait for. It touches no object of the program's, so the
  // process may end while it runs.
  std::thread([] {
    // Only when a core is idle: decoding has them all.
    sched_param idle{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
    (void)give_back_library_pages();
  }).detach();
}

}  // namespace t2t
