// Causal multi-head attention (with zc's variants: a scale, soft-capped scores, a sliding
// window; zrt/AttentionVariant.h) on [B, T, C] queries (H heads of D = C / H) and [B, T, G x D]
// keys and values (G key/value heads; G < H is grouped-query attention, query head h reading
// key/value head h / (H / G)), forward and backward. The backward recomputes the
// probabilities, so nothing of size T x T is stored between the two (the flash-attention trade).
//
// Each (batch, key/value head) runs on one thread, its group's query heads one after another
// (the keys and values loaded once; their gradients summed over the group in a fixed order, no
// atomics), in blocks of kQueryBlock query rows: the block's
// scores against every key it may see are one GEMM (rows x keys x D), its masked softmax is a
// row loop, and the outputs are one more GEMM; the backward adds the GEMMs of dP, dQ, dK and
// dV. A thread's scratch is its head's Q, K, V and two blocks of rows x T, never T x T. The
// GEMMs are oneDNN's (f32) and BLAS's (f64, the tests') C entry points, single-threaded inside
// the per-head team. (Row by row, with a dot product per score, this ran at about a tenth of
// the matmuls' rate: 350 ms of a 1.16 s step of a 6-layer d=384 T=256 GPT.)
#ifndef ZRT_CPU_ATTENTION_H
#define ZRT_CPU_ATTENTION_H

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/Parallel.h"
#include "cpu/Sgemm.h"
#include "zrt/AttentionVariant.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

namespace detail {
/// Query rows per block: the block's scores are kQueryBlock x T values.
constexpr int64_t kQueryBlock = 64;

/// One head's [T, D] slice of a [B, T, C] tensor (starting at `x`), as contiguous rows in A.
template <class T, class A>
void loadRows(const T *x, int64_t Tn, int64_t C, int64_t D, A *out) {
  for (int64_t s = 0; s < Tn; ++s)
    for (int64_t d = 0; d < D; ++d)
      out[s * D + d] = static_cast<A>(x[s * C + d]);
}
/// The rows back into the head's slice of a [B, T, C] tensor.
template <class T, class A>
void storeRows(const A *rows, int64_t Tn, int64_t C, int64_t D, T *x) {
  for (int64_t s = 0; s < Tn; ++s)
    for (int64_t d = 0; d < D; ++d)
      x[s * C + d] = T(rows[s * D + d]);
}

/// C (m x n, rows ldc apart) = op(A) op(B) + beta C, all row-major. C entry points only, so
/// this ISA level's object instantiates no library code of its own.
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  sgemm("zrt_causal_attention", ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                 const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k,
              1.0, a, lda, b, ldb, beta, c, ldc);
}

inline float expOf(float x) { return math::vexp(x); }
inline double expOf(double x) { return std::exp(x); }

/// Row reductions in 16 lanes (math::laneSum: the softmax and dS rows ran at one add per 4
/// cycles as running sums, 60% of the attention's time at T = 1024).
using math::kLanes;
using math::laneSum;
template <class A> A sumOf(const A *x, int64_t n) {
  return laneSum<A>(n, [x](int64_t j) { return x[j]; });
}
template <class A> A dotOf(const A *x, const A *y, int64_t n) {
  return laneSum<A>(n, [x, y](int64_t j) { return x[j] * y[j]; });
}
/// The maximum, by 16 lanes too (exact in any order; a reduction(max) loop stayed scalar).
template <class A> A maxOf(const A *x, int64_t n) {
  A part[kLanes];
  for (int l = 0; l < kLanes; ++l)
    part[l] = -INFINITY;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l)
      part[l] = x[j + l] > part[l] ? x[j + l] : part[l];
  for (int l = 0; j < n; ++j, ++l)
    part[l] = x[j] > part[l] ? x[j] : part[l];
  A m = part[0];
  for (int l = 1; l < kLanes; ++l)
    m = part[l] > m ? part[l] : m;
  return m;
}

inline float tanhOf(float x) { return math::vtanh(x); }
inline double tanhOf(double x) { return std::tanh(x); }

