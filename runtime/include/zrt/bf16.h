// bfloat16 storage type shared by the CPU and CUDA backends: 8-bit exponent, 7-bit mantissa.
#ifndef ZRT_BF16_H
#define ZRT_BF16_H

#include <cstdint>
#include <cstring>

// Always inlined: the CPU kernels are compiled once per ISA level, and an out-of-line copy
// of a conversion built for AVX-512 must never be what generic code links against.
#if defined(__CUDACC__)
#define ZRT_HD __host__ __device__ __forceinline__
#else
#define ZRT_HD __attribute__((always_inline)) inline
#endif

namespace zrt {

/// Round-to-nearest-even conversion, NaN kept quiet; what oneDNN, cuBLASLt and
/// PyTorch do, so bf16 results agree bit for bit with theirs.
struct bf16 {
  uint16_t bits;

  bf16() = default;
  ZRT_HD explicit bf16(float f) : bits(fromFloat(f)) {}
  ZRT_HD explicit bf16(double d) : bits(fromFloat(static_cast<float>(d))) {}
  ZRT_HD operator float() const { return toFloat(bits); }

  ZRT_HD static uint16_t fromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof(u));
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
      return static_cast<uint16_t>((u >> 16) | 0x0040u); // quiet NaN
    uint32_t roundingBias = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>((u + roundingBias) >> 16);
  }
  ZRT_HD static float toFloat(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }
};
static_assert(sizeof(bf16) == 2, "bf16 must be 2 bytes");

} // namespace zrt

#endif // ZRT_BF16_H
