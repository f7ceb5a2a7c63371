// What a matmul runs besides cuBLASLt's call (Matmul.cu): zrt_matmul's argument checks and empty
// products, and zcc-fuse's epilogues as a matmul then the elementwise kernels (cuBLASLt's fallback).
// Kept apart from cuBLASLt so that the suite on the CPU runs it too (test/CudaOnCpu).
#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"

namespace zrt::cuda {

bool matmulHasWork(int32_t dtype, void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool accumulate,
                   cudaStream_t stream) {
  if (dtype != 0 && dtype != 1)
    fatal("zrt_matmul", "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
  if (batch <= 0 || m <= 0 || n <= 0 || (k <= 0 && accumulate))
    return false;
  if (k <= 0) { // an empty sum
    ZRT_CUDA_CHECK(cudaMemsetAsync(c, 0, batch * m * n * (dtype == 1 ? 2 : 4), stream));
    return false;
  }
  return true;
}

void matmulEpilogueUnfused(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector,
                           void *aux, void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA,
                           bool transB, bool bShared, cudaStream_t stream) {
  const int64_t rows = batch * m;
  switch (epilogue) {
  case Epilogue::Bias:
    matmul(dtype, a, b, c, batch, m, n, k, transA, transB, bShared, stream);
    biasAdd(dtype, c, vector, c, rows, n, stream);
    return;
  case Epilogue::BiasGelu: // pre (aux) = matmul + bias, c = gelu(pre)
    matmul(dtype, a, b, aux, batch, m, n, k, transA, transB, bShared, stream);
    biasAdd(dtype, aux, vector, aux, rows, n, stream);
    gelu(dtype, aux, c, rows * n, stream);
    return;
  case Epilogue::DgeluBgrad: { // c = gelu_grad(matmul, pre = aux), vector = column sums of c
    matmul(dtype, a, b, c, batch, m, n, k, transA, transB, bShared, stream);
    geluGrad(dtype, c, aux, c, rows * n, stream);
    const int64_t shape[2] = {rows, n};
    reduceSum(dtype, c, const_cast<void *>(vector), shape, 2, 1, stream);
    return;
  }
  }
}

} // namespace zrt::cuda
