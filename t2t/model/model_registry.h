// The model registry: T2T_REGISTER_MODEL(ClassName), built from hparams and
// FeatureInfo alone. No LibTorch here, so front ends list models cheaply.
#pragma once

#include <functional>
#include <memory>

#include "t2t/core/hparams.h"
#include "t2t/core/registry.h"

namespace t2t {

class T2TModel;      // t2t/model/t2t_model.h
struct FeatureInfo;  // t2t/model/t2t_model.h
using ModelFactory = std::function<std::shared_ptr<T2TModel>(const HParams&, const FeatureInfo&)>;
Registry<ModelFactory>& model_registry();

}  // namespace t2t

#define T2T_REGISTER_MODEL(Class)                                                              \
  static ::t2t::Registrar<::t2t::ModelFactory> T2T_CONCAT(t2t_model_registrar_, Class)(         \
      ::t2t::model_registry(), ::t2t::camelcase_to_snakecase(#Class),                          \
      [](const ::t2t::HParams& hp,                                                             \
         const ::t2t::FeatureInfo& features) -> std::shared_ptr<::t2t::T2TModel> {             \
        return std::make_shared<Class>(hp, features);                                          \
      },                                                                                       \
      {#Class, __FILE__})
