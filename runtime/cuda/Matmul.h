// Matmuls on the GPU through cuBLASLt, with the CPU backend's semantics (zrt_matmul):
// C[batch, m, n] = op(A)[batch, m, k] x op(B)[(batch,) k, n], row-major, f32 or bf16
// (bf16 inputs and output, f32 accumulation). The algorithm cuBLASLt's heuristic picks
// is cached per shape.
#ifndef ZRT_CUDA_MATMUL_H
#define ZRT_CUDA_MATMUL_H

#include <cstdint>
#include <cuda_runtime.h>

namespace zrt::cuda {

/// With `accumulate`, C += the product (cuBLASLt's beta = 1): the fused head's weight gradient
/// over its chunks.
void matmul(int32_t dtype, const void *a, const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
            bool transA, bool transB, bool bShared, cudaStream_t stream, bool accumulate = false);

/// zcc-fuse's matmuls as one cuBLASLt call with an epilogue (when cuBLASLt has one for
/// the shape; else the unfused kernels): c = matmul + bias; out = gelu(pre = matmul +
/// bias); dpre = gelu_grad(matmul, pre) with dbias = its column sums.
enum class Epilogue { Bias, BiasGelu, DgeluBgrad };
void matmulEpilogue(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector, void *aux,
                    void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB, bool bShared,
                    cudaStream_t stream);
/// The same as a matmul then the epilogue's kernels (MatmulCommon.cu): what matmulEpilogue runs
/// where cuBLASLt has no fused algorithm.
void matmulEpilogueUnfused(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector,
                           void *aux, void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA,
                           bool transB, bool bShared, cudaStream_t stream);

/// zrt_matmul's checks (a fatal error for an unknown dtype) and its empty products, whatever computes
/// it (MatmulCommon.cu): false when nothing is left to multiply, C zeroed on the stream where the
/// sum over k is empty.
bool matmulHasWork(int32_t dtype, void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool accumulate,
                   cudaStream_t stream);

} // namespace zrt::cuda

#endif // ZRT_CUDA_MATMUL_H
