// The compute-bound CPU kernels (exp/tanh per element: gelu, silu, softmax, attention; the widened
// bf16 GEMM; bias_add, whose bf16 conversions are compute), compiled once per x86 ISA level and
// chosen once per process from the CPU's features. Other memory-bound kernels stay generic:
// wider vectors do not make them faster (scale and allFinite are here for the sanitizer build).
#ifndef ZRT_CPU_ISAKERNELS_H
#define ZRT_CPU_ISAKERNELS_H

#include <cstdint>

#include "cpu/WidenTiles.h"
#include "zrt/AttentionVariant.h"
#include "zrt/bf16.h"

namespace zrt::cpu {

/// One ISA level's entry points; same arguments as the zrt_* calls of the same name.
struct IsaKernels {
  const char *isa; // "avx512", "avx2" or "generic"
  void (*gelu)(int32_t dtype, const void *x, void *out, int64_t n);
  void (*geluGrad)(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n);
  void (*silu)(int32_t dtype, const void *x, void *out, int64_t n);
  void (*siluGrad)(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n);
  void (*swiglu)(int32_t dtype, const void *gate, const void *up, void *out, int64_t n);
  void (*swigluGrad)(int32_t dtype, const void *dy, const void *gate, const void *up, void *dgate, void *dup,
                     int64_t n);
  void (*softmax)(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols);
  void (*causalAttention)(int32_t dtype, const void *q, const void *k, const void *v, void *out,
                          int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                          const AttentionVariant &variant);
  void (*causalAttentionGrad)(int32_t dtype, const void *dout, const void *q, const void *k,
                              const void *v, void *dq, void *dk, void *dv, int64_t batch,
                              int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                              const AttentionVariant &variant);
  // Memory-bound, but in bf16 the conversions are the work: at the generic level (SSE2) GCC and
  // Clang convert an element at a time, and bias_add ran 2.4x slower in bf16 than in f32.
  void (*biasAdd)(int32_t dtype, const void *x, const void *bias, void *out, int64_t rows, int64_t cols);
  // The same for the row normalizations, the bias gradients' sums, AdamW and the gradient
  // norm's sum of squares: at the generic level they ran 1.5-2.5x slower in a bf16 step (the
  // widest level for everything together: 449 -> 407 ms at nanoGPT's shakespeare-char shape).
  void (*layernorm)(int32_t dtype, const void *x, const void *gamma, const void *beta, void *y, int64_t rows,
                    int64_t cols, double eps);
  void (*addLayernorm)(int32_t dtype, const void *a, const void *b, const void *gamma, const void *beta, void *sum,
                       void *y, int64_t rows, int64_t cols, double eps);
  // residual may be null (zrt_layernorm_grad) or added to dx (zrt_layernorm_grad_add).
  void (*layernormGrad)(int32_t dtype, const void *dy, const void *x, const void *gamma, const void *residual,
                        void *dx, void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps);
  void (*reduceSum)(int32_t dtype, const void *x, void *out, const int64_t *shape, int32_t rank, int32_t axesMask);
  void (*adamw)(int32_t gradDtype, float *param, const void *grad, float *m, float *v, bf16 *paramBf16, int64_t n,
                double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step, float gradScale);
  double (*sumOfSquares)(int32_t dtype, const void *x, int64_t n);
  // Memory-bound, here for the sanitizer build: compiled with the kernels' options (no UBSan checks of
  // each element's address), the loops over whole gradient buffers vectorize there too. The
  // communication thread's averaging after a sum (zrt_scale too) and the step's overflow scan.
  void (*scale)(int32_t dtype, const void *x, void *out, int64_t n, double factor);
  bool (*allFinite)(int32_t dtype, const void *x, int64_t n);
  // Block-wise quantization (zrt/Quantize.h): its divisions and roundings are the work.
  void (*quantize)(int32_t dtype, const void *x, void *out, int64_t rows, int64_t cols, int64_t block, int32_t bits);
  void (*dequantize)(int32_t dtype, const void *in, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits);
  void (*fakeQuantize)(int32_t dtype, const void *x, void *y, int64_t n, int64_t groups, int64_t width, int32_t bits,
                       bool asymmetric, float gate);
  // One 2-D product of the widened bf16 matmul (cpu/WidenedGemm.h).
  void (*widenedGemm)(const bf16 *a, const bf16 *b, bf16 *c, int64_t m, int64_t n, int64_t k,
                      bool transA, bool transB, const WidenTiles &tiles);
};

/// The best level this CPU runs, unless ZRT_ISA=generic|avx2|avx512 asks for another
/// (a level the CPU lacks is a fatal error, not a SIGILL later).
const IsaKernels &isaKernels();
/// The named level if this build has it and the CPU runs it, else null.
const IsaKernels *isaKernelsFor(const char *isa);

} // namespace zrt::cpu

#endif // ZRT_CPU_ISAKERNELS_H
