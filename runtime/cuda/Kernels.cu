#include "cuda/Kernels.h"

#include <algorithm>

#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "zrt/KernelMath.h"

namespace zrt::cuda {
namespace {

constexpr int kThreads = 256;

/// Grid-stride launch over n elements.
int blocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

template <class T> __device__ __forceinline__ float load(const T *p, int64_t i) { return static_cast<float>(p[i]); }
template <class T> __device__ __forceinline__ void store(T *p, int64_t i, float v) { p[i] = T(v); }

template <class T, class Op> __global__ void binaryKernel(const T *a, const T *b, T *out, int64_t n, Op op) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store(out, i, op(load(a, i), load(b, i)));
}
template <class T, class Op> __global__ void unaryKernel(const T *x, T *out, int64_t n, Op op) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store(out, i, op(load(x, i)));
}

template <class Op>
void launchBinary(const char *call, int32_t dtype, const void *a, const void *b, void *out, int64_t n, Op op,
                  cudaStream_t s) {
  if (n <= 0)
    return;
  typed(call, dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    binaryKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const T *>(a), static_cast<const T *>(b),
                                                   static_cast<T *>(out), n, op);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

template <class Op>
void launchUnary(const char *call, int32_t dtype, const void *x, void *out, int64_t n, Op op, cudaStream_t s) {
  if (n <= 0)
    return;
  typed(call, dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    unaryKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<T *>(out), n, op);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

struct Add { __device__ float operator()(float a, float b) const { return a + b; } };
struct Sub { __device__ float operator()(float a, float b) const { return a - b; } };
struct Mul { __device__ float operator()(float a, float b) const { return a * b; } };
struct Scale {
  float f;
  __device__ float operator()(float x) const { return x * f; }
};
struct Relu { __device__ float operator()(float x) const { return math::reluValue(x); } };
struct ReluGrad { __device__ float operator()(float dy, float x) const { return math::reluGradValue(dy, x); } };
struct Gelu { __device__ float operator()(float x) const { return math::geluValue(x); } };
struct GeluGrad { __device__ float operator()(float dy, float x) const { return dy * math::geluDerivative(x); } };
struct GeluErf { __device__ float operator()(float x) const { return math::geluErfValue(x); } };
struct GeluErfGrad {
  __device__ float operator()(float dy, float x) const { return dy * math::geluErfDerivative(x); }
};
struct Silu { __device__ float operator()(float x) const { return math::siluValue(x); } };
struct SiluGrad { __device__ float operator()(float dy, float x) const { return dy * math::siluDerivative(x); } };

template <class S, class D> __global__ void castKernel(const S *src, D *dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = D(static_cast<float>(src[i]));
}

template <class T> __global__ void biasAddKernel(const T *x, const T *bias, T *out, int64_t rows, int64_t cols) {
  int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store(out, i, load(x, i) + load(bias, i % cols));
}

/// silu(gate) rounded to T, then times up: zrt_silu then zrt_mul's roundings (the CPU backend's).
template <class T> __global__ void swigluKernel(const T *gate, const T *up, T *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = T(static_cast<float>(T(math::siluValue(static_cast<float>(gate[i])))) * static_cast<float>(up[i]));
}
template <class T>
__global__ void swigluGradKernel(const T *dy, const T *gate, const T *up, T *dgate, T *dup, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = static_cast<float>(gate[i]), d = static_cast<float>(dy[i]);
    const float dyUp = static_cast<float>(T(d * static_cast<float>(up[i])));
    dgate[i] = T(dyUp * math::siluDerivative(g));
    dup[i] = T(d * static_cast<float>(T(math::siluValue(g))));
  }
}

/// AdamW over a grid-stride range (zrt/KernelMath.h's element update).
template <class G>
__device__ void adamwRange(float *param, const G *grad, float *m, float *v, zrt::bf16 *paramBf16, int64_t n,
                           const math::AdamWStep &step, const float *gradScale) {
  const float scale = gradScale ? *gradScale : 1.0f; // the clip coefficient (zrt_grad_norm), or none
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float mi = m[i], vi = v[i];
    float p = math::adamwElement(param[i], static_cast<float>(grad[i]) * scale, mi, vi, step);
    m[i] = mi;
    v[i] = vi;
    param[i] = p;
    if (paramBf16)
      paramBf16[i] = zrt::bf16(p);
  }
}
template <class G>
__global__ void adamwKernel(float *param, const G *grad, float *m, float *v, zrt::bf16 *paramBf16, int64_t n,
                            math::AdamWStep step, const float *gradScale) {
  adamwRange(param, grad, m, v, paramBf16, n, step, gradScale);
}

/// The same, with the step's constants read from device memory (a graph replays it with the
/// constants of each new step written there).
template <class G>
__global__ void adamwKernelFrom(float *param, const G *grad, float *m, float *v, zrt::bf16 *paramBf16, int64_t n,
                                const math::AdamWStep *stepConstants, const float *gradScale) {
  const math::AdamWStep step = *stepConstants; // once per thread, into registers
  adamwRange(param, grad, m, v, paramBf16, n, step, gradScale);
}

