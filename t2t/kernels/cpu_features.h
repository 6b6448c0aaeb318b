// What this x86 CPU can run, asked once, for the kernels that pick a
// hand-written version at run time.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

// Defined where the hand-written x86 kernels compile.
#define T2T_X86_KERNELS 1

// GCC 12 warns of uninitialized values inside its own AVX-512 intrinsics:
// kernels using them sit between these two.
#define T2T_INTRINSICS_BEGIN                                  \
  _Pragma("GCC diagnostic push")                              \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
          _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define T2T_INTRINSICS_END _Pragma("GCC diagnostic pop")
#endif

namespace t2t {

struct CpuFeatures {
  bool sse42 = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vnni = false;
  // Native bf16 products; without them LibTorch emulates bf16 in float32.
  bool avx512bf16 = false;
  bool amx_bf16 = false;
};

// This CPU's (all false where the x86 kernels do not compile).
const CpuFeatures& cpu_features();

// Whether this CPU multiplies bf16 natively (else bf16 runs slower than
// float32). Off x86, unknown and taken as yes.
inline bool cpu_computes_bf16() {
#ifdef T2T_X86_KERNELS
  return cpu_features().avx512bf16 || cpu_features().amx_bf16;
#else
  return true;
#endif
}

}  // namespace t2t
