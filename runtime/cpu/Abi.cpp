// The extern "C" entry points of zrt_abi.def for the CPU backend: check the dtype, then
// call the typed kernel. The signatures come from zrt.h, so a definition that drifts from
// the .def does not compile.
#include "zrt/zrt.h"

#include <cmath>
#include <cstring>

#include "core/Communicator.h"
#include "core/Error.h"
#include "core/RotaryDims.h"
#include "core/Trace.h"
#include "cpu/Attention.h"
#include "cpu/Bucket.h"
#include "cpu/Dispatch.h"
#include "cpu/Elementwise.h"
#include "cpu/Embedding.h"
#include "cpu/IsaKernels.h"
#include "cpu/Layout.h"
#include "cpu/Loss.h"
#include "cpu/Matmul.h"
#include "cpu/MatmulCrossEntropy.h"
#include "cpu/Normalization.h"
#include "cpu/Optimizer.h"
#include "cpu/Rotary.h"

using namespace zrt;
using namespace zrt::cpu;

namespace {
/// zc.grad_norm's last norm, for train.bin's log (zrt_last_grad_norm).
double &lastGradNorm() {
  static double norm = std::nan("");
  return norm;
}

/// The gradient norm's sums between zrt_grad_norm_add, _reduce and _finish: this rank's (its
/// programs' adds since the last reduce) and the mesh's (the last reduce's, until the next add).
struct GradNormSums {
  double local = 0;
  double total = 0;
  bool reduced = false;
};
GradNormSums &gradNormSums() {
  static GradNormSums sums;
  return sums;
}

/// This rank's part of zc.grad_norm: sum over its tensors of weight x sum of squares (f64), traced as
/// compute (the gather that follows is a collective's).
double weightedSumOfSquares(int64_t count, const void *const *grads, const int64_t *numels, const int64_t *dtypes,
                            const double *weights) {
  TraceScope trace("zrt_grad_norm", TraceTrack::Compute);
  double local = 0;
  for (int64_t i = 0; i < count; ++i) {
    double sum = 0;
    sum = isaKernels().sumOfSquares(static_cast<int32_t>(dtypes[i]), grads[i], numels[i]);
    local += weights[i] * sum;
  }
  return local;
}
} // namespace

namespace {
void checkCount(const char *call, int64_t n) {
  if (n < 0)
    fatal(call, "negative element count %lld", static_cast<long long>(n));
}
void checkQuantization(const char *call, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  if (bits != 8 && bits != 4)
    fatal(call, "bits is %d: 8 or 4", bits);
  if (block <= 0 || (bits == 4 && block % 2))
    fatal(call, "block of %lld values: positive%s", static_cast<long long>(block), bits == 4 ? " and even for 4 bits" : "");
  if (rows < 0 || cols < 0)
    fatal(call, "negative shape [%lld, %lld]", static_cast<long long>(rows), static_cast<long long>(cols));
}

// zrt_copy and zrt_fill_zero move bytes: memcpy and memset of 64 KiB chunks over the threads, on
// several from 128 KiB (an element loop ran scalar in the sanitizer build, with UBSan's checks of
// each address; ASan checks a memcpy's ranges once).
constexpr int64_t kByteChunk = 1 << 16;
template <class F> void forEachByteChunk(int64_t bytes, F &&body) {
  parallelFor((bytes + kByteChunk - 1) / kByteChunk, 2,
              [&](int64_t c) { body(c * kByteChunk, std::min(bytes, (c + 1) * kByteChunk)); });
}
void copyBytes(const void *src, void *dst, int64_t bytes) {
  forEachByteChunk(bytes, [&](int64_t first, int64_t end) {
    std::memcpy(static_cast<char *>(dst) + first, static_cast<const char *>(src) + first, end - first);
  });
}
void zeroBytes(void *dst, int64_t bytes) {
  forEachByteChunk(bytes,
                   [&](int64_t first, int64_t end) { std::memset(static_cast<char *>(dst) + first, 0, end - first); });
}
} // namespace

