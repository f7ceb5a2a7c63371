// What the CUDA backend's Mixture-of-Experts files share (Moe.cu: routing, dispatch, combine;
// GroupedMatmul.cu; MoeLoss.cu): launch sizes, a token's scores, a fixed-order block sum, the
// zeroing of a capacity's unfilled rows.
#ifndef ZRT_CUDA_MOECOMMON_CUH
#define ZRT_CUDA_MOECOMMON_CUH

#include <climits>
#include <cstdint>

#include "core/Error.h"
#include "cuda/Dispatch.h"

namespace zrt::cuda::moe {

constexpr int kThreads = 128;
inline int blocks(int64_t n) { return gridStrideBlocks(n, kThreads); }

/// Blocks of the placing and summing kernels.
constexpr int kScanThreads = 256;

/// One token's scores: the softmax over its E logits (its max and sum found once), or each
/// logit's sigmoid. expf and a division, as the CPU backend's: the same choice where scores are close.
struct TokenScores {
  float top = 0, sum = 1;
  bool sigmoid = false;
  template <class T> __device__ void of(const T *l, int64_t experts, bool isSigmoid) {
    sigmoid = isSigmoid;
    if (sigmoid)
      return;
    top = float(l[0]);
    for (int64_t e = 1; e < experts; ++e)
      top = fmaxf(top, float(l[e]));
    sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += expf(float(l[e]) - top);
  }
  __device__ float operator()(float logit) const {
    return sigmoid ? 1.0f / (1.0f + expf(-logit)) : expf(logit - top) / sum;
  }
};

/// The sum of a kScanThreads block's values in a fixed tree (the same bits every run); every
/// thread gets it. All threads of the block call it, the same number of times.
template <class V> __device__ V blockTreeSum(V v) {
  __shared__ V partial[kScanThreads];
  __syncthreads(); // an earlier call's readers are done
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int half = kScanThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

/// The rows of x [rows, cols] past the first `*kept`, zero (capacity mode's unfilled rows).
template <class T, class Kept> __global__ void zeroRowsPast(T *x, const Kept *kept, int64_t rows, int64_t cols) {
  const int64_t from = static_cast<int64_t>(*kept) < rows ? static_cast<int64_t>(*kept) : rows;
  ZRT_FOR_EACH(i, (rows - from) * cols) x[from * cols + i] = T(0.0f);
}

/// A grid of (x, y, z) blocks, checked against CUDA's limits.
inline dim3 tiles(const char *call, int64_t x, int64_t y, int64_t z = 1) {
  if (x < 1 || x > INT32_MAX || y < 1 || y > 65535 || z < 1 || z > 65535)
    fatal(call, "a grid of %lld x %lld x %lld tiles is outside CUDA's limits", static_cast<long long>(x),
          static_cast<long long>(y), static_cast<long long>(z));
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(y), static_cast<unsigned>(z));
}

} // namespace zrt::cuda::moe

#endif // ZRT_CUDA_MOECOMMON_CUH
