// cuda_bf16.h's storage type and conversions on the CPU: zrt::bf16's rounding (to nearest even,
// NaN kept quiet), which is the GPU's too.
#ifndef ZRT_CUDA_ON_CPU_CUDA_BF16_H
#define ZRT_CUDA_ON_CPU_CUDA_BF16_H

#include <cstdint>

#include "cuda_runtime.h"
#include "zrt/bf16.h"

struct __nv_bfloat16 {
  uint16_t x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : x(zrt::bf16::fromFloat(f)) {}
  operator float() const { return zrt::bf16::toFloat(x); }
};

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }

#endif // ZRT_CUDA_ON_CPU_CUDA_BF16_H