extern "C" {

void zrt_add(int32_t dtype, const void *a, const void *b, void *o, int64_t n) {
  TraceScope trace("zrt_add", TraceTrack::Compute);
  checkCount("zrt_add", n);
  ZRT_TYPED("zrt_add", dtype, add(in<T>(a), in<T>(b), out<T>(o), n));
}
void zrt_sub(int32_t dtype, const void *a, const void *b, void *o, int64_t n) {
  TraceScope trace("zrt_sub", TraceTrack::Compute);
  checkCount("zrt_sub", n);
  ZRT_TYPED("zrt_sub", dtype, sub(in<T>(a), in<T>(b), out<T>(o), n));
}
void zrt_mul(int32_t dtype, const void *a, const void *b, void *o, int64_t n) {
  TraceScope trace("zrt_mul", TraceTrack::Compute);
  checkCount("zrt_mul", n);
  ZRT_TYPED("zrt_mul", dtype, mul(in<T>(a), in<T>(b), out<T>(o), n));
}
void zrt_scale(int32_t dtype, const void *x, void *o, int64_t n, double factor) {
  TraceScope trace("zrt_scale", TraceTrack::Compute);
  checkCount("zrt_scale", n);
  isaKernels().scale(dtype, x, o, n, factor);
}
void zrt_cast(int32_t srcDtype, const void *src, int32_t dstDtype, void *dst, int64_t n) {
  TraceScope trace("zrt_cast", TraceTrack::Compute);
  checkCount("zrt_cast", n);
  dispatch("zrt_cast", srcDtype, [&](auto *srcTag) {
    using S = std::remove_pointer_t<decltype(srcTag)>;
    ZRT_TYPED("zrt_cast", dstDtype, cast(in<S>(src), out<T>(dst), n));
  });
}
void zrt_fill_zero(int32_t dtype, void *x, int64_t n) {
  TraceScope trace("zrt_fill_zero", TraceTrack::Compute);
  checkCount("zrt_fill_zero", n);
  // Zero is all-zero bits in f32 and bf16.
  ZRT_TYPED("zrt_fill_zero", dtype, zeroBytes(x, n * static_cast<int64_t>(sizeof(T))));
}
void zrt_copy(int32_t dtype, const void *src, void *dst, int64_t n) {
  TraceScope trace("zrt_copy", TraceTrack::Compute);
  checkCount("zrt_copy", n);
  ZRT_TYPED("zrt_copy", dtype, copyBytes(src, dst, n * static_cast<int64_t>(sizeof(T))));
}
void zrt_silu(int32_t dtype, const void *x, void *o, int64_t n) {
  TraceScope trace("zrt_silu", TraceTrack::Compute);
  checkCount("zrt_silu", n);
  isaKernels().silu(dtype, x, o, n);
}
void zrt_silu_grad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  TraceScope trace("zrt_silu_grad", TraceTrack::Compute);
  checkCount("zrt_silu_grad", n);
  isaKernels().siluGrad(dtype, dy, x, dx, n);
}
void zrt_swiglu(int32_t dtype, const void *gate, const void *up, void *o, int64_t n) {
  TraceScope trace("zrt_swiglu", TraceTrack::Compute);
  checkCount("zrt_swiglu", n);
  isaKernels().swiglu(dtype, gate, up, o, n);
}
void zrt_swiglu_grad(int32_t dtype, const void *dy, const void *gate, const void *up, void *dgate, void *dup,
                     int64_t n) {
  TraceScope trace("zrt_swiglu_grad", TraceTrack::Compute);
  checkCount("zrt_swiglu_grad", n);
  isaKernels().swigluGrad(dtype, dy, gate, up, dgate, dup, n);
}
void zrt_bias_add(int32_t dtype, const void *x, const void *bias, void *o, int64_t rows,
                  int64_t cols) {
  TraceScope trace("zrt_bias_add", TraceTrack::Compute);
  isaKernels().biasAdd(dtype, x, bias, o, rows, cols);
}
void zrt_relu(int32_t dtype, const void *x, void *o, int64_t n) {
  TraceScope trace("zrt_relu", TraceTrack::Compute);
  ZRT_TYPED("zrt_relu", dtype, relu(in<T>(x), out<T>(o), n));
}
void zrt_relu_grad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  TraceScope trace("zrt_relu_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_relu_grad", dtype, reluGrad(in<T>(dy), in<T>(x), out<T>(dx), n));
}
void zrt_quantize(int32_t dtype, const void *x, void *o, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  TraceScope trace("zrt_quantize", TraceTrack::Compute);
  checkQuantization("zrt_quantize", rows, cols, block, bits);
  isaKernels().quantize(dtype, x, o, rows, cols, block, bits);
}
void zrt_fake_quantize(int32_t dtype, const void *x, const void *gate, void *y, int64_t n, int64_t groups, int64_t width,
                       int32_t bits, int32_t asymmetric) {
  TraceScope trace("zrt_fake_quantize", TraceTrack::Compute);
  if (bits < 2 || bits > 8)
    fatal("zrt_fake_quantize", "bits is %d: 2 to 8", bits);
  if (n < 0 || groups < 1 || n % groups || width < 1 || (n / groups) % width)
    fatal("zrt_fake_quantize", "%lld values do not make %lld equal groups of runs of %lld", static_cast<long long>(n),
          static_cast<long long>(groups), static_cast<long long>(width));
  if (!gate)
    fatal("zrt_fake_quantize", "gate is null");
  isaKernels().fakeQuantize(dtype, x, y, n, groups, width, bits, asymmetric != 0, *static_cast<const float *>(gate));
}
void zrt_apply_mask(int32_t dtype, const void *x, const void *gate, const void *mask, void *y, int64_t n, int64_t dim,
                    int64_t inner) {
  TraceScope trace("zrt_apply_mask", TraceTrack::Compute);
  checkCount("zrt_apply_mask", n);
  if (!gate || !mask || dim < 1 || inner < 1)
    fatal("zrt_apply_mask", "gate %p, mask %p, %lld mask values of %lld each", gate, mask, static_cast<long long>(dim),
          static_cast<long long>(inner));
  const bool on = *static_cast<const float *>(gate) != 0.0f; // off before the schedule's offset
  ZRT_TYPED("zrt_apply_mask", dtype, {
    if (on)
      applyMask(in<T>(x), static_cast<const float *>(mask), out<T>(y), n, dim, inner);
    else if (x != y)
      std::copy(in<T>(x), in<T>(x) + n, out<T>(y));
  });
}
void zrt_dequantize(int32_t dtype, const void *q, void *y, int64_t rows, int64_t cols, int64_t block, int32_t bits) {
  TraceScope trace("zrt_dequantize", TraceTrack::Compute);
  checkQuantization("zrt_dequantize", rows, cols, block, bits);
  isaKernels().dequantize(dtype, q, y, rows, cols, block, bits);
}
void zrt_gelu(int32_t dtype, const void *x, void *o, int64_t n) {
  TraceScope trace("zrt_gelu", TraceTrack::Compute);
  checkCount("zrt_gelu", n);
  isaKernels().gelu(dtype, x, o, n);
}
void zrt_gelu_grad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  TraceScope trace("zrt_gelu_grad", TraceTrack::Compute);
  checkCount("zrt_gelu_grad", n);
  isaKernels().geluGrad(dtype, dy, x, dx, n);
}
void zrt_gelu_erf(int32_t dtype, const void *x, void *o, int64_t n) {
  TraceScope trace("zrt_gelu_erf", TraceTrack::Compute);
  checkCount("zrt_gelu_erf", n);
  ZRT_TYPED("zrt_gelu_erf", dtype, geluErf(in<T>(x), out<T>(o), n));
}
void zrt_gelu_erf_grad(int32_t dtype, const void *dy, const void *x, void *dx, int64_t n) {
  TraceScope trace("zrt_gelu_erf_grad", TraceTrack::Compute);
  checkCount("zrt_gelu_erf_grad", n);
  ZRT_TYPED("zrt_gelu_erf_grad", dtype, geluErfGrad(in<T>(dy), in<T>(x), out<T>(dx), n));
}

