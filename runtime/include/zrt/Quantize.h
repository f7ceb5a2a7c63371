// Block-wise symmetric quantization (zc.quantize / zc.dequantize; ZeRO++'s qwZ and qgZ), shared
// by the CPU and CUDA backends and by the compiler's shape rules, so that the byte layout and
// the rounding are defined once.
//
// A row of `cols` values is cut into blocks of `block` values (the last one may be shorter).
// Each block has one f32 scale s = amax / qmax (amax the block's largest |x|, qmax 127 for 8
// bits, 7 for 4), computed as an IEEE f32 division; each value becomes
// q = clamp(round_half_even(x / s), -qmax, qmax), again with an IEEE f32 division (not a
// multiplication by 1/s: that rounds twice and moves ties), and 0 where s is 0. Dequantized,
// x' = q * s in f32. These are exactly the f64 reference's results rounded to f32 (a division or
// product done in f64 and rounded to f32 is the correctly rounded f32 one), so every backend and
// ISA level matches the reference bitwise.
//
// A quantized row is `rowBytes(cols, block, bits)` bytes: the block scales first (f32), then
// the values, one int8 each, or for 4 bits two per byte (value 2i in the low nibble, 2i+1 in
// the high one, two's complement), padded to 4 bytes so that the next row's scales stay aligned.
// Scales and values travel in one buffer: one collective moves both.
#ifndef ZRT_QUANTIZE_H
#define ZRT_QUANTIZE_H

#include <cstdint>

#include "zrt/bf16.h"

namespace zrt::quant {

ZRT_HD int64_t blocksPerRow(int64_t cols, int64_t block) { return (cols + block - 1) / block; }
ZRT_HD int64_t valueBytes(int64_t cols, int32_t bits) { return bits == 4 ? (cols + 1) / 2 : cols; }
ZRT_HD int64_t rowBytes(int64_t cols, int64_t block, int32_t bits) {
  return 4 * blocksPerRow(cols, block) + (valueBytes(cols, bits) + 3) / 4 * 4;
}
ZRT_HD int32_t maxLevel(int32_t bits) { return bits == 4 ? 7 : 127; }

/// The block's scale from its largest magnitude.
ZRT_HD float scaleOf(float amax, int32_t bits) { return amax / static_cast<float>(maxLevel(bits)); }

/// One value's level. NaN compares false everywhere and lands on -qmax; a non-finite block's
/// scale is non-finite, so its dequantized values are too (the step's finiteness check sees it).
ZRT_HD int32_t levelOf(float x, float scale, int32_t bits) {
  if (scale == 0.0f)
    return 0;
  const float qmax = static_cast<float>(maxLevel(bits));
  float q = rintf(x / scale); // the default rounding mode: to nearest, ties to even
  q = fminf(qmax, fmaxf(-qmax, q));
  return static_cast<int32_t>(q);
}

/// A 4-bit level's nibble and back.
ZRT_HD uint8_t nibble(int32_t level) { return static_cast<uint8_t>(level) & 0xF; }
ZRT_HD int32_t fromNibble(uint8_t n) { return (n & 0x8) ? static_cast<int32_t>(n) - 16 : static_cast<int32_t>(n); }

ZRT_HD float dequantized(int32_t level, float scale) { return static_cast<float>(level) * scale; }

} // namespace zrt::quant

#endif // ZRT_QUANTIZE_H
