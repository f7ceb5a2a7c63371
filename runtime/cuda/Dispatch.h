// From the C ABI's dtype code to the element type of a CUDA kernel template.
#ifndef ZRT_CUDA_DISPATCH_H
#define ZRT_CUDA_DISPATCH_H

#include <cstdint>
#include <type_traits>

#include "core/Error.h"
#include "zrt/bf16.h"

namespace zrt::cuda {

/// Calls fn with a typed null pointer for `dtype` (f32, or the shared bf16 type).
template <class F> void typed(const char *call, int32_t dtype, F &&fn) {
  if (dtype == 0)
    fn(static_cast<float *>(nullptr));
  else if (dtype == 1)
    fn(static_cast<zrt::bf16 *>(nullptr));
  else
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
}

} // namespace zrt::cuda

/// `body` with T the element type of `dtype`, then the launch's error checked.
#define ZRT_CUDA_TYPED(call, dtype, body)                                                          \
  ::zrt::cuda::typed(call, dtype, [&](auto *tag) {                                                 \
    using T = std::remove_pointer_t<decltype(tag)>;                                                \
    body;                                                                                          \
  });                                                                                              \
  ZRT_CUDA_CHECK(cudaGetLastError())

/// Blocks of `threads` threads that give each of n grid-stride items a thread (at least one block).
inline int gridStrideBlocks(int64_t n, int threads) {
  return static_cast<int>(n > 0 ? (n + threads - 1) / threads : 1);
}

/// A grid-stride loop over [0, n).
#define ZRT_FOR_EACH(i, n) for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

#endif // ZRT_CUDA_DISPATCH_H
