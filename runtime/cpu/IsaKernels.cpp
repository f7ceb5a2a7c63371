// One ISA level's instance of the compute-bound kernels. CMake compiles this file once per
// level with -DZRT_ISA=<level> and that level's -march; ZRT_ISA also names the inline
// namespace the kernel templates are instantiated in (cpu/Parallel.h), so the instances of
// different levels never merge at link time.
#include "cpu/Attention.h"
#include "cpu/Dispatch.h"
#include "cpu/Elementwise.h"
#include "cpu/IsaKernels.h"
#include "cpu/Layout.h"
#include "cpu/Normalization.h"
#include "cpu/Optimizer.h"
#include "cpu/Quantize.h"
#include "cpu/WidenedGemm.h"

#define ZRT_STRINGIFY_(x) #x
#define ZRT_STRINGIFY(x) ZRT_STRINGIFY_(x)
#define ZRT_CONCAT_(a, b) a##b
#define ZRT_CONCAT(a, b) ZRT_CONCAT_(a, b)

namespace zrt::cpu {
namespace {

void geluEntry(int32_t dtype, const void *x, void *o, int64_t n) {
  ZRT_TYPED("zrt_gelu", dtype, gelu(in<T>(x), out<T>(o), n));
}
void geluGradEntry(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  ZRT_TYPED("zrt_gelu_grad", dtype, geluGrad(in<T>(dy), in<T>(x), out<T>(dx), n));
}
void siluEntry(int32_t dtype, const void *x, void *o, int64_t n) {
  ZRT_TYPED("zrt_silu", dtype, silu(in<T>(x), out<T>(o), n));
}
void siluGradEntry(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  ZRT_TYPED("zrt_silu_grad", dtype, siluGrad(in<T>(dy), in<T>(x), out<T>(dx), n));
}
void swigluEntry(int32_t dtype, const void *gate, const void *up, void *o, int64_t n) {
  ZRT_TYPED("zrt_swiglu", dtype, swiglu(in<T>(gate), in<T>(up), out<T>(o), n));
}
void swigluGradEntry(int32_t dtype, const void *dy, const void *gate, const void *up, void *dgate, void *dup,
                     int64_t n) {
  ZRT_TYPED("zrt_swiglu_grad", dtype, swigluGrad(in<T>(dy), in<T>(gate), in<T>(up), out<T>(dgate), out<T>(dup), n));
}
void softmaxEntry(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols) {
  ZRT_TYPED("zrt_softmax", dtype, softmax(in<T>(x), out<T>(y), rows, cols));
}
void attentionEntry(int32_t dtype, const void *q, const void *k, const void *v, void *o,
                    int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                    const AttentionVariant &variant) {
  ZRT_TYPED("zrt_causal_attention", dtype,
            causalAttention(in<T>(q), in<T>(k), in<T>(v), out<T>(o), batch, time, channels, heads, kvHeads,
                            variant));
}
void attentionGradEntry(int32_t dtype, const void *dout, const void *q, const void *k,
                        const void *v, void *dq, void *dk, void *dv, int64_t batch, int64_t time,
                        int64_t channels, int64_t heads, int64_t kvHeads, const AttentionVariant &variant) {
  ZRT_TYPED("zrt_causal_attention_grad", dtype,
            causalAttentionGrad(in<T>(dout), in<T>(q), in<T>(k), in<T>(v), out<T>(dq),
                                out<T>(dk), out<T>(dv), batch, time, channels, heads, kvHeads, variant));
}

void biasAddEntry(int32_t dtype, const void *x, const void *bias, void *o, int64_t rows, int64_t cols) {
  ZRT_TYPED("zrt_bias_add", dtype, biasAdd(in<T>(x), in<T>(bias), out<T>(o), rows, cols));
}

void layernormEntry(int32_t dtype, const void *x, const void *gamma, const void *beta, void *y, int64_t rows,
                    int64_t cols, double eps) {
  ZRT_TYPED("zrt_layernorm", dtype, layernorm(in<T>(x), in<T>(gamma), in<T>(beta), out<T>(y), rows, cols, eps));
}
void addLayernormEntry(int32_t dtype, const void *a, const void *b, const void *gamma, const void *beta, void *sum,
                       void *y, int64_t rows, int64_t cols, double eps) {
  ZRT_TYPED("zrt_add_layernorm", dtype,
            addLayernorm(in<T>(a), in<T>(b), in<T>(gamma), in<T>(beta), out<T>(sum), out<T>(y), rows, cols, eps));
}
void layernormGradEntry(int32_t dtype, const void *dy, const void *x, const void *gamma, const void *residual,
                        void *dx, void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps) {
  ZRT_TYPED("zrt_layernorm_grad", dtype,
            layernormGrad(in<T>(dy), in<T>(x), in<T>(gamma), out<T>(dx), out<T>(dgamma), out<T>(dbeta), rows, cols,
                          eps, in<T>(residual)));
}
void reduceSumEntry(int32_t dtype, const void *x, void *o, const int64_t *shape, int32_t rank, int32_t axesMask) {
  ZRT_TYPED("zrt_reduce_sum", dtype, reduceSum(in<T>(x), out<T>(o), shape, rank, axesMask));
}
void adamwEntry(int32_t gradDtype, float *param, const void *grad, float *m, float *v, bf16 *paramBf16, int64_t n,
                double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step, float gradScale) {
  const AdamWConfig cfg{lr, beta1, beta2, eps, weightDecay, step};
  ZRT_TYPED("zrt_adamw", gradDtype, adamw(param, in<T>(grad), m, v, paramBf16, n, cfg, gradScale));
}
double sumOfSquaresEntry(int32_t dtype, const void *x, int64_t n) {
  double sum = 0;
  ZRT_TYPED("zrt_grad_norm", dtype, sum = sumOfSquares(in<T>(x), n));
  return sum;
}
void scaleEntry(int32_t dtype, const void *x, void *o, int64_t n, double factor) {
  ZRT_TYPED("zrt_scale", dtype, scale(in<T>(x), out<T>(o), n, factor));
}
/// No Inf or NaN in x[0, n): an all-ones exponent is one, an integer test the loop vectorizes.
bool allFiniteEntry(int32_t dtype, const void *x, int64_t n) {
  bool bad = false;
  if (dtype == ZRT_DTYPE_BF16) {
    const uint16_t *h = static_cast<const uint16_t *>(x);
#pragma omp simd reduction(| : bad)
    for (int64_t i = 0; i < n; ++i)
      bad |= (h[i] & 0x7f80u) == 0x7f80u;
  } else {
    const uint32_t *w = static_cast<const uint32_t *>(x);
#pragma omp simd reduction(| : bad)
    for (int64_t i = 0; i < n; ++i)
      bad |= (w[i] & 0x7f800000u) == 0x7f800000u;
  }
  return !bad;
}

void quantizeEntry(int32_t dtype, const void *x, void *o, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  ZRT_TYPED("zrt_quantize", dtype, quantizeRows(in<T>(x), out<uint8_t>(o), rows, cols, block, bits));
}
void dequantizeEntry(int32_t dtype, const void *q, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  ZRT_TYPED("zrt_dequantize", dtype, dequantizeRows(in<uint8_t>(q), out<T>(y), rows, cols, block, bits));
}

void fakeQuantizeEntry(int32_t dtype, const void *x, void *y, int64_t n, int64_t groups, int64_t width, int32_t bits,
                       bool asymmetric, float gate) {
  ZRT_TYPED("zrt_fake_quantize", dtype,
            fakeQuantizeGroups(in<T>(x), out<T>(y), n, groups, width, bits, asymmetric, gate));
}

} // namespace

extern const IsaKernels ZRT_CONCAT(kIsaKernels_, ZRT_ISA);
const IsaKernels ZRT_CONCAT(kIsaKernels_, ZRT_ISA) = {
    ZRT_STRINGIFY(ZRT_ISA), geluEntry, geluGradEntry, siluEntry, siluGradEntry, swigluEntry, swigluGradEntry, softmaxEntry, attentionEntry,
    attentionGradEntry, biasAddEntry, layernormEntry, addLayernormEntry, layernormGradEntry, reduceSumEntry, adamwEntry,
    sumOfSquaresEntry, scaleEntry, allFiniteEntry, quantizeEntry, dequantizeEntry, fakeQuantizeEntry, widenedGemm,
};

} // namespace zrt::cpu
