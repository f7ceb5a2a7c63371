// zrt::cuda::matmul and matmulEpilogue (runtime/cuda/Matmul.h) where cuBLASLt cannot run: the
// CPU backend's matmul (its C++ entry: the C ABI's zrt_matmul is the CUDA backend's own in a
// train.bin built here), queued on the stream as cuBLASLt's would be, so the CUDA kernels around
// a matmul (the fused head's chunks, the unfused epilogues) run on the CPU as around cuBLASLt.
// cuBLASLt's own plans and fused epilogues are the GPU run's to check (scripts/gpu-check.sh).
// The f32/bf16 choice is spelled out: cpu/Dispatch.h's ZRT_TYPED lives in the per-ISA kernels'
// namespace, which this file (compiled once) is not part of.
#include "cuda/Matmul.h"

#include <vector>

#include "core/Error.h"
#include "cpu/Matmul.h"
#include "zrt/bf16.h"
#include "cuda/CudaCheck.h"

namespace zrt::cuda {

void matmul(int32_t dtype, const void *a, const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
            bool transA, bool transB, bool bShared, cudaStream_t stream, bool accumulate) {
  if (!matmulHasWork(dtype, c, batch, m, n, k, accumulate, stream))
    return;
  // cuBLASLt's beta = 1, which only the f32 head's weight gradient asks for (bf16 sums its chunks
  // in an f32 buffer of its own): a bf16 C would need cuBLASLt's single rounding, not modelled here.
  if (accumulate && dtype != 0)
    fatal("zrt_matmul", "cuda-on-cpu: accumulating into a bf16 product is not modelled (test/CudaOnCpu)");
  if (dtype != 0 && dtype != 1)
    fatal("zrt_matmul", "cuda-on-cpu: dtype %d (f32 0, bf16 1)", dtype);
  const cpu::MatmulShape shape{batch, m, n, k, transA, transB, bShared};
  cudaoncpu::enqueue(stream, [=] {
    if (dtype == 1) {
      cpu::matmul(static_cast<const bf16 *>(a), static_cast<const bf16 *>(b), static_cast<bf16 *>(c), shape);
      return;
    }
    if (!accumulate) {
      cpu::matmul(static_cast<const float *>(a), static_cast<const float *>(b), static_cast<float *>(c), shape);
      return;
    }
    const size_t count = size_t(batch * m * n);
    std::vector<float> product(count);
    cpu::matmul(static_cast<const float *>(a), static_cast<const float *>(b), product.data(), shape);
    float *out = static_cast<float *>(c);
    for (size_t i = 0; i < count; ++i)
      out[i] += product[i];
  });
}

void matmulEpilogue(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector, void *aux,
                    void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB, bool bShared,
                    cudaStream_t stream) {
  matmulEpilogueUnfused(epilogue, dtype, a, b, vector, aux, c, batch, m, n, k, transA, transB, bShared, stream);
}

} // namespace zrt::cuda