template <class G>
__global__ void sgdKernel(float *param, const G *grad, float *buf, zrt::bf16 *paramBf16, int64_t n, float lr,
                          float momentum, float weightDecay, const float *gradScale) {
  const float scale = gradScale ? *gradScale : 1.0f;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float b = buf[i];
    float p = math::sgdElement(param[i], static_cast<float>(grad[i]) * scale, b, lr, momentum, weightDecay);
    buf[i] = b;
    param[i] = p;
    if (paramBf16)
      paramBf16[i] = zrt::bf16(p);
  }
}

/// Block b of the grid's share of one tensor's weighted sum of squares, in f64: a fixed
/// grid-stride order, then a fixed tree within the block (the same sum every run). A tensor of
/// fewer than kGradNormBlocks x kThreads values gets a block per kThreads of them (sumOfSquares):
/// the other partials are zero, as those blocks' sums were, so the total is the same bitwise.
template <class G>
__global__ void sumOfSquaresKernel(const G *x, int64_t n, double weight, double *partials) {
  if (blockIdx.x == 0)
    for (int b = gridDim.x + threadIdx.x; b < kGradNormBlocks; b += blockDim.x)
      partials[b] = 0;
  __shared__ double lane[kThreads];
  double sum = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double v = static_cast<float>(x[i]);
    sum += v * v;
  }
  lane[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      lane[threadIdx.x] += lane[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partials[blockIdx.x] = weight * lane[0];
}

__global__ void sumPartialsKernel(const double *partials, int64_t count, bool first, double *sum, float *local) {
  double total = first ? 0.0 : *sum;
  for (int64_t i = 0; i < count; ++i) // one thread, in order: a few thousand values
    total += partials[i];
  *sum = total;
  *local = static_cast<float>(total);
}

__global__ void gradNormFinishKernel(const float *total, double maxNorm, float *norm, float *coef, float *kept) {
  const float value = sqrtf(*total);
  *norm = value;
  *kept = value;
  *coef = math::gradClipCoefficient(value, maxNorm);
}

} // namespace

void sumOfSquares(int32_t dtype, const void *x, int64_t n, double weight, double *partials, cudaStream_t s) {
  typed("zrt_grad_norm", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    // Blocks that would have nothing to add are not launched: a bias or a norm's gain took 128
    // blocks for a few hundred values (on HIP-CPU each block's tree is nine barriers of 256 fibers).
    const int blocks = static_cast<int>(std::min<int64_t>(kGradNormBlocks, gridStrideBlocks(n, kThreads)));
    sumOfSquaresKernel<<<blocks, kThreads, 0, s>>>(static_cast<const T *>(x), n, weight, partials);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void sumPartials(const double *partials, int64_t count, bool first, double *sum, float *local, cudaStream_t s) {
  sumPartialsKernel<<<1, 1, 0, s>>>(partials, count, first, sum, local);
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void gradNormFinish(const float *total, double maxNorm, float *norm, float *coef, float *kept, cudaStream_t s) {
  gradNormFinishKernel<<<1, 1, 0, s>>>(total, maxNorm, norm, coef, kept);
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void add(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s) {
  launchBinary("zrt_add", dtype, a, b, out, n, Add{}, s);
}
void sub(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s) {
  launchBinary("zrt_sub", dtype, a, b, out, n, Sub{}, s);
}
void mul(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s) {
  launchBinary("zrt_mul", dtype, a, b, out, n, Mul{}, s);
}
void scale(int32_t dtype, const void *x, void *out, int64_t n, double factor, cudaStream_t s) {
  launchUnary("zrt_scale", dtype, x, out, n, Scale{static_cast<float>(factor)}, s);
}
void relu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s) {
  launchUnary("zrt_relu", dtype, x, out, n, Relu{}, s);
}
void reluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s) {
  launchBinary("zrt_relu_grad", dtype, dy, x, dx, n, ReluGrad{}, s);
}
void gelu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s) {
  launchUnary("zrt_gelu", dtype, x, out, n, Gelu{}, s);
}
void geluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s) {
  launchBinary("zrt_gelu_grad", dtype, dy, x, dx, n, GeluGrad{}, s);
}
void geluErf(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s) {
  launchUnary("zrt_gelu_erf", dtype, x, out, n, GeluErf{}, s);
}
void geluErfGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s) {
  launchBinary("zrt_gelu_erf_grad", dtype, dy, x, dx, n, GeluErfGrad{}, s);
}
void silu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s) {
  launchUnary("zrt_silu", dtype, x, out, n, Silu{}, s);
}
void siluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s) {
  launchBinary("zrt_silu_grad", dtype, dy, x, dx, n, SiluGrad{}, s);
}

