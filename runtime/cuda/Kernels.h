// CUDA kernels of the elementwise ops and the optimizers, on a stream; the per-element
// math is zrt/KernelMath.h, the CPU backend's too. `dtype` is the ABI's (0 f32, 1 bf16).
#ifndef ZRT_CUDA_KERNELS_H
#define ZRT_CUDA_KERNELS_H

#include <cstdint>
#include <cuda_runtime.h>

namespace zrt::cuda {

void add(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void sub(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void mul(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void scale(int32_t dtype, const void *x, void *out, int64_t n, double factor, cudaStream_t s);
void cast(int32_t srcDtype, const void *src, int32_t dstDtype, void *dst, int64_t n, cudaStream_t s);
void fillZero(int32_t dtype, void *x, int64_t n, cudaStream_t s);
void biasAdd(int32_t dtype, const void *x, const void *bias, void *out, int64_t rows, int64_t cols,
             cudaStream_t s);
void relu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void reluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
void gelu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void geluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
void adamw(float *param, int32_t gradDtype, const void *grad, float *m, float *v, void *paramBf16, int64_t n,
           double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step, cudaStream_t s);
void sgdMomentum(float *param, int32_t gradDtype, const void *grad, float *buf, void *paramBf16, int64_t n,
                 double lr, double momentum, double weightDecay, cudaStream_t s);

} // namespace zrt::cuda

#endif // ZRT_CUDA_KERNELS_H
