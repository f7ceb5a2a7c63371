// cuda_bf16.h's storage type and conversions on the CPU (round to nearest even, as on the GPU).
#ifndef ZRT_CUDA_ON_CPU_CUDA_BF16_H
#define ZRT_CUDA_ON_CPU_CUDA_BF16_H

#include <cstdint>
#include <cstring>

#include "cuda_runtime.h"

struct __nv_bfloat16 {
  uint16_t x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
      x = static_cast<uint16_t>((u >> 16) | 0x0040u);
    else
      x = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  operator float() const {
    const uint32_t u = uint32_t(x) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }

#endif // ZRT_CUDA_ON_CPU_CUDA_BF16_H
