// CUDA kernels of the elementwise ops and the optimizers, on a stream; the per-element
// math is zrt/KernelMath.h, the CPU backend's too. `dtype` is the ABI's (0 f32, 1 bf16).
#ifndef ZRT_CUDA_KERNELS_H
#define ZRT_CUDA_KERNELS_H

#include <cstdint>
#include <cuda_runtime.h>

#include "zrt/AttentionVariant.h"
#include "zrt/KernelMath.h"

namespace zrt::cuda {

void add(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void sub(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void mul(int32_t dtype, const void *a, const void *b, void *out, int64_t n, cudaStream_t s);
void scale(int32_t dtype, const void *x, void *out, int64_t n, double factor, cudaStream_t s);
void cast(int32_t srcDtype, const void *src, int32_t dstDtype, void *dst, int64_t n, cudaStream_t s);
void fillZero(int32_t dtype, void *x, int64_t n, cudaStream_t s);
void copy(int32_t dtype, const void *src, void *dst, int64_t n, cudaStream_t s);
/// Sets `*flag` (device memory) to 1 when x holds a NaN or an Inf.
void nonFinite(int32_t dtype, const void *x, int64_t n, int *flag, cudaStream_t s);
void biasAdd(int32_t dtype, const void *x, const void *bias, void *out, int64_t rows, int64_t cols,
             cudaStream_t s);
void relu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void reluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
void gelu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void geluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
/// The exact (erf) GELU (zrt_gelu_erf).
void geluErf(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void geluErfGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
void silu(int32_t dtype, const void *x, void *out, int64_t n, cudaStream_t s);
void swiglu(int32_t dtype, const void *gate, const void *up, void *out, int64_t n, cudaStream_t s);
void swigluGrad(int32_t dtype, const void *dy, const void *gate, const void *up, void *dgate, void *dup, int64_t n,
                cudaStream_t s);
void siluGrad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n, cudaStream_t s);
void adamw(float *param, int32_t gradDtype, const void *grad, float *m, float *v, void *paramBf16, int64_t n,
           double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step,
           const float *gradScale, cudaStream_t s);
/// AdamW with the step's constants (zrt/KernelMath.h's AdamWStep) in device memory: what a step
/// graph replays, the constants rewritten before each launch.
void adamwFrom(float *param, int32_t gradDtype, const void *grad, float *m, float *v, void *paramBf16, int64_t n,
               const math::AdamWStep *stepConstants, const float *gradScale, cudaStream_t s);
void sgdMomentum(float *param, int32_t gradDtype, const void *grad, float *buf, void *paramBf16, int64_t n,
                 double lr, double momentum, double weightDecay, const float *gradScale, cudaStream_t s);
/// zrt_grad_norm's work on the stream: `weight` x one tensor's sum of squares (f64, a fixed
/// order) as kGradNormBlocks partial sums, then `*sum` = the sum of `count` partials in order,
/// after the previous `*sum` unless `first`, and `*local` = it in f32.
constexpr int kGradNormBlocks = 128;
void sumOfSquares(int32_t dtype, const void *x, int64_t n, double weight, double *partials, cudaStream_t s);
void sumPartials(const double *partials, int64_t count, bool first, double *sum, float *local, cudaStream_t s);
/// norm = sqrt(*total), coef = the clip coefficient (zrt/KernelMath.h), and a copy of the norm.
void gradNormFinish(const float *total, double maxNorm, float *norm, float *coef, float *kept, cudaStream_t s);

} // namespace zrt::cuda

#endif // ZRT_CUDA_KERNELS_H

namespace zrt::cuda {

// Row-wise ops: a block per row (RowReduce.cuh), the CPU backend's elementwise math (zrt/KernelMath.h).
void softmax(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols, cudaStream_t s);
void softmaxGrad(int32_t dtype, const void *dy, const void *y, void *dx, int64_t rows, int64_t cols, cudaStream_t s);
void layernorm(int32_t dtype, const void *x, const void *gamma, const void *beta, void *y, int64_t rows,
               int64_t cols, double eps, cudaStream_t s);
void layernormGrad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx, void *dgamma,
                   void *dbeta, int64_t rows, int64_t cols, double eps, cudaStream_t s);
/// zc.add_layernorm and zc.layernorm_grad_add: the residual stream's add with its layernorm.
void addLayernorm(int32_t dtype, const void *a, const void *b, const void *gamma, const void *beta, void *sum, void *y,
                  int64_t rows, int64_t cols, double eps, cudaStream_t s);
void layernormGradAdd(int32_t dtype, const void *dy, const void *x, const void *gamma, const void *residual, void *dx,
                      void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps, cudaStream_t s);
/// gainOffset: the gain is gainOffset + gamma (zc.rmsnorm's gain_offset, Gemma's 1 + weight).
void rmsnorm(int32_t dtype, const void *x, const void *gamma, void *y, int64_t rows, int64_t cols, double eps,
             double gainOffset, cudaStream_t s);
void rmsnormGrad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx, void *dgamma, int64_t rows,
                 int64_t cols, double eps, double gainOffset, cudaStream_t s);
/// Rotary position embedding on [batch, time, heads x D] (zc.rotary); inverse rotates back.
/// `rotaryDims`: the rotated channels of each head (0: all; zrt_rotary checks them: even, at
/// most the head); the rest pass through.
void rotary(int32_t dtype, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
            double theta, bool inverse, int64_t rotaryDims, cudaStream_t s);
/// The same at the global positions of context rank `rank` of `ranks` (zrt_rotary_context): its
/// `time` tokens are chunks rank and 2 ranks - 1 - rank of the sequence, time / 2 tokens each.
void rotaryContext(int32_t dtype, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                   double theta, bool inverse, int64_t rotaryDims, int64_t rank, int64_t ranks, cudaStream_t s);
/// Losses write a float scalar; out-of-range labels set `*badLabel` (device memory) to 1.
/// `softcap` > 0: the cross-entropies read softcap tanh(logit / softcap) (zrt_abi.def).
void crossEntropy(int32_t dtype, const void *logits, const int32_t *labels, float *loss, int64_t rows,
                  int64_t classes, double softcap, int *badLabel, cudaStream_t s);
void crossEntropyGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *labels, void *dlogits,
                      int64_t rows, int64_t classes, double softcap, int *badLabel, cudaStream_t s);
