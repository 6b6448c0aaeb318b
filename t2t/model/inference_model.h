// What a model can offer a decoder beyond T2TModel's steps: weights laid out
// for the CPU kernels, int8 weights, and static shapes for CUDA graphs.
// Training needs none of it, so it is an interface of its own that a model
// opts into by deriving from it as well; a model without it decodes in
// float32 at dynamic shapes, and asking it for more is refused by name.
#pragma once

#include <string>

#include "t2t/kernels/int8_weights.h"

namespace t2t {

class T2TModel;

class InferenceModel {
 public:
  virtual ~InferenceModel() = default;

  // Decoding at static shapes: the states start_decoding() makes from then
  // on keep their buffers at fixed addresses and step at a few bucketed
  // sizes, so that with `graphs` (a CUDA device only) each size's step is
  // captured into a CUDA graph the second time it comes and replayed from
  // then on. Results equal the usual steps' up to rounding.
  virtual void set_static_decoding(bool on, bool graphs) = 0;

  // Switches to int8 weights with activations quantized per call, for
  // decoding on the CPU; the float parameters are kept. Throws t2t::Error
  // naming the layer it cannot quantize.
  virtual void quantize_int8() = 0;
  virtual bool quantized() const = 0;
  // After quantize_int8(): frees the float weights no layer reads any more.
  // The model can then only decode (not be trained, saved or switched back).
  virtual void release_float_weights() = 0;
  // Lays the float CPU weights out for the kernels that read them (a copy
  // beside each weight, used for as long as that weight stays unchanged).
  virtual void pack_for_inference() = 0;

  // An int8 model saved and loaded as such: int8_weights() gives the int8
  // form of every matrix quantize_int8() quantizes, keyed by the name of the
  // float parameter it replaces; load_int8_weights() builds the int8 layers
  // from such a map instead of quantize_int8(), with the same results, and
  // releases the float weights they replace. Both throw t2t::Error naming
  // what is missing or does not fit. The map is taken by value so that each
  // matrix's values can be freed once its layer holds them in its own layout.
  virtual Int8WeightMap int8_weights() const = 0;
  virtual void load_int8_weights(Int8WeightMap weights) = 0;
};

// The model's InferenceModel side, or nullptr when it has none.
InferenceModel* as_inference_model(T2TModel& model);
const InferenceModel* as_inference_model(const T2TModel& model);

// The model's InferenceModel side; throws t2t::Error naming the model and
// `for_what` (e.g. "int8 weights") when it has none.
InferenceModel& inference_model(T2TModel& model, const std::string& for_what);

}  // namespace t2t