/// Row r of a block starting at query i0 sees keys variant.firstKey(i0 + r) .. i0 + r. The
/// block's scores s (rows x cols; column j is key k0 + j, k0 the block's first visible key)
/// become probabilities: scaled (and soft-capped: C tanh(scale s / C)), softmax over the visible
/// keys, zero over the rest, so the next GEMMs can run over the block's whole key range. With a
/// cap, `capTanh` (when given, rows x cols) receives tanh(scale s / C), zero where masked: the
/// backward's derivative of the cap is 1 - tanh^2.
template <class A>
void maskedSoftmax(A *s, int64_t rows, int64_t cols, int64_t k0, int64_t i0, A scale, const AttentionVariant &variant,
                   A *capTanh = nullptr) {
  for (int64_t r = 0; r < rows; ++r) {
    A *p = s + r * cols;
    const int64_t query = i0 + r, lo = variant.firstKey(query) - k0, hi = query + 1 - k0;
    A maxValue;
    if (variant.capped()) {
      const A cap = A(variant.softcap), inner = scale / cap;
      A *th = capTanh ? capTanh + r * cols : nullptr;
      for (int64_t j = lo; j < hi; ++j) {
        const A u = tanhOf(p[j] * inner);
        if (th)
          th[j] = u;
        p[j] = cap * u;
      }
      if (th) {
        zero(th, lo);
        zero(th + hi, cols - hi);
      }
      maxValue = maxOf(p + lo, hi - lo);
#pragma omp simd
      for (int64_t j = lo; j < hi; ++j)
        p[j] = expOf(p[j] - maxValue);
    } else {
      // max(scale x) = scale max(x) exactly: rounding a product is monotonic and scale > 0.
      maxValue = maxOf(p + lo, hi - lo) * scale;
#pragma omp simd
      for (int64_t j = lo; j < hi; ++j)
        p[j] = expOf(p[j] * scale - maxValue);
    }
    const A inv = A(1) / sumOf(p + lo, hi - lo);
#pragma omp simd
    for (int64_t j = lo; j < hi; ++j)
      p[j] *= inv;
    zero(p, lo);
    zero(p + hi, cols - hi);
  }
}

/// The scores' scale: the variant's, else 1/sqrt(D).
template <class A> A scoreScale(const AttentionVariant &variant, int64_t D) {
  return variant.scale > 0.0 ? A(variant.scale) : A(1) / std::sqrt(A(D));
}

/// The heads of an attention call: H query heads of D channels (rows of C = H x D) and G
/// key/value heads (rows of G x D), query head h in key/value head h / (H / G)'s group.
struct AttentionHeads {
  int64_t D, H, G, C, Ckv;
  AttentionHeads(int64_t C, int64_t H, int64_t G) : D(C / H), H(H), G(G), C(C), Ckv(G * (C / H)) {}
  int64_t group() const { return H / G; }
};

/// Runs fn(b, g) for every (batch, key/value head) in parallel.
template <class F> void forEachKvHead(int64_t B, const AttentionHeads &heads, F &&fn) {
  parallelFor(B * heads.G, 1, [&](int64_t bg) { fn(bg / heads.G, bg % heads.G); });
}
} // namespace detail

/// q, out: [B, T, C]; k, v: [B, T, G x C / H]. G = H is multi-head attention.
/// `variant`: the scale, soft-cap and sliding window (a block of queries multiplies only the
/// keys its window reaches: the work grows as T x W, not T x T).
template <class T>
void causalAttention(const T *q, const T *k, const T *v, T *out, int64_t B, int64_t Tn, int64_t C, int64_t H,
                     int64_t G, const AttentionVariant &variant = {}) {
  using A = Acc<T>;
  using namespace detail;
  const AttentionHeads heads(C, H, G);
  const int64_t D = heads.D;
  const A scale = scoreScale<A>(variant, D);
  forEachKvHead(B, heads, [&](int64_t b, int64_t g) {
    // The thread's workspace: every value is written before it is read.
    A *qh = threadWorkspace<A>(4 * Tn * D + kQueryBlock * Tn), *kh = qh + Tn * D, *vh = kh + Tn * D,
      *oh = vh + Tn * D, *p = oh + Tn * D;
    const int64_t kvBase = b * Tn * heads.Ckv + g * D;
    loadRows(k + kvBase, Tn, heads.Ckv, D, kh);
    loadRows(v + kvBase, Tn, heads.Ckv, D, vh);
    for (int64_t h = g * heads.group(); h < (g + 1) * heads.group(); ++h) {
      const int64_t base = b * Tn * C + h * D;
      loadRows(q + base, Tn, C, D, qh);
      for (int64_t i0 = 0; i0 < Tn; i0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, Tn - i0), k0 = variant.firstKey(i0), keys = i0 + rows - k0;
        // S = Q_block K[k0:]^T, then P = masked softmax(S), then O_block = P V[k0:].
        gemm(false, true, rows, keys, D, qh + i0 * D, D, kh + k0 * D, D, A(0), p, keys);
        maskedSoftmax(p, rows, keys, k0, i0, scale, variant);
        gemm(false, false, rows, D, keys, p, keys, vh + k0 * D, D, A(0), oh + i0 * D, D);
      }
      storeRows(oh, Tn, C, D, out + base);
    }
  });
}