void zrt_softmax(int32_t dtype, const void *x, void *y, int64_t rows, int64_t cols) {
  TraceScope trace("zrt_softmax", TraceTrack::Compute);
  isaKernels().softmax(dtype, x, y, rows, cols);
}
void zrt_softmax_grad(int32_t dtype, const void *dy, const void *y, void *dx, int64_t rows,
                      int64_t cols) {
  TraceScope trace("zrt_softmax_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_softmax_grad", dtype, softmaxGrad(in<T>(dy), in<T>(y), out<T>(dx), rows, cols));
}
void zrt_layernorm(int32_t dtype, const void *x, const void *gamma, const void *beta, void *y,
                   int64_t rows, int64_t cols, double eps) {
  TraceScope trace("zrt_layernorm", TraceTrack::Compute);
  isaKernels().layernorm(dtype, x, gamma, beta, y, rows, cols, eps);
}
void zrt_layernorm_grad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx,
                        void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps) {
  TraceScope trace("zrt_layernorm_grad", TraceTrack::Compute);
  isaKernels().layernormGrad(dtype, dy, x, gamma, nullptr, dx, dgamma, dbeta, rows, cols, eps);
}
void zrt_add_layernorm(int32_t dtype, const void *a, const void *b, const void *gamma, const void *beta, void *sum,
                       void *y, int64_t rows, int64_t cols, double eps) {
  TraceScope trace("zrt_add_layernorm", TraceTrack::Compute);
  isaKernels().addLayernorm(dtype, a, b, gamma, beta, sum, y, rows, cols, eps);
}
void zrt_layernorm_grad_add(int32_t dtype, const void *dy, const void *x, const void *gamma, const void *residual,
                            void *dx, void *dgamma, void *dbeta, int64_t rows, int64_t cols, double eps) {
  TraceScope trace("zrt_layernorm_grad_add", TraceTrack::Compute);
  isaKernels().layernormGrad(dtype, dy, x, gamma, residual, dx, dgamma, dbeta, rows, cols, eps);
}
void zrt_rmsnorm(int32_t dtype, const void *x, const void *gamma, void *y, int64_t rows, int64_t cols, double eps,
                 double gainOffset) {
  TraceScope trace("zrt_rmsnorm", TraceTrack::Compute);
  ZRT_TYPED("zrt_rmsnorm", dtype, rmsnorm(in<T>(x), in<T>(gamma), out<T>(y), rows, cols, eps, gainOffset));
}
void zrt_rmsnorm_grad(int32_t dtype, const void *dy, const void *x, const void *gamma, void *dx, void *dgamma,
                      int64_t rows, int64_t cols, double eps, double gainOffset) {
  TraceScope trace("zrt_rmsnorm_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_rmsnorm_grad", dtype,
            rmsnormGrad(in<T>(dy), in<T>(x), in<T>(gamma), out<T>(dx), out<T>(dgamma), rows, cols, eps, gainOffset));
}