void cast(int32_t srcDtype, const void *src, int32_t dstDtype, void *dst, int64_t n, cudaStream_t s) {
  if (n <= 0)
    return;
  typed("zrt_cast", srcDtype, [&](auto *srcTag) {
    using S = std::remove_pointer_t<decltype(srcTag)>;
    typed("zrt_cast", dstDtype, [&](auto *dstTag) {
      using D = std::remove_pointer_t<decltype(dstTag)>;
      castKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const S *>(src), static_cast<D *>(dst), n);
    });
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

namespace {
template <class U> __global__ void nonFiniteKernel(const U *bits, int64_t n, U exponent, int *flag) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if ((bits[i] & exponent) == exponent)
      *flag = 1;
}
} // namespace

void nonFinite(int32_t dtype, const void *x, int64_t n, int *flag, cudaStream_t s) {
  if (n <= 0)
    return;
  if (dtype == 1)
    nonFiniteKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const uint16_t *>(x), n, uint16_t(0x7f80), flag);
  else
    nonFiniteKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const uint32_t *>(x), n, 0x7f800000u, flag);
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void fillZero(int32_t dtype, void *x, int64_t n, cudaStream_t s) {
  if (n > 0)
    ZRT_CUDA_CHECK(cudaMemsetAsync(x, 0, n * (dtype == 1 ? 2 : 4), s));
}

void copy(int32_t dtype, const void *src, void *dst, int64_t n, cudaStream_t s) {
  if (n > 0)
    ZRT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * (dtype == 1 ? 2 : 4), cudaMemcpyDeviceToDevice, s));
}

void swiglu(int32_t dtype, const void *gate, const void *up, void *out, int64_t n, cudaStream_t s) {
  if (n <= 0)
    return;
  typed("zrt_swiglu", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swigluKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const T *>(gate), static_cast<const T *>(up),
                                                   static_cast<T *>(out), n);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}
void swigluGrad(int32_t dtype, const void *dy, const void *gate, const void *up, void *dgate, void *dup, int64_t n,
                cudaStream_t s) {
  if (n <= 0)
    return;
  typed("zrt_swiglu_grad", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swigluGradKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<const T *>(dy), static_cast<const T *>(gate),
                                                       static_cast<const T *>(up), static_cast<T *>(dgate),
                                                       static_cast<T *>(dup), n);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void biasAdd(int32_t dtype, const void *x, const void *bias, void *out, int64_t rows, int64_t cols,
             cudaStream_t s) {
  if (rows * cols <= 0)
    return;
  typed("zrt_bias_add", dtype, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    biasAddKernel<<<blocksFor(rows * cols), kThreads, 0, s>>>(static_cast<const T *>(x), static_cast<const T *>(bias),
                                                              static_cast<T *>(out), rows, cols);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void adamw(float *param, int32_t gradDtype, const void *grad, float *m, float *v, void *paramBf16, int64_t n,
           double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step,
           const float *gradScale, cudaStream_t s) {
  if (step < 1)
    fatal("zrt_adamw", "step %lld: steps count from 1", static_cast<long long>(step));
  if (n <= 0)
    return;
  math::AdamWStep constants = math::adamwStep(lr, beta1, beta2, eps, weightDecay, step);
  typed("zrt_adamw", gradDtype, [&](auto *tag) {
    using G = std::remove_pointer_t<decltype(tag)>;
    adamwKernel<<<blocksFor(n), kThreads, 0, s>>>(param, static_cast<const G *>(grad), m, v,
                                                  static_cast<zrt::bf16 *>(paramBf16), n, constants, gradScale);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void adamwFrom(float *param, int32_t gradDtype, const void *grad, float *m, float *v, void *paramBf16, int64_t n,
               const math::AdamWStep *stepConstants, const float *gradScale, cudaStream_t s) {
  if (n <= 0)
    return;
  typed("zrt_adamw", gradDtype, [&](auto *tag) {
    using G = std::remove_pointer_t<decltype(tag)>;
    adamwKernelFrom<<<blocksFor(n), kThreads, 0, s>>>(param, static_cast<const G *>(grad), m, v,
                                                      static_cast<zrt::bf16 *>(paramBf16), n, stepConstants,
                                                      gradScale);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void sgdMomentum(float *param, int32_t gradDtype, const void *grad, float *buf, void *paramBf16, int64_t n,
                 double lr, double momentum, double weightDecay, const float *gradScale, cudaStream_t s) {
  if (n <= 0)
    return;
  typed("zrt_sgd_momentum", gradDtype, [&](auto *tag) {
    using G = std::remove_pointer_t<decltype(tag)>;
    sgdKernel<<<blocksFor(n), kThreads, 0, s>>>(param, static_cast<const G *>(grad), buf,
                                                static_cast<zrt::bf16 *>(paramBf16), n, static_cast<float>(lr),
                                                static_cast<float>(momentum), static_cast<float>(weightDecay),
                                                gradScale);
  });
  ZRT_CUDA_CHECK(cudaGetLastError());
}

} // namespace zrt::cuda