/// Each (batch, key/value head) owns disjoint channel slices of dq, dk and dv, so the parallel
/// loop needs no atomics; dk and dv sum over the group's query heads in order.
template <class T>
void causalAttentionGrad(const T *dout, const T *q, const T *k, const T *v, T *dq, T *dk, T *dv, int64_t B,
                         int64_t Tn, int64_t C, int64_t H, int64_t G, const AttentionVariant &variant = {}) {
  using A = Acc<T>;
  using namespace detail;
  const AttentionHeads heads(C, H, G);
  const int64_t D = heads.D;
  const A scale = scoreScale<A>(variant, D);
  const bool capped = variant.capped();
  forEachKvHead(B, heads, [&](int64_t b, int64_t g) {
    // The thread's workspace: every value is written before it is read, but for the key and
    // value gradients, which sum over the blocks and the group's heads.
    A *qh = threadWorkspace<A>(7 * Tn * D + 3 * kQueryBlock * Tn), *kh = qh + Tn * D, *vh = kh + Tn * D,
      *gh = vh + Tn * D, *dqh = gh + Tn * D, *dkh = dqh + Tn * D, *dvh = dkh + Tn * D, *p = dvh + Tn * D,
      *ds = p + kQueryBlock * Tn, *th = ds + kQueryBlock * Tn;
    zero(dkh, 2 * Tn * D);
    const int64_t kvBase = b * Tn * heads.Ckv + g * D;
    loadRows(k + kvBase, Tn, heads.Ckv, D, kh);
    loadRows(v + kvBase, Tn, heads.Ckv, D, vh);
    for (int64_t h = g * heads.group(); h < (g + 1) * heads.group(); ++h) {
      const int64_t base = b * Tn * C + h * D;
      loadRows(q + base, Tn, C, D, qh);
      loadRows(dout + base, Tn, C, D, gh);
      for (int64_t i0 = 0; i0 < Tn; i0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, Tn - i0), k0 = variant.firstKey(i0), keys = i0 + rows - k0;
        const A *qb = qh + i0 * D, *gb = gh + i0 * D;
        const A *kb = kh + k0 * D, *vb = vh + k0 * D;
        // The forward's probabilities again, and dP = dO_block V[k0:]^T.
        gemm(false, true, rows, keys, D, qb, D, kb, D, A(0), p, keys);
        maskedSoftmax(p, rows, keys, k0, i0, scale, variant, capped ? th : nullptr);
        gemm(false, true, rows, keys, D, gb, D, vb, D, A(0), ds, keys);
        // Through the softmax: dS = P (dP - P.dP) scale (zero where masked, as P is); through
        // the cap, times 1 - tanh^2.
        for (int64_t r = 0; r < rows; ++r) {
          const A *pr = p + r * keys;
          A *dr = ds + r * keys;
          const A dot = dotOf(pr, dr, keys);
          if (capped) {
            const A *tr = th + r * keys;
#pragma omp simd
            for (int64_t j = 0; j < keys; ++j)
              dr[j] = pr[j] * (dr[j] - dot) * (A(1) - tr[j] * tr[j]) * scale;
          } else {
#pragma omp simd
            for (int64_t j = 0; j < keys; ++j)
              dr[j] = pr[j] * (dr[j] - dot) * scale;
          }
        }
        // dQ_block = dS K[k0:]; dK[k0:] += dS^T Q_block; dV[k0:] += P^T dO_block (over the
        // group's heads too).
        gemm(false, false, rows, D, keys, ds, keys, kb, D, A(0), dqh + i0 * D, D);
        gemm(true, false, keys, D, rows, ds, keys, qb, D, A(1), dkh + k0 * D, D);
        gemm(true, false, keys, D, rows, p, keys, gb, D, A(1), dvh + k0 * D, D);
      }
      storeRows(dqh, Tn, C, D, dq + base);
    }
    storeRows(dkh, Tn, heads.Ckv, D, dk + kvBase);
    storeRows(dvh, Tn, heads.Ckv, D, dv + kvBase);
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ATTENTION_H
