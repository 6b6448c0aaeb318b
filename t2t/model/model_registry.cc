#include "t2t/model/model_registry.h"

namespace t2t {

Registry<ModelFactory>& model_registry() {
  static Registry<ModelFactory> registry("model");
  return registry;
}

}  // namespace t2t
