// Fake quantization as DeepSpeed's compression training computes it (deepspeed/compression/utils.py,
// SymQuantizer and AsymQuantizer with quantize_weight_in_forward), shared by the CPU and CUDA
// kernels of zc.fake_quantize: the values snapped to a `bits`-bit grid per group and returned in
// their own type, so the forward pass sees the quantized weight and the backward pass passes the
// gradient straight through.
//
// A tensor of n values is `groups` groups of n / groups: contiguous (DeepSpeed's
// input.reshape(num_groups, -1)), or strided runs (groupIndex). Each step below is one f32 operation, as in PyTorch, so the
// results are bitwise those of the reference and of PyTorch on the same inputs:
//   symmetric:  scale = (2 amax) / 2^bits;  y = clamp(round(x / scale), -2^(bits-1), 2^(bits-1) - 1) * scale
//   asymmetric: scale = (max - min) / 2^bits;  zero = round(min / scale) * scale;
//               y = clamp(round((x - zero) / scale), 0, 2^bits - 1) * scale + zero
// round is to nearest, ties to even (torch.round). Where a group's scale is 0 (all its values
// equal), DeepSpeed divides 0 by 0 and trains on NaN; here the group is returned unchanged.
#ifndef ZRT_FAKEQUANTIZE_H
#define ZRT_FAKEQUANTIZE_H

#include <cmath>
#include <cstdint>

#include "zrt/bf16.h"

namespace zrt::fakequant {

ZRT_HD float levels(int32_t bits) { return static_cast<float>(int64_t(1) << bits); }

/// Where value i of group g is: a group is runs of `width` consecutive values, one run every
/// groups * width. width = n / groups: contiguous groups (DeepSpeed's reshape(num_groups, -1));
/// width = C / groups of a [R, C] tensor: blocks of columns across every row (DeepSpeed's groups
/// of output rows of a weight zcc keeps [in, out]).
ZRT_HD int64_t groupIndex(int64_t g, int64_t i, int64_t groups, int64_t width) {
  return (i / width) * groups * width + g * width + i % width;
}

/// The group's scale and (asymmetric) zero point from its extremes.
struct Grid {
  float scale = 0, zero = 0;
};
ZRT_HD Grid symmetricGrid(float amax, int32_t bits) {
  const float twice = 2.0f * amax;
  return Grid{twice / levels(bits), 0.0f};
}
ZRT_HD Grid asymmetricGrid(float lo, float hi, int32_t bits) {
  const float range = hi - lo;
  Grid g{range / levels(bits), 0.0f};
  if (g.scale != 0.0f) {
    const float steps = rintf(lo / g.scale);
    g.zero = steps * g.scale;
  }
  return g;
}

/// One value on the grid, one rounding per operation: no FMA contraction (clang's pragma on the
/// CPU, the _rn intrinsics in CUDA device code, which nvcc never fuses).
ZRT_HD float snapped(float x, Grid g, int32_t bits, bool asymmetric) {
#if defined(__clang__) && !defined(__CUDA_ARCH__)
#pragma clang fp contract(off)
#endif
  if (g.scale == 0.0f)
    return x;
#if defined(__CUDA_ARCH__)
  const float shifted = asymmetric ? __fsub_rn(x, g.zero) : x;
  float q = rintf(__fdiv_rn(shifted, g.scale));
#else
  const float shifted = asymmetric ? x - g.zero : x;
  float q = rintf(shifted / g.scale);
#endif
  const float lo = asymmetric ? 0.0f : -0.5f * levels(bits), hi = asymmetric ? levels(bits) - 1.0f : 0.5f * levels(bits) - 1.0f;
  q = fminf(hi, fmaxf(lo, q));
#if defined(__CUDA_ARCH__)
  const float value = __fmul_rn(q, g.scale);
  return asymmetric ? __fadd_rn(value, g.zero) : value;
#else
  const float value = q * g.scale;
  return asymmetric ? value + g.zero : value;
#endif
}

} // namespace zrt::fakequant

#endif // ZRT_FAKEQUANTIZE_H