/// zc.matmul_cross_entropy: the head's logits, loss and both gradients, chunkRows rows at a time
/// in `workspace` (zrt/MatmulCrossEntropy.h); the CPU backend's calls and row arithmetic.
void matmulCrossEntropy(int32_t dtype, const void *x, const void *w, const int32_t *labels, const float *dloss,
                        float *loss, void *dx, void *dw, void *workspace, int64_t rows, int64_t classes,
                        int64_t channels, bool transW, int64_t chunkRows, double softcap, int *badLabel,
                        cudaStream_t s);
/// zc.matmul_cross_entropy_loss: the same head's loss alone (a forward-only function's).
void matmulCrossEntropyLoss(int32_t dtype, const void *x, const void *w, const int32_t *labels, float *loss,
                            void *workspace, int64_t rows, int64_t classes, int64_t channels, bool transW,
                            int64_t chunkRows, double softcap, int *badLabel, cudaStream_t s);
void mse(int32_t dtype, const void *pred, const void *target, float *loss, int64_t n, cudaStream_t s);
void mseGrad(int32_t dtype, const float *dloss, const void *pred, const void *target, void *dpred, int64_t n,
             cudaStream_t s);
/// The table's rows: [first, first + rows) of a `total`-row vocabulary (tensor parallelism's
/// slice; {0, V, V} without it).
struct VocabSlice {
  int64_t first, rows, total;
};
/// An id outside [0, total) sets `*badId`; one of another rank's rows reads zeros.
void embedding(int32_t dtype, const void *table, const int32_t *ids, void *out, int64_t count, VocabSlice vocab,
               int64_t channels, int *badId, cudaStream_t s);
