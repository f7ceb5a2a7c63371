// Block-wise quantization on the GPU (zc.quantize / zc.dequantize): the layout and the rounding
// are zrt/Quantize.h's, so results match the CPU backend and the f64 reference bitwise. One warp
// per quantization block finds the block's largest magnitude (a maximum: the same in any order;
// a warp's shuffles need no barrier) and writes its scale and values; dequantization is
// elementwise.
#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Kernels.h"
#include "zrt/FakeQuantize.h"
#include "zrt/Quantize.h"

#include <algorithm>
#include <climits>

namespace zrt::cuda {
namespace {

constexpr int kWarp = 32;

/// This lane's columns of the warp's block.
#define ZRT_LANE_COLUMNS(c, count) for (int64_t c = threadIdx.x; c < (count); c += kWarp)

/// Thread blocks for `items` quantization blocks (each loops over items a grid's width apart).
unsigned itemBlocks(int64_t items) { return static_cast<unsigned>(items < 1 ? 1 : items > 65535 ? 65535 : items); }

template <class T>
__global__ void quantizeBlocks(const T *x, uint8_t *out, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  const int64_t blocks = quant::blocksPerRow(cols, block), stride = quant::rowBytes(cols, block, bits);
  const int64_t used = 4 * blocks + quant::valueBytes(cols, bits);
  for (int64_t item = blockIdx.x; item < rows * blocks; item += gridDim.x) {
    const int64_t row = item / blocks, b = item % blocks;
    const int64_t first = b * block, count = first + block <= cols ? block : cols - first;
    const T *src = x + row * cols + first;
    uint8_t *dst = out + row * stride;
    float amax = 0.0f;
    ZRT_LANE_COLUMNS(i, count)
    amax = fmaxf(amax, fabsf(static_cast<float>(src[i])));
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    const float scale = quant::scaleOf(amax, bits);
    if (threadIdx.x == 0)
      reinterpret_cast<float *>(dst)[b] = scale;
    uint8_t *values = dst + 4 * blocks;
    if (bits == 8) {
      ZRT_LANE_COLUMNS(i, count)
      values[first + i] = static_cast<uint8_t>(static_cast<int8_t>(quant::levelOf(static_cast<float>(src[i]), scale, bits)));
    } else {
      // Blocks start on even values: each byte is one block's.
      ZRT_LANE_COLUMNS(pair, (count + 1) / 2) {
        const int64_t i = 2 * pair;
        uint8_t byte = quant::nibble(quant::levelOf(static_cast<float>(src[i]), scale, bits));
        if (i + 1 < count)
          byte |= quant::nibble(quant::levelOf(static_cast<float>(src[i + 1]), scale, bits)) << 4;
        values[first / 2 + pair] = byte;
      }
    }
    if (b == 0) // the row's padding: zero, so equal tensors give equal bytes
      for (int64_t i = used + threadIdx.x; i < stride; i += blockDim.x)
        dst[i] = 0;
  }
}

template <class T>
__global__ void dequantizeValues(const uint8_t *in, T *y, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  const int64_t blocks = quant::blocksPerRow(cols, block), stride = quant::rowBytes(cols, block, bits);
  ZRT_FOR_EACH(e, rows * cols) {
    const int64_t row = e / cols, c = e % cols;
    const uint8_t *src = in + row * stride;
    const float scale = reinterpret_cast<const float *>(src)[c / block];
    const uint8_t *values = src + 4 * blocks;
    const int32_t level = bits == 8 ? static_cast<int32_t>(static_cast<int8_t>(values[c]))
                                    : quant::fromNibble(c % 2 ? values[c / 2] >> 4 : values[c / 2] & 0xF);
    y[e] = T(quant::dequantized(level, scale));
  }
}

/// zc.apply_mask: the gate read once per thread; off, the values pass unchanged.
template <class T>
__global__ void applyMaskValues(const T *x, const float *gate, const float *mask, T *y, int64_t n, int64_t dim,
                                int64_t inner) {
  const bool on = *gate != 0.0f;
  ZRT_FOR_EACH(i, n)
  y[i] = on ? T(static_cast<float>(x[i]) * mask[(i / inner) % dim]) : x[i];
}

/// zc.fake_quantize: a warp per group finds its extremes (order-free), then snaps its values.
template <class T>
__global__ void fakeQuantizeGroups(const T *x, const float *gate, T *y, int64_t groups, int64_t size, int64_t width,
                                   int32_t bits, bool asymmetric) {
  const bool on = *gate != 0.0f;
  // Value i of group g at fakequant::groupIndex: runs of `width` (width = size: contiguous).
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    if (!on) {
      ZRT_LANE_COLUMNS(i, size) {
        const int64_t at = fakequant::groupIndex(g, i, groups, width);
        y[at] = x[at];
      }
      continue;
    }
    float lo = INFINITY, hi = -INFINITY, amax = 0.0f;
    ZRT_LANE_COLUMNS(i, size) {
      const float v = static_cast<float>(x[fakequant::groupIndex(g, i, groups, width)]);
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
      amax = fmaxf(amax, fabsf(v));
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
      hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    }
    const fakequant::Grid grid = asymmetric ? fakequant::asymmetricGrid(lo, hi, bits) : fakequant::symmetricGrid(amax, bits);
    ZRT_LANE_COLUMNS(i, size) {
      const int64_t at = fakequant::groupIndex(g, i, groups, width);
      y[at] = T(fakequant::snapped(static_cast<float>(x[at]), grid, bits, asymmetric));
    }
  }
}

} // namespace

