// bf16 <-> f32 blocks of rows, the widened bf16 matmul's tile copies (cpu/WidenedMatmul.h).
// Compiled per ISA level (cpu/IsaKernels.h): rounding to nearest even at SSE2 width is
// compute-bound (about 0.6 ns per value on the 2-core machines here, twice AVX2's time).
// Serial: the widened matmul runs them inside its own thread team, each thread on its panel.
#ifndef ZRT_CPU_BF16ROWS_H
#define ZRT_CPU_BF16ROWS_H

#include <cstdint>

#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// dst (rows x cols, rows `dstStride` apart) = the bf16 rows at src, `srcStride` apart,
/// widened exactly.
inline void widenRows(const bf16 *src, int64_t srcStride, int64_t rows, int64_t cols, float *dst,
                      int64_t dstStride) {
  for (int64_t r = 0; r < rows; ++r) {
    const bf16 *s = src + r * srcStride;
    float *d = dst + r * dstStride;
    for (int64_t c = 0; c < cols; ++c)
      d[c] = bf16::toFloat(s[c].bits);
  }
}

/// The bf16 rows at dst, `dstStride` apart = the f32 rows at src, `srcStride` apart, rounded
/// to nearest even (NaN kept quiet): the native bf16 matmul's rounding of its f32 sums.
inline void roundRows(const float *src, int64_t srcStride, int64_t rows, int64_t cols, bf16 *dst,
                      int64_t dstStride) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *s = src + r * srcStride;
    bf16 *d = dst + r * dstStride;
    for (int64_t c = 0; c < cols; ++c)
      d[c].bits = bf16::fromFloat(s[c]);
  }
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_BF16ROWS_H
