// Causal attention on the CUDA backend: cuDNN's fused flash attention wherever it takes the op
// (CudnnAttention.h; AttentionPath.h chooses and says why); else bf16 on zcc's tensor-core kernels
// (FlashAttention.cu); in f32, or at head sizes those kernels do not take, one thread per query row
// (below), with grouped-query heads.
#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/AttentionPath.h"
#include "cuda/AttentionScores.h"
#include "cuda/CudaCheck.h"
#include "cuda/CudnnAttention.h"
#include "cuda/Dispatch.h"
#include "cuda/FlashAttention.h"
#include "cuda/Kernels.h"
#include "cuda/Scratch.h"

namespace zrt::cuda {
namespace {

constexpr int kThreads = 128;
int blocks(int64_t n) { return gridStrideBlocks(n, kThreads); }

constexpr int kMaxHeadDim = 256;

/// Where head h of batch b starts: in the queries (rows of C = H x D) and in the keys and
/// values (rows of Ckv = G x D, query head h reading key/value head h / (H / G)).
struct HeadLayout {
  int64_t Tn, C, H, G, D, Ckv;
  __device__ HeadLayout(int64_t Tn, int64_t C, int64_t H, int64_t G)
      : Tn(Tn), C(C), H(H), G(G), D(C / H), Ckv(G * (C / H)) {}
  __device__ int64_t query(int64_t b, int64_t h) const { return b * Tn * C + h * D; }
  __device__ int64_t keyValue(int64_t b, int64_t h) const { return b * Tn * Ckv + (h / (H / G)) * D; }
};

/// dot(a[row t], b[row s]) of one head: a's rows C apart from aBase, b's rows ldb apart from bBase.
template <class T>
__device__ float dotRows(const T *a, int64_t aBase, int64_t t, int64_t lda, const T *b, int64_t bBase, int64_t s,
                         int64_t ldb, int64_t D) {
  float dot = 0;
  for (int64_t d = 0; d < D; ++d)
    dot += static_cast<float>(a[aBase + t * lda + d]) * static_cast<float>(b[bBase + s * ldb + d]);
  return dot;
}

/// The largest score of query t over the keys it sees (the causal softmax's shift).
template <class T>
__device__ float causalRowMax(const T *q, int64_t qb, int64_t t, const T *k, int64_t kb, const HeadLayout &L,
                              const AttentionScores &score) {
  float maxValue = -INFINITY;
  for (int64_t s = score.firstKey(t); s <= t; ++s)
    maxValue = fmaxf(maxValue, score(dotRows(q, qb, t, L.C, k, kb, s, L.Ckv, L.D)));
  return maxValue;
}

/// One thread per (batch, head, query time): the causal softmax over the keys t sees and the
/// weighted sum of values, in two passes over the keys.
template <class T>
__global__ void attentionKernel(const T *q, const T *k, const T *v, T *out, int64_t B, int64_t Tn, int64_t C,
                                int64_t H, int64_t G, AttentionScores score) {
  const HeadLayout L(Tn, C, H, G);
  ZRT_FOR_EACH(task, B * H * Tn) {
    int64_t t = task % Tn, bh = task / Tn, b = bh / H, h = bh % H;
    const int64_t qb = L.query(b, h), kb = L.keyValue(b, h);
    const float maxValue = causalRowMax(q, qb, t, k, kb, L, score);
    float acc[kMaxHeadDim];
    for (int64_t d = 0; d < L.D; ++d)
      acc[d] = 0;
    float sum = 0;
    for (int64_t s = score.firstKey(t); s <= t; ++s) {
      float w = expf(score(dotRows(q, qb, t, C, k, kb, s, L.Ckv, L.D)) - maxValue);
      sum += w;
      for (int64_t d = 0; d < L.D; ++d)
        acc[d] += w * static_cast<float>(v[kb + s * L.Ckv + d]);
    }
    for (int64_t d = 0; d < L.D; ++d)
      out[qb + t * C + d] = T(acc[d] / sum);
  }
}

/// Per query time t: p[t, s] from the saved max and sum, dot(p, dp) into stats, and dq_t.
template <class T>
__global__ void attentionGradQuery(const T *dout, const T *q, const T *k, const T *v, T *dq, int64_t B, int64_t Tn,
                                   int64_t C, int64_t H, int64_t G, float *stats, AttentionScores score) {
  const HeadLayout L(Tn, C, H, G);
  ZRT_FOR_EACH(task, B * H * Tn) {
    int64_t t = task % Tn, bh = task / Tn, b = bh / H, h = bh % H;
    const int64_t qb = L.query(b, h), kb = L.keyValue(b, h);
    const float maxValue = stats[3 * task], sum = stats[3 * task + 1];
    float dotPdp = 0;
    for (int64_t s = score.firstKey(t); s <= t; ++s) {
      float p = expf(score(dotRows(q, qb, t, C, k, kb, s, L.Ckv, L.D)) - maxValue) / sum;
      dotPdp += p * dotRows(dout, qb, t, C, v, kb, s, L.Ckv, L.D);
    }
    stats[3 * task + 2] = dotPdp;
    float acc[kMaxHeadDim];
    for (int64_t d = 0; d < L.D; ++d)
      acc[d] = 0;
    for (int64_t s = score.firstKey(t); s <= t; ++s) {
      const float x = score(dotRows(q, qb, t, C, k, kb, s, L.Ckv, L.D));
      float p = expf(x - maxValue) / sum;
      float ds = p * (dotRows(dout, qb, t, C, v, kb, s, L.Ckv, L.D) - dotPdp) * score.slope(x);
      for (int64_t d = 0; d < L.D; ++d)
        acc[d] += ds * static_cast<float>(k[kb + s * L.Ckv + d]);
    }
    for (int64_t d = 0; d < L.D; ++d)
      dq[qb + t * C + d] = T(acc[d]);
  }
}

/// Per (batch, key/value head, key time s): dk_s = sum over the group's query heads and t >= s
/// of ds[t, s] q_t, dv_s = the same sum of p[t, s] dout_t.
template <class T>
__global__ void attentionGradKey(const T *dout, const T *q, const T *k, const T *v, T *dk, T *dv, int64_t B,
                                 int64_t Tn, int64_t C, int64_t H, int64_t G, const float *stats,
                                 AttentionScores score) {
  const HeadLayout L(Tn, C, H, G);
  const int64_t group = H / G;
  ZRT_FOR_EACH(task, B * G * Tn) {
    int64_t s = task % Tn, bg = task / Tn, b = bg / G, g = bg % G;
    const int64_t kb = L.keyValue(b, g * group);
    float accK[kMaxHeadDim], accV[kMaxHeadDim];
    for (int64_t d = 0; d < L.D; ++d)
      accK[d] = accV[d] = 0;
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      const int64_t qb = L.query(b, h);
      for (int64_t t = s, last = score.lastQuery(s, Tn); t <= last; ++t) {
        const int64_t row = (b * H + h) * Tn + t;
        const float x = score(dotRows(q, qb, t, C, k, kb, s, L.Ckv, L.D));
        float p = expf(x - stats[3 * row]) / stats[3 * row + 1];
        float ds = p * (dotRows(dout, qb, t, C, v, kb, s, L.Ckv, L.D) - stats[3 * row + 2]) * score.slope(x);
        for (int64_t d = 0; d < L.D; ++d) {
          accK[d] += ds * static_cast<float>(q[qb + t * C + d]);
          accV[d] += p * static_cast<float>(dout[qb + t * C + d]);
        }
      }
    }
    for (int64_t d = 0; d < L.D; ++d) {
      dk[kb + s * L.Ckv + d] = T(accK[d]);
      dv[kb + s * L.Ckv + d] = T(accV[d]);
    }
  }
}

/// Row max and sum of the forward's softmax, 3 floats per query (the third: dot(p, dp)).
template <class T>
__global__ void attentionStats(const T *q, const T *k, int64_t B, int64_t Tn, int64_t C, int64_t H, int64_t G,
                               float *stats, AttentionScores score) {
  const HeadLayout L(Tn, C, H, G);
  ZRT_FOR_EACH(task, B * H * Tn) {
    int64_t t = task % Tn, bh = task / Tn, b = bh / H, h = bh % H;
    const int64_t qb = L.query(b, h), kb = L.keyValue(b, h);
    const float maxValue = causalRowMax(q, qb, t, k, kb, L, score);
    float sum = 0;
    for (int64_t s = score.firstKey(t); s <= t; ++s)
      sum += expf(score(dotRows(q, qb, t, C, k, kb, s, L.Ckv, L.D)) - maxValue);
    stats[3 * task] = maxValue;
    stats[3 * task + 1] = sum;
  }
}

void checkHeads(const char *call, int64_t channels, int64_t heads, int64_t kvHeads = 0) {
  if (heads <= 0 || channels % heads != 0)
    fatal(call, "%lld channels are not divisible into %lld heads", static_cast<long long>(channels),
          static_cast<long long>(heads));
  if (kvHeads && (kvHeads < 0 || heads % kvHeads != 0))
    fatal(call, "%lld query heads do not split into groups of %lld key/value heads", static_cast<long long>(heads),
          static_cast<long long>(kvHeads));
  if (channels / heads > kMaxHeadDim)
    fatal(call, "head dimension %lld is above the CUDA kernel's %d", static_cast<long long>(channels / heads),
          kMaxHeadDim);
}

} // namespace

