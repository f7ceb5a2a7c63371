// The CPU kernels of block-wise quantization (zc.quantize / zc.dequantize): the layout and the
// rounding are zrt/Quantize.h's. Compiled per ISA level (cpu/IsaKernels.cpp): the division and
// the rounding of a block vectorize (vdivps, vroundps), and a bf16 block's conversions with them.
#ifndef ZRT_CPU_QUANTIZE_H
#define ZRT_CPU_QUANTIZE_H

#include <cmath>
#include <cstring>

#include "cpu/Parallel.h"
#include "zrt/FakeQuantize.h"
#include "zrt/Quantize.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// x [rows, cols] into rows of quant::rowBytes(cols, block, bits) bytes.
template <class T>
void quantizeRows(const T *x, uint8_t *out, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  const int64_t blocks = quant::blocksPerRow(cols, block), stride = quant::rowBytes(cols, block, bits);
  parallelFor(rows * blocks, kElementGrain / (block > 0 ? block : 1), [&](int64_t item) {
    const int64_t row = item / blocks, b = item % blocks;
    const int64_t first = b * block, count = first + block <= cols ? block : cols - first;
    const T *src = x + row * cols + first;
    uint8_t *dst = out + row * stride;
    float amax = 0.0f;
    for (int64_t i = 0; i < count; ++i)
      amax = fmaxf(amax, fabsf(static_cast<float>(src[i])));
    const float scale = quant::scaleOf(amax, bits);
    std::memcpy(dst + 4 * b, &scale, sizeof(scale));
    uint8_t *values = dst + 4 * blocks;
    if (bits == 8) {
      int8_t *q = reinterpret_cast<int8_t *>(values) + first;
      for (int64_t i = 0; i < count; ++i)
        q[i] = static_cast<int8_t>(quant::levelOf(static_cast<float>(src[i]), scale, bits));
      return;
    }
    // 4 bits: blocks start on even values (the verifier asks for an even block), so a byte
    // never holds two blocks' values and the items write disjoint bytes.
    uint8_t *q = values + first / 2;
    for (int64_t i = 0; i + 1 < count; i += 2)
      q[i / 2] = static_cast<uint8_t>(quant::nibble(quant::levelOf(static_cast<float>(src[i]), scale, bits)) |
                                      quant::nibble(quant::levelOf(static_cast<float>(src[i + 1]), scale, bits)) << 4);
    if (count % 2)
      q[count / 2] = quant::nibble(quant::levelOf(static_cast<float>(src[count - 1]), scale, bits));
  });
  // The padding after each row's values: zero, so equal tensors give equal bytes.
  const int64_t used = 4 * blocks + quant::valueBytes(cols, bits);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t i = used; i < stride; ++i)
      out[row * stride + i] = 0;
}

/// The inverse: rows of quantized bytes into y [rows, cols].
template <class T>
void dequantizeRows(const uint8_t *in, T *y, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  const int64_t blocks = quant::blocksPerRow(cols, block), stride = quant::rowBytes(cols, block, bits);
  parallelFor(rows * blocks, kElementGrain / (block > 0 ? block : 1), [&](int64_t item) {
    const int64_t row = item / blocks, b = item % blocks;
    const int64_t first = b * block, count = first + block <= cols ? block : cols - first;
    const uint8_t *src = in + row * stride;
    float scale;
    std::memcpy(&scale, src + 4 * b, sizeof(scale));
    const uint8_t *values = src + 4 * blocks;
    T *dst = y + row * cols + first;
    if (bits == 8) {
      const int8_t *q = reinterpret_cast<const int8_t *>(values) + first;
      for (int64_t i = 0; i < count; ++i)
        dst[i] = T(quant::dequantized(q[i], scale));
      return;
    }
    const uint8_t *q = values + first / 2;
    for (int64_t i = 0; i < count; ++i)
      dst[i] = T(quant::dequantized(quant::fromNibble(i % 2 ? q[i / 2] >> 4 : q[i / 2] & 0xF), scale));
  });
}

/// zc.fake_quantize (zrt/FakeQuantize.h): x's n values in `groups` contiguous groups, each snapped
/// to its own grid; a copy while `gate` is 0 (before the technique's schedule offset).
template <class T>
void fakeQuantizeGroups(const T *x, T *y, int64_t n, int64_t groups, int64_t width, int32_t bits, bool asymmetric,
                        float gate) {
  if (gate == 0.0f) {
    parallelFor(n, kElementGrain, [&](int64_t i) { y[i] = x[i]; });
    return;
  }
  // Group g is runs of `width` values, one every groups * width (fakequant::groupIndex), walked
  // run by run: no index arithmetic per value.
  const int64_t size = n / groups, stride = groups * width;
  parallelFor(groups, kElementGrain / (size > 0 ? size : 1), [&](int64_t g) {
    float lo = INFINITY, hi = -INFINITY, amax = 0.0f;
    for (int64_t run = g * width; run < n; run += stride)
      for (int64_t j = 0; j < width; ++j) {
        const float v = static_cast<float>(x[run + j]);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
        amax = fmaxf(amax, fabsf(v));
      }
    const fakequant::Grid grid = asymmetric ? fakequant::asymmetricGrid(lo, hi, bits) : fakequant::symmetricGrid(amax, bits);
    for (int64_t run = g * width; run < n; run += stride)
      for (int64_t j = 0; j < width; ++j)
        y[run + j] = T(fakequant::snapped(static_cast<float>(x[run + j]), grid, bits, asymmetric));
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_QUANTIZE_H
