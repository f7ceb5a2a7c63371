// Ring attention's kernels on the CUDA backend (RingAttention.h): a thread per query row merges
// one block's visible keys into its running softmax; the gradient's query threads add to dq, its
// key threads to the travelling block's dk and dv.
#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/RingAttention.h"
#include "zrt/KernelMath.h"

namespace zrt::cuda {
namespace {

constexpr int kThreads = 128;
int blocks(int64_t n) { return gridStrideBlocks(n, kThreads); }

constexpr int kMaxHeadDim = 256;

/// The ring's geometry on the device: chunk(r, h) is the sequence chunk of rank r's half h.
struct Ring {
  int64_t B, L, C, H, G, D, Ckv, half, rank, ranks;
  explicit Ring(const RingShape &s)
      : B(s.batch), L(s.tokens), C(s.channels), H(s.heads), G(s.kvHeads), D(s.headSize()), Ckv(s.kvChannels()),
        half(s.tokens / 2), rank(s.rank), ranks(s.ranks) {}
  __device__ int64_t chunk(int64_t r, int64_t h) const { return math::contextChunk(ranks, r, h); }
  /// How many keys of `source`'s half ka the query at local token t sees: none when the key chunk
  /// follows the query's, up to the query's own place on the diagonal, else the whole chunk.
  __device__ int64_t visibleKeys(int64_t t, int64_t source, int64_t ka) const {
    const int64_t qc = chunk(rank, t / half), kc = chunk(source, ka);
    return kc > qc ? 0 : kc == qc ? t % half + 1 : half;
  }
};

template <class A, class B> __device__ float dot(const A *a, const B *b, int64_t D) {
  float sum = 0;
  for (int64_t d = 0; d < D; ++d)
    sum += static_cast<float>(a[d]) * static_cast<float>(b[d]);
  return sum;
}

__global__ void beginRows(float *m, float *l, int64_t rows) {
  ZRT_FOR_EACH(row, rows) {
    m[row] = -INFINITY;
    l[row] = 0.0f;
  }
}

/// Per (batch, head, local query token): the block's visible keys merged one at a time into the
/// row's running maximum m, sum l and unnormalized output acc.
template <class T>
__global__ void forwardStep(const T *q, const T *k, const T *v, float *acc, float *m, float *l, Ring R,
                            int64_t source) {
  const float scale = 1.0f / sqrtf(float(R.D));
  ZRT_FOR_EACH(row, R.B * R.H * R.L) {
    const int64_t t = row % R.L, h = row / R.L % R.H, b = row / (R.L * R.H);
    const T *qt = q + (b * R.L + t) * R.C + h * R.D;
    float *out = acc + (b * R.L + t) * R.C + h * R.D;
    const int64_t kvColumn = (h / (R.H / R.G)) * R.D;
    float a[kMaxHeadDim];
    for (int64_t d = 0; d < R.D; ++d)
      a[d] = out[d];
    float mRow = m[row], lRow = l[row];
    for (int64_t ka = 0; ka < 2; ++ka) {
      const int64_t visible = R.visibleKeys(t, source, ka);
      for (int64_t j = 0; j < visible; ++j) {
        const int64_t at = (b * R.L + ka * R.half + j) * R.Ckv + kvColumn;
        const float s = dot(qt, k + at, R.D) * scale;
        if (s > mRow) { // a new maximum: what was summed so far shrinks by exp(old - new)
          const float shrink = expf(mRow - s);
          lRow *= shrink;
          for (int64_t d = 0; d < R.D; ++d)
            a[d] *= shrink;
          mRow = s;
        }
        const float w = expf(s - mRow);
        lRow += w;
        for (int64_t d = 0; d < R.D; ++d)
          a[d] += w * static_cast<float>(v[at + d]);
      }
    }
    for (int64_t d = 0; d < R.D; ++d)
      out[d] = a[d];
    m[row] = mRow;
    l[row] = lRow;
  }
}

/// acc /= l (the output, also written in T when `out` is set), m += log l (the log-sum-exp).
template <class T> __global__ void endRows(float *acc, float *m, const float *l, T *out, Ring R) {
  ZRT_FOR_EACH(row, R.B * R.H * R.L) {
    const int64_t t = row % R.L, h = row / R.L % R.H, b = row / (R.L * R.H);
    const int64_t at = (b * R.L + t) * R.C + h * R.D;
    const float inverse = 1.0f / l[row];
    for (int64_t d = 0; d < R.D; ++d) {
      acc[at + d] *= inverse;
      if (out)
        out[at + d] = T(acc[at + d]);
    }
    m[row] += logf(l[row]);
  }
}

/// delta = dot(dout, out) per (batch, head, token), and dq's accumulator zeroed.
template <class T> __global__ void gradBeginRows(const T *dout, const float *out, float *delta, float *dq, Ring R) {
  ZRT_FOR_EACH(row, R.B * R.H * R.L) {
    const int64_t t = row % R.L, h = row / R.L % R.H, b = row / (R.L * R.H);
    const int64_t at = (b * R.L + t) * R.C + h * R.D;
    delta[row] = dot(dout + at, out + at, R.D);
    for (int64_t d = 0; d < R.D; ++d)
      dq[at + d] = 0.0f;
  }
}

/// Per query row: dq += sum over the block's visible keys of ds k, with p = exp(s - lse) and
/// ds = p (dot(dout, v) - delta) scale.
template <class T>
__global__ void gradQueries(const T *dout, const T *q, const T *k, const T *v, const float *lse, const float *delta,
                            float *dq, Ring R, int64_t source) {
  const float scale = 1.0f / sqrtf(float(R.D));
  ZRT_FOR_EACH(row, R.B * R.H * R.L) {
    const int64_t t = row % R.L, h = row / R.L % R.H, b = row / (R.L * R.H);
    const int64_t at = (b * R.L + t) * R.C + h * R.D, kvColumn = (h / (R.H / R.G)) * R.D;
    float acc[kMaxHeadDim];
    for (int64_t d = 0; d < R.D; ++d)
      acc[d] = dq[at + d];
    for (int64_t ka = 0; ka < 2; ++ka) {
      const int64_t visible = R.visibleKeys(t, source, ka);
      for (int64_t j = 0; j < visible; ++j) {
        const int64_t kvAt = (b * R.L + ka * R.half + j) * R.Ckv + kvColumn;
        const float p = expf(dot(q + at, k + kvAt, R.D) * scale - lse[row]);
        const float ds = p * (dot(dout + at, v + kvAt, R.D) - delta[row]) * scale;
        for (int64_t d = 0; d < R.D; ++d)
          acc[d] += ds * static_cast<float>(k[kvAt + d]);
      }
    }
    for (int64_t d = 0; d < R.D; ++d)
      dq[at + d] = acc[d];
  }
}

/// Per (batch, key/value head, key of the block): the block's dk += sum of ds q and dv += sum of
/// p dout over the group's query heads and this rank's queries that see the key.
template <class T>
__global__ void gradKeys(const T *dout, const T *q, const T *k, const T *v, const float *lse, const float *delta,
                         float *dk, float *dv, Ring R, int64_t source) {
  const float scale = 1.0f / sqrtf(float(R.D));
  const int64_t group = R.H / R.G;
  ZRT_FOR_EACH(task, R.B * R.G * R.L) {
    const int64_t j = task % R.L, g = task / R.L % R.G, b = task / (R.L * R.G);
    const int64_t kc = R.chunk(source, j / R.half), kvAt = (b * R.L + j) * R.Ckv + g * R.D;
    float accK[kMaxHeadDim], accV[kMaxHeadDim];
    for (int64_t d = 0; d < R.D; ++d) {
      accK[d] = dk[kvAt + d];
      accV[d] = dv[kvAt + d];
    }
    for (int64_t qa = 0; qa < 2; ++qa) {
      const int64_t qc = R.chunk(R.rank, qa);
      if (kc > qc)
        continue; // every query of this chunk precedes the key
      const int64_t first = kc == qc ? j % R.half : 0; // on the diagonal: the queries at or after it
      for (int64_t h = g * group; h < (g + 1) * group; ++h)
        for (int64_t i = first; i < R.half; ++i) {
          const int64_t t = qa * R.half + i, row = (b * R.H + h) * R.L + t, at = (b * R.L + t) * R.C + h * R.D;
          const float p = expf(dot(q + at, k + kvAt, R.D) * scale - lse[row]);
          const float ds = p * (dot(dout + at, v + kvAt, R.D) - delta[row]) * scale;
          for (int64_t d = 0; d < R.D; ++d) {
            accK[d] += ds * static_cast<float>(q[at + d]);
            accV[d] += p * static_cast<float>(dout[at + d]);
          }
        }
    }
    for (int64_t d = 0; d < R.D; ++d) {
      dk[kvAt + d] = accK[d];
      dv[kvAt + d] = accV[d];
    }
  }
}

} // namespace

void checkRingShape(const char *call, const RingShape &s) {
  if (s.batch < 0 || s.tokens <= 0 || s.tokens % 2 != 0)
    fatal(call, "%lld local tokens are not two equal chunks", static_cast<long long>(s.tokens));
  if (s.heads <= 0 || s.kvHeads <= 0 || s.channels % s.heads != 0 || s.heads % s.kvHeads != 0)
    fatal(call, "%lld channels, %lld heads and %lld key/value heads do not fit", static_cast<long long>(s.channels),
          static_cast<long long>(s.heads), static_cast<long long>(s.kvHeads));
  if (s.headSize() > kMaxHeadDim)
    fatal(call, "head dimension %lld is above the CUDA kernel's %d", static_cast<long long>(s.headSize()),
          kMaxHeadDim);
  if (s.ranks < 1 || s.rank < 0 || s.rank >= s.ranks)
    fatal(call, "rank %lld of a ring of %lld", static_cast<long long>(s.rank), static_cast<long long>(s.ranks));
}

void ringAttentionBegin(const RingShape &s, float *acc, float *m, float *l, cudaStream_t stream) {
  checkRingShape("zrt_ring_attention", s);
  ZRT_CUDA_CHECK(cudaMemsetAsync(acc, 0, s.batch * s.tokens * s.channels * sizeof(float), stream));
  beginRows<<<blocks(s.rows()), kThreads, 0, stream>>>(m, l, s.rows());
  ZRT_CUDA_CHECK(cudaGetLastError());
}

void ringAttentionStep(int32_t dtype, const RingShape &s, const void *q, const void *k, const void *v, int64_t source,
                       float *acc, float *m, float *l, cudaStream_t stream) {
  ZRT_CUDA_TYPED("zrt_ring_attention", dtype,
                 (forwardStep<<<blocks(s.rows()), kThreads, 0, stream>>>(
                     static_cast<const T *>(q), static_cast<const T *>(k), static_cast<const T *>(v), acc, m, l,
                     Ring(s), source)));
}

void ringAttentionEnd(int32_t dtype, const RingShape &s, float *acc, float *m, const float *l, void *out,
                      cudaStream_t stream) {
  ZRT_CUDA_TYPED("zrt_ring_attention", dtype,
                 (endRows<<<blocks(s.rows()), kThreads, 0, stream>>>(acc, m, l, static_cast<T *>(out), Ring(s))));
}

void ringAttentionGradBegin(int32_t dtype, const RingShape &s, const void *dout, const float *out, float *delta,
                            float *dq, cudaStream_t stream) {
  ZRT_CUDA_TYPED("zrt_ring_attention_grad", dtype,
                 (gradBeginRows<<<blocks(s.rows()), kThreads, 0, stream>>>(static_cast<const T *>(dout), out, delta,
                                                                          dq, Ring(s))));
}

void ringAttentionGradStep(int32_t dtype, const RingShape &s, const void *dout, const void *q, const void *k,
                           const void *v, const float *lse, const float *delta, int64_t source, float *dq, float *dk,
                           float *dv, cudaStream_t stream) {
  ZRT_CUDA_TYPED("zrt_ring_attention_grad", dtype, ({
                   gradQueries<<<blocks(s.rows()), kThreads, 0, stream>>>(
                       static_cast<const T *>(dout), static_cast<const T *>(q), static_cast<const T *>(k),
                       static_cast<const T *>(v), lse, delta, dq, Ring(s), source);
                   gradKeys<<<blocks(s.batch * s.kvHeads * s.tokens), kThreads, 0, stream>>>(
                       static_cast<const T *>(dout), static_cast<const T *>(q), static_cast<const T *>(k),
                       static_cast<const T *>(v), lse, delta, dk, dv, Ring(s), source);
                 }));
}

} // namespace zrt::cuda
