#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "t2t/core/runtime.h"

namespace {
// Before any test touches LibTorch, as the binaries do (runtime.h).
const bool cuda_prepared = (t2t::prepare_cuda(), true);
}  // namespace
