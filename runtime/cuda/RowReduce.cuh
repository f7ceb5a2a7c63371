// Block-cooperative row reductions for the CUDA row kernels: one block of kRowThreads threads per
// row. Thread t reads columns t, t + kRowThreads, ... (consecutive threads, consecutive addresses:
// coalesced), keeps a serial partial, and the block combines the partials in a fixed tree (a warp
// butterfly, then the warps' results in warp order). The order depends only on the row's length, so
// a row gives the same bits on every run and every launch; it is not the CPU backend's 16-lane order
// (zrt/KernelMath.h), which the conformance tests bound with their tolerance.
#ifndef ZRT_CUDA_ROW_REDUCE_CUH
#define ZRT_CUDA_ROW_REDUCE_CUH

#include <cstdint>

namespace zrt::cuda {

constexpr int kRowThreads = 256;
constexpr int kRowWarps = kRowThreads / 32;

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};

/// Every thread's `v` combined; every thread of the block gets the same value. All threads of
/// the block must call it (it synchronizes), the same number of times.
template <class Op> __device__ float blockReduce(float v, Op op) {
  __shared__ float warpResult[kRowWarps];
  for (int offset = 16; offset > 0; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads(); // the previous reduction's readers are done with warpResult
  if (threadIdx.x % 32 == 0)
    warpResult[threadIdx.x / 32] = v;
  __syncthreads();
  float total = warpResult[0];
  for (int w = 1; w < kRowWarps; ++w)
    total = op(total, warpResult[w]);
  return total;
}

__device__ inline float blockSum(float v) { return blockReduce(v, SumOp{}); }
__device__ inline float blockMax(float v) { return blockReduce(v, MaxOp{}); }

} // namespace zrt::cuda

/// This thread's columns of the block's row.
#define ZRT_ROW_COLUMNS(c, cols) for (int64_t c = threadIdx.x; c < (cols); c += kRowThreads)

#endif // ZRT_CUDA_ROW_REDUCE_CUH
