// zrt::cuda::matmul and matmulEpilogue (runtime/cuda/Matmul.h) where cuBLASLt cannot run: the
// CPU backend's zrt_matmul, after the stream's earlier kernels (its inputs) have run, so the
// CUDA kernels around a matmul (the fused head's chunks, the unfused epilogues) run on the
// CPU as they would around cuBLASLt. cuBLASLt's own plans and fused epilogues are the GPU
// run's to check (scripts/gpu-check.sh).
#include "cuda/Matmul.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace zrt::cuda {

void matmul(int32_t dtype, const void *a, const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
            bool transA, bool transB, bool bShared, cudaStream_t stream, bool accumulate) {
  if (dtype != 0 && dtype != 1)
    fatal("zrt_matmul", "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  if (batch <= 0 || m <= 0 || n <= 0 || (k <= 0 && accumulate))
    return;
  if (hipStreamSynchronize(stream) != hipSuccess)
    fatal("zrt_matmul", "the stream failed before the matmul");
  const size_t count = size_t(batch * m * n), bytes = count * (dtype == 1 ? 2 : 4);
  if (k <= 0) {
    std::memset(c, 0, bytes);
    return;
  }
  if (!accumulate) {
    zrt_matmul(dtype, a, b, c, batch, m, n, k, transA, transB, bShared);
    return;
  }
  // cuBLASLt's beta = 1: the product in f32, added to C and rounded once, as its epilogue does.
  std::vector<unsigned char> product(bytes);
  zrt_matmul(dtype, a, b, product.data(), batch, m, n, k, transA, transB, bShared);
  if (dtype == 0) {
    float *out = static_cast<float *>(c);
    const float *p = reinterpret_cast<const float *>(product.data());
    for (size_t i = 0; i < count; ++i)
      out[i] += p[i];
  } else {
    zrt::bf16 *out = static_cast<zrt::bf16 *>(c);
    const zrt::bf16 *p = reinterpret_cast<const zrt::bf16 *>(product.data());
    for (size_t i = 0; i < count; ++i)
      out[i] = zrt::bf16(float(out[i]) + float(p[i]));
  }
}

void matmulEpilogue(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector, void *aux,
                    void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB, bool bShared,
                    cudaStream_t stream) {
  matmulEpilogueUnfused(epilogue, dtype, a, b, vector, aux, c, batch, m, n, k, transA, transB, bShared, stream);
}

} // namespace zrt::cuda
