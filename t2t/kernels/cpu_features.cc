#include "t2t/kernels/cpu_features.h"

namespace t2t {

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#ifdef T2T_X86_KERNELS
    __builtin_cpu_init();
    f.sse42 = __builtin_cpu_supports("sse4.2");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vnni = __builtin_cpu_supports("avx512vnni");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
#ifndef __clang__  // clang 14 (the fuzz build's) does not know this feature's name
    f.amx_bf16 = __builtin_cpu_supports("amx-bf16");
#endif
#endif
    return f;
  }();
  return features;
}

}  // namespace t2t