static void checkHeads(const char *call, int64_t channels, int64_t heads) {
  if (heads <= 0 || channels % heads != 0)
    fatal(call, "%lld channels are not divisible into %lld heads",
          static_cast<long long>(channels), static_cast<long long>(heads));
}
void zrt_rotary(int32_t dtype, const void *x, void *y, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                double theta, int32_t inverse, int64_t rotaryDims) {
  TraceScope trace("zrt_rotary", TraceTrack::Compute);
  checkRotaryDims("zrt_rotary", channels, heads, rotaryDims);
  ZRT_TYPED("zrt_rotary", dtype,
            rotary(in<T>(x), out<T>(y), batch, time, channels, heads, theta, inverse != 0, nullptr, rotaryDims));
}
/// Query heads split into groups of the key/value heads (grouped-query attention).
static void checkKvHeads(const char *call, int64_t heads, int64_t kvHeads) {
  if (kvHeads <= 0 || heads % kvHeads != 0)
    fatal(call, "%lld query heads do not split into groups of %lld key/value heads", static_cast<long long>(heads),
          static_cast<long long>(kvHeads));
}
/// The scale and the cap are positive or 0 (absent), the window a count of keys or 0.
static AttentionVariant checkedVariant(const char *call, double scale, double softcap, int64_t window) {
  if (!(scale >= 0.0 && std::isfinite(scale)) || !(softcap >= 0.0 && std::isfinite(softcap)) || window < 0)
    fatal(call, "bad attention variant (scale %g, softcap %g, window %lld)", scale, softcap,
          static_cast<long long>(window));
  return AttentionVariant{scale, softcap, window};
}
void zrt_causal_attention(int32_t dtype, const void *q, const void *k, const void *v, void *o,
                          int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                          double scale, double softcap, int64_t window) {
  TraceScope trace("zrt_causal_attention", TraceTrack::Compute);
  checkHeads("zrt_causal_attention", channels, heads);
  checkKvHeads("zrt_causal_attention", heads, kvHeads);
  isaKernels().causalAttention(dtype, q, k, v, o, batch, time, channels, heads, kvHeads,
                               checkedVariant("zrt_causal_attention", scale, softcap, window));
}
void zrt_causal_attention_grad(int32_t dtype, const void *dout, const void *q, const void *k,
                               const void *v, void *dq, void *dk, void *dv, int64_t batch,
                               int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                               double scale, double softcap, int64_t window) {
  TraceScope trace("zrt_causal_attention_grad", TraceTrack::Compute);
  checkHeads("zrt_causal_attention_grad", channels, heads);
  checkKvHeads("zrt_causal_attention_grad", heads, kvHeads);
  isaKernels().causalAttentionGrad(dtype, dout, q, k, v, dq, dk, dv, batch, time, channels, heads, kvHeads,
                                   checkedVariant("zrt_causal_attention_grad", scale, softcap, window));
}