void fakeQuantize(int32_t dtype, const void *x, const void *gate, void *y, int64_t n, int64_t groups, int64_t width,
                  int32_t bits, bool asymmetric, cudaStream_t s) {
  if (n == 0)
    return;
  ZRT_CUDA_TYPED("zrt_fake_quantize", dtype,
                 (fakeQuantizeGroups<T><<<itemBlocks(groups), kWarp, 0, s>>>(
                     static_cast<const T *>(x), static_cast<const float *>(gate), static_cast<T *>(y), groups,
                     n / groups, width, bits, asymmetric)));
}

void applyMask(int32_t dtype, const void *x, const void *gate, const void *mask, void *y, int64_t n, int64_t dim,
               int64_t inner, cudaStream_t s) {
  if (n == 0)
    return;
  constexpr int threads = 256;
  const int grid = static_cast<int>(std::min<int64_t>(gridStrideBlocks(n, threads), 1 << 20));
  ZRT_CUDA_TYPED("zrt_apply_mask", dtype,
                 (applyMaskValues<T><<<grid, threads, 0, s>>>(static_cast<const T *>(x), static_cast<const float *>(gate),
                                                              static_cast<const float *>(mask), static_cast<T *>(y), n,
                                                              dim, inner)));
}

void quantize(int32_t dtype, const void *x, void *out, int64_t rows, int64_t cols, int64_t block, int32_t bits,
              cudaStream_t s) {
  if (rows * cols == 0)
    return;
  ZRT_CUDA_TYPED("zrt_quantize", dtype,
                 (quantizeBlocks<T><<<itemBlocks(rows * quant::blocksPerRow(cols, block)), kWarp, 0, s>>>(
                     static_cast<const T *>(x), static_cast<uint8_t *>(out), rows, cols, block, bits)));
}

void dequantize(int32_t dtype, const void *in, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits,
                cudaStream_t s) {
  if (rows * cols == 0)
    return;
  constexpr int threads = 256;
  const int64_t n = rows * cols;
  const int grid = static_cast<int>(std::min<int64_t>(gridStrideBlocks(n, threads), 1 << 20));
  ZRT_CUDA_TYPED("zrt_dequantize", dtype,
                 (dequantizeValues<T><<<grid, threads, 0, s>>>(static_cast<const uint8_t *>(in), static_cast<T *>(y),
                                                               rows, cols, block, bits)));
}

} // namespace zrt::cuda