void causalAttention(int32_t dtype, const void *q, const void *k, const void *v, void *out, int64_t batch,
                     int64_t time, int64_t channels, int64_t heads, int64_t kvHeads, const AttentionVariant &variant,
                     cudaStream_t s) {
  checkHeads("zrt_causal_attention", channels, heads, kvHeads);
  const SdpaProblem problem = SdpaProblem::of(dtype, batch, time, channels, heads, kvHeads, variant);
  if (useCudnnAttention(problem, variant))
    return cudnnAttentionForward(problem, q, k, v, out, scratchFloats(problem.statsCount()), s);
  if (flashAttentionApplies(dtype, channels, heads))
    return flashAttention(q, k, v, out, batch, time, channels, heads, kvHeads, variant, s);
  const AttentionScores score = AttentionScores::of(variant, channels / heads);
  ZRT_CUDA_TYPED("zrt_causal_attention", dtype,
                 (attentionKernel<<<blocks(batch * heads * time), kThreads, 0, s>>>(
                     static_cast<const T *>(q), static_cast<const T *>(k), static_cast<const T *>(v),
                     static_cast<T *>(out), batch, time, channels, heads, kvHeads, score)));
}
void causalAttentionGrad(int32_t dtype, const void *dout, const void *q, const void *k, const void *v, void *dq,
                         void *dk, void *dv, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                         int64_t kvHeads, const AttentionVariant &variant, cudaStream_t s) {
  checkHeads("zrt_causal_attention_grad", channels, heads, kvHeads);
  const SdpaProblem problem = SdpaProblem::of(dtype, batch, time, channels, heads, kvHeads, variant);
  if (useCudnnAttention(problem, variant)) {
    // zc.causal_attention_grad gets q, k, v and the output's gradient, not the forward's output or
    // its softmax statistics, which cuDNN's backward reads: one forward recomputes both into the
    // scratch (the statistics first, the output 256-byte aligned after them), then the backward.
    const int64_t statsFloats = (problem.statsCount() + 63) / 64 * 64;
    const int64_t outFloats = (batch * time * channels * 2 + 3) / 4; // bf16
    float *scratch = scratchFloats(statsFloats + outFloats);
    cudnnAttentionForward(problem, q, k, v, scratch + statsFloats, scratch, s);
    return cudnnAttentionBackward(problem, q, k, v, scratch + statsFloats, dout, scratch, dq, dk, dv, s);
  }
  if (flashAttentionApplies(dtype, channels, heads))
    return flashAttentionGrad(dout, q, k, v, dq, dk, dv, batch, time, channels, heads, kvHeads, variant, s);
  const AttentionScores score = AttentionScores::of(variant, channels / heads);
  const int64_t tasks = batch * heads * time;
  float *stats = scratchFloats(3 * tasks);
  ZRT_CUDA_TYPED("zrt_causal_attention_grad", dtype, ({
                   attentionStats<<<blocks(tasks), kThreads, 0, s>>>(static_cast<const T *>(q), static_cast<const T *>(k),
                                                                     batch, time, channels, heads, kvHeads, stats,
                                                                     score);
                   attentionGradQuery<<<blocks(tasks), kThreads, 0, s>>>(
                       static_cast<const T *>(dout), static_cast<const T *>(q), static_cast<const T *>(k),
                       static_cast<const T *>(v), static_cast<T *>(dq), batch, time, channels, heads, kvHeads, stats,
                       score);
                   attentionGradKey<<<blocks(batch * kvHeads * time), kThreads, 0, s>>>(
                       static_cast<const T *>(dout), static_cast<const T *>(q), static_cast<const T *>(k),
                       static_cast<const T *>(v), static_cast<T *>(dk), static_cast<T *>(dv), batch, time, channels,
                       heads, kvHeads, stats, score);
                 }));
}

} // namespace zrt::cuda