void zrt_matmul(int32_t dtype, const void *a, const void *b, void *c, int64_t batch, int64_t m,
                int64_t n, int64_t k, int32_t transA, int32_t transB, int32_t bShared) {
  TraceScope trace("zrt_matmul", TraceTrack::Compute);
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    fatal("zrt_matmul", "negative size (batch %lld, m %lld, n %lld, k %lld)",
          static_cast<long long>(batch), static_cast<long long>(m), static_cast<long long>(n),
          static_cast<long long>(k));
  MatmulShape shape{batch, m, n, k, transA != 0, transB != 0, bShared != 0};
  ZRT_TYPED("zrt_matmul", dtype, matmul(in<T>(a), in<T>(b), out<T>(c), shape));
}

// The fused matmuls run the unfused kernels in the same order: bitwise the same results.
void zrt_matmul_bias(int32_t dtype, const void *a, const void *b, const void *bias, void *c, int64_t batch, int64_t m,
                     int64_t n, int64_t k, int32_t transA, int32_t transB, int32_t bShared) {
  zrt_matmul(dtype, a, b, c, batch, m, n, k, transA, transB, bShared);
  zrt_bias_add(dtype, c, bias, c, batch * m, n);
}
void zrt_matmul_bias_gelu(int32_t dtype, const void *a, const void *b, const void *bias, void *pre, void *o,
                          int64_t batch, int64_t m, int64_t n, int64_t k, int32_t transA, int32_t transB,
                          int32_t bShared) {
  zrt_matmul_bias(dtype, a, b, bias, pre, batch, m, n, k, transA, transB, bShared);
  zrt_gelu(dtype, pre, o, batch * m * n);
}
void zrt_matmul_dgelu_bgrad(int32_t dtype, const void *a, const void *b, const void *pre, void *dpre, void *dbias,
                            int64_t batch, int64_t m, int64_t n, int64_t k, int32_t transA, int32_t transB,
                            int32_t bShared) {
  zrt_matmul(dtype, a, b, dpre, batch, m, n, k, transA, transB, bShared);
  zrt_gelu_grad(dtype, dpre, pre, dpre, batch * m * n);
  const int64_t shape[2] = {batch * m, n};
  zrt_reduce_sum(dtype, dpre, dbias, shape, 2, /*axes_mask=*/1);
}
void zrt_embedding(int32_t dtype, const void *table, const void *ids, void *o, int64_t count,
                   int64_t vocab, int64_t channels) {
  TraceScope trace("zrt_embedding", TraceTrack::Compute);
  ZRT_TYPED("zrt_embedding", dtype,
            embedding(in<T>(table), in<int32_t>(ids), out<T>(o), count, VocabRows{0, vocab, vocab}, channels));
}
void zrt_embedding_grad(int32_t dtype, const void *dy, const void *ids, void *dtable,
                        int64_t count, int64_t vocab, int64_t channels) {
  TraceScope trace("zrt_embedding_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_embedding_grad", dtype,
            embeddingGrad(in<T>(dy), in<int32_t>(ids), out<T>(dtable), count, VocabRows{0, vocab, vocab}, channels));
}
void zrt_cross_entropy(int32_t dtype, const void *logits, const void *labels, void *loss,
                       int64_t rows, int64_t classes, double softcap) {
  TraceScope trace("zrt_cross_entropy", TraceTrack::Compute);
  ZRT_TYPED("zrt_cross_entropy", dtype,
            crossEntropy(in<T>(logits), in<int32_t>(labels), out<float>(loss), rows, classes, softcap));
}
void zrt_cross_entropy_grad(int32_t dtype, const void *dloss, const void *logits,
                            const void *labels, void *dlogits, int64_t rows, int64_t classes, double softcap) {
  TraceScope trace("zrt_cross_entropy_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_cross_entropy_grad", dtype,
            crossEntropyGrad(in<float>(dloss), in<T>(logits), in<int32_t>(labels),
                             out<T>(dlogits), rows, classes, softcap));
}
void zrt_matmul_cross_entropy(int32_t dtype, const void *x, const void *w, const void *labels, const void *dloss,
                              void *loss, void *dx, void *dw, void *workspace, int64_t rows, int64_t classes,
                              int64_t channels, int32_t transW, int64_t chunkRows, double softcap) {
  TraceScope trace("zrt_matmul_cross_entropy", TraceTrack::Compute);
  ZRT_TYPED("zrt_matmul_cross_entropy", dtype,
            matmulCrossEntropy(in<T>(x), in<T>(w), in<int32_t>(labels), in<float>(dloss), out<float>(loss),
                               out<T>(dx), out<T>(dw), workspace, rows, classes, channels, transW != 0, chunkRows,
                               softcap));
}
void zrt_matmul_cross_entropy_loss(int32_t dtype, const void *x, const void *w, const void *labels, void *loss,
                                   void *workspace, int64_t rows, int64_t classes, int64_t channels, int32_t transW,
                                   int64_t chunkRows, double softcap) {
  TraceScope trace("zrt_matmul_cross_entropy_loss", TraceTrack::Compute);
  ZRT_TYPED("zrt_matmul_cross_entropy_loss", dtype,
            matmulCrossEntropyLoss(in<T>(x), in<T>(w), in<int32_t>(labels), out<float>(loss), workspace, rows,
                                   classes, channels, transW != 0, chunkRows, softcap));
}
void zrt_mse(int32_t dtype, const void *pred, const void *target, void *loss, int64_t n) {
  TraceScope trace("zrt_mse", TraceTrack::Compute);
  ZRT_TYPED("zrt_mse", dtype, mse(in<T>(pred), in<T>(target), out<float>(loss), n));
}
void zrt_mse_grad(int32_t dtype, const void *dloss, const void *pred, const void *target,
                  void *dpred, int64_t n) {
  TraceScope trace("zrt_mse_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_mse_grad", dtype,
            mseGrad(in<float>(dloss), in<T>(pred), in<T>(target), out<T>(dpred), n));
}