void embeddingGrad(int32_t dtype, const void *dy, const int32_t *ids, void *dtable, int64_t count, VocabSlice vocab,
                   int64_t channels, cudaStream_t s);
/// The vocabulary-parallel cross-entropy's per-row statistics (device arrays of `rows`).
struct VocabRowStats {
  float *maxima, *sums, *labelLogits;
};
/// Step 1: each row's maximum over this rank's classes.
void vocabRowMaxima(int32_t dtype, const void *logits, float *maxima, int64_t rows, int64_t classes, double softcap,
                    cudaStream_t s);
/// Step 2, from every rank's maxima (`gathered`, ranks x rows): the row's maximum, this rank's
/// sum of exp(logit - max) and the label's logit where this rank holds it (0 elsewhere).
void vocabSumExp(int32_t dtype, const void *logits, const int32_t *labels, const float *gathered, int ranks,
                 VocabRowStats stats, int64_t rows, VocabSlice vocab, double softcap, int *badLabel, cudaStream_t s);
/// Step 3, once the sums and labels' logits are summed over the ranks: the mean loss, or the gradient.
void vocabLoss(VocabRowStats stats, int64_t rows, float *loss, cudaStream_t s);
void vocabGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *labels, VocabRowStats stats,
               void *dlogits, int64_t rows, VocabSlice vocab, double softcap, cudaStream_t s);
/// q, out: [batch, time, channels = heads x D]; k, v: [batch, time, kvHeads x D].
/// `variant`: the scale, soft-cap and sliding window (zrt/AttentionVariant.h).
void causalAttention(int32_t dtype, const void *q, const void *k, const void *v, void *out, int64_t batch,
                     int64_t time, int64_t channels, int64_t heads, int64_t kvHeads, const AttentionVariant &variant,
                     cudaStream_t s);
void causalAttentionGrad(int32_t dtype, const void *dout, const void *q, const void *k, const void *v, void *dq,
                         void *dk, void *dv, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                         int64_t kvHeads, const AttentionVariant &variant, cudaStream_t s);

// Layout ops: shapes are host arrays of `rank` extents (at most 8).
void reduceSum(int32_t dtype, const void *x, void *out, const int64_t *shape, int rank, int32_t axesMask,
               cudaStream_t s);
void transpose(int32_t dtype, const void *x, void *out, const int64_t *shape, int rank, const int64_t *perm,
               cudaStream_t s);
void slice(int32_t dtype, const void *x, const int64_t *xShape, void *out, const int64_t *outShape, int rank,
           const int64_t *offsets, cudaStream_t s);
void insert(int32_t dtype, const void *box, const int64_t *boxShape, void *dst, const int64_t *dstShape, int rank,
            const int64_t *offsets, cudaStream_t s);

// Block-wise quantization (zrt/Quantize.h): x [rows, cols] to rows of quantized bytes and back.
void quantize(int32_t dtype, const void *x, void *out, int64_t rows, int64_t cols, int64_t block, int32_t bits,
              cudaStream_t s);
void dequantize(int32_t dtype, const void *in, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits,
                cudaStream_t s);
// Compression training's fake quantization (zrt/FakeQuantize.h); `gate` is a device f32.
void fakeQuantize(int32_t dtype, const void *x, const void *gate, void *y, int64_t n, int64_t groups, int64_t width,
                  int32_t bits, bool asymmetric, cudaStream_t s);
// Pruning: y[i] = *gate != 0 ? x[i] * mask[(i / inner) % dim] : x[i] (mask f32, `gate` a device f32).
void applyMask(int32_t dtype, const void *x, const void *gate, const void *mask, void *y, int64_t n, int64_t dim,
               int64_t inner, cudaStream_t s);

} // namespace zrt::cuda