void zrt_reduce_sum(int32_t dtype, const void *x, void *o, const void *shape, int32_t rank,
                    int32_t axesMask) {
  TraceScope trace("zrt_reduce_sum", TraceTrack::Compute);
  isaKernels().reduceSum(dtype, x, o, in<int64_t>(shape), rank, axesMask);
}
void zrt_transpose(int32_t dtype, const void *x, void *o, const void *shape, int32_t rank,
                   const void *perm) {
  TraceScope trace("zrt_transpose", TraceTrack::Compute);
  ZRT_TYPED("zrt_transpose", dtype,
            transpose(in<T>(x), out<T>(o), in<int64_t>(shape), rank, in<int64_t>(perm)));
}
void zrt_slice(int32_t dtype, const void *x, const void *xShape, void *o, const void *outShape,
               int32_t rank, const void *offsets) {
  TraceScope trace("zrt_slice", TraceTrack::Compute);
  ZRT_TYPED("zrt_slice", dtype,
            slice(in<T>(x), in<int64_t>(xShape), out<T>(o), in<int64_t>(outShape), rank,
                  in<int64_t>(offsets)));
}
void zrt_insert(int32_t dtype, const void *box, const void *boxShape, void *dst,
                const void *dstShape, int32_t rank, const void *offsets) {
  TraceScope trace("zrt_insert", TraceTrack::Compute);
  ZRT_TYPED("zrt_insert", dtype,
            insert(in<T>(box), in<int64_t>(boxShape), out<T>(dst), in<int64_t>(dstShape), rank,
                   in<int64_t>(offsets)));
}

void zrt_pack(int32_t dtype, int64_t count, const void *inputs, const void *numels, int64_t ranks, void *o) {
  TraceScope trace("zrt_pack", TraceTrack::Compute);
  if (count < 1 || ranks < 1)
    fatal("zrt_pack", "count %lld and ranks %lld must be positive", static_cast<long long>(count),
          static_cast<long long>(ranks));
  pack(dtypeSize(dtype), count, static_cast<const void *const *>(inputs), in<int64_t>(numels), ranks, o);
}
void zrt_unpack(int32_t dtype, int64_t count, const void *i, const void *numels, int64_t ranks,
                const void *outputs) {
  TraceScope trace("zrt_unpack", TraceTrack::Compute);
  if (count < 1 || ranks < 1)
    fatal("zrt_unpack", "count %lld and ranks %lld must be positive", static_cast<long long>(count),
          static_cast<long long>(ranks));
  unpack(dtypeSize(dtype), count, i, in<int64_t>(numels), ranks, static_cast<void *const *>(outputs));
}

void zrt_adamw(void *param, int32_t gradDtype, const void *grad, void *m, void *v,
               void *paramBf16, int64_t n, double lr, double beta1, double beta2, double eps,
               double weightDecay, int64_t step, const void *gradScale) {
  TraceScope trace("zrt_adamw", TraceTrack::Compute);
  if (step < 1)
    fatal("zrt_adamw", "step must start at 1, got %lld", static_cast<long long>(step));
  const float scale = gradScale ? *static_cast<const float *>(gradScale) : 1.0f;
  isaKernels().adamw(gradDtype, out<float>(param), grad, out<float>(m), out<float>(v), out<bf16>(paramBf16), n, lr,
                     beta1, beta2, eps, weightDecay, step, scale);
}
void zrt_sgd_momentum(void *param, int32_t gradDtype, const void *grad, void *buf,
                      void *paramBf16, int64_t n, double lr, double momentum,
                      double weightDecay, const void *gradScale) {
  TraceScope trace("zrt_sgd_momentum", TraceTrack::Compute);
  const float scale = gradScale ? *static_cast<const float *>(gradScale) : 1.0f;
  ZRT_TYPED("zrt_sgd_momentum", gradDtype,
            sgdMomentum(out<float>(param), in<T>(grad), out<float>(buf), out<bf16>(paramBf16), n,
                        lr, momentum, weightDecay, scale));
}

void zrt_grad_norm(int64_t count, const void *grads, const void *numels, const void *dtypes, const void *weights,
                   double maxNorm, void *norm, void *coef) {
  if (maxNorm < 0)
    fatal("zrt_grad_norm", "max_norm %g must be non-negative", maxNorm);
  zrt_grad_norm_add(count, grads, numels, dtypes, weights);
  zrt_grad_norm_reduce();
  zrt_grad_norm_finish(maxNorm, norm, coef);
}
void zrt_grad_norm_add(int64_t count, const void *grads, const void *numels, const void *dtypes,
                       const void *weights) {
  if (count < 0)
    fatal("zrt_grad_norm_add", "count %lld must be non-negative", static_cast<long long>(count));
  GradNormSums &sums = gradNormSums();
  if (sums.reduced)
    sums = GradNormSums{};
  sums.local += weightedSumOfSquares(count, static_cast<const void *const *>(grads),
                                     static_cast<const int64_t *>(numels), static_cast<const int64_t *>(dtypes),
                                     static_cast<const double *>(weights));
}
void zrt_grad_norm_reduce() {
  // Every rank of the mesh holds other pieces: the whole gradient's sum over all of them, in f64
  // and rank order (each rank's f64 gathered as its bytes), so that every layout of the same
  // gradient rounds to the same f32 norm but for a last-bit tie (a reduction in f32 would not).
  GradNormSums &sums = gradNormSums();
  const int32_t ranks = zrt_world_size();
  std::vector<double> every(ranks);
  zrt_host_all_gather(ZRT_AXIS_WORLD, &sums.local, every.data(), sizeof(double) / sizeof(float));
  sums.total = 0;
  for (double part : every)
    sums.total += part;
  sums.local = 0;
  sums.reduced = true;
}
void zrt_grad_norm_finish(double maxNorm, void *norm, void *coef) {
  if (maxNorm < 0)
    fatal("zrt_grad_norm_finish", "max_norm %g must be non-negative", maxNorm);
  const GradNormSums &sums = gradNormSums();
  if (!sums.reduced)
    fatal("zrt_grad_norm_finish", "no zrt_grad_norm_reduce since the last zrt_grad_norm_add: the ranks' sum is "
                                  "not there yet");
  const float value = static_cast<float>(std::sqrt(sums.total));
  *static_cast<float *>(norm) = value;
  *static_cast<float *>(coef) = math::gradClipCoefficient(value, maxNorm);
  lastGradNorm() = value;
}
double zrt_last_grad_norm() { return lastGradNorm(); }

} // extern "C"
