// Causal multi-head attention on [B, T, C] tensors (H heads of D = C / H), forward and
// backward. The backward recomputes the probabilities, so nothing of size T x T is stored
// between the two (the flash-attention trade).
#ifndef ZRT_CPU_ATTENTION_H
#define ZRT_CPU_ATTENTION_H

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

namespace detail {
/// One head's [T, D] slice of a [B, T, C] tensor (starting at `x`), as contiguous rows in A.
template <class T, class A>
void loadRows(const T *x, int64_t Tn, int64_t C, int64_t D, A *out) {
  for (int64_t s = 0; s < Tn; ++s)
    for (int64_t d = 0; d < D; ++d)
      out[s * D + d] = static_cast<A>(x[s * C + d]);
}
/// The same slice transposed to [D, T]: loops over key positions become unit-stride
/// and independent, so they vectorize (a dot product over d, a serial chain of
/// additions, does not without reordering the sum).
template <class T, class A>
void loadColumns(const T *x, int64_t Tn, int64_t C, int64_t D, A *out) {
  for (int64_t s = 0; s < Tn; ++s)
    for (int64_t d = 0; d < D; ++d)
      out[d * Tn + s] = static_cast<A>(x[s * C + d]);
}
/// Softmax probabilities p[0..t] of query row `q` (D values) against keys 0..t,
/// given the keys as columns kT [D, T]. Each score sums over d in order.
template <class A>
inline void attentionRow(const A *q, const A *kT, int64_t Tn, int64_t t, int64_t D, A scale,
                         A *p) {
  const int64_t n = t + 1;
  zero(p, n);
  for (int64_t d = 0; d < D; ++d) {
    const A qd = q[d];
    const A *keys = kT + d * Tn;
    for (int64_t s = 0; s < n; ++s)
      p[s] += qd * keys[s];
  }
  A maxValue = -INFINITY;
  for (int64_t s = 0; s < n; ++s) {
    p[s] *= scale;
    maxValue = std::max(maxValue, p[s]);
  }
  A sum = 0;
  for (int64_t s = 0; s < n; ++s) {
    p[s] = std::exp(p[s] - maxValue);
    sum += p[s];
  }
  const A inv = A(1) / sum;
  for (int64_t s = 0; s < n; ++s)
    p[s] *= inv;
}
/// Runs fn(base) for every (batch, head) in parallel, where `base` is the
/// offset of that head's first channel at time 0 in a [B, T, C] tensor.
template <class F> void forEachHead(int64_t B, int64_t Tn, int64_t C, int64_t H, F &&fn) {
  const int64_t D = C / H;
  parallelFor(B * H, 1, [&](int64_t bh) { fn((bh / H) * Tn * C + (bh % H) * D); });
}
} // namespace detail

template <class T>
void causalAttention(const T *q, const T *k, const T *v, T *out, int64_t B, int64_t Tn,
                     int64_t C, int64_t H) {
  using A = Acc<T>;
  const int64_t D = C / H;
  const A scale = A(1) / std::sqrt(A(D));
  detail::forEachHead(B, Tn, C, H, [&](int64_t base) {
    Scratch<A> qh(Tn * D), kT(D * Tn), vh(Tn * D), p(Tn), acc(D);
    detail::loadRows(q + base, Tn, C, D, qh.data());
    detail::loadColumns(k + base, Tn, C, D, kT.data());
    detail::loadRows(v + base, Tn, C, D, vh.data());
    for (int64_t t = 0; t < Tn; ++t) {
      detail::attentionRow(qh.data() + t * D, kT.data(), Tn, t, D, scale, p.data());
      zero(acc.data(), D);
      for (int64_t s = 0; s <= t; ++s) {
        const A ps = p[s];
        const A *vs = vh.data() + s * D;
        for (int64_t d = 0; d < D; ++d)
          acc[d] += ps * vs[d];
      }
      for (int64_t d = 0; d < D; ++d)
        out[base + t * C + d] = T(acc[d]);
    }
  });
}

/// Each (batch, head) owns disjoint channel slices of dq, dk and dv, so the
/// parallel loop needs no atomics and the sums have a fixed order.
template <class T>
void causalAttentionGrad(const T *dout, const T *q, const T *k, const T *v, T *dq, T *dk, T *dv,
                         int64_t B, int64_t Tn, int64_t C, int64_t H) {
  using A = Acc<T>;
  const int64_t D = C / H;
  const A scale = A(1) / std::sqrt(A(D));
  detail::forEachHead(B, Tn, C, H, [&](int64_t base) {
    Scratch<A> qh(Tn * D), kh(Tn * D), kT(D * Tn), vT(D * Tn), gh(Tn * D);
    Scratch<A> p(Tn), dp(Tn), dqAcc(D), dkAcc(Tn * D), dvAcc(Tn * D);
    detail::loadRows(q + base, Tn, C, D, qh.data());
    detail::loadRows(k + base, Tn, C, D, kh.data());
    detail::loadColumns(k + base, Tn, C, D, kT.data());
    detail::loadColumns(v + base, Tn, C, D, vT.data());
    detail::loadRows(dout + base, Tn, C, D, gh.data());
    for (int64_t t = 0; t < Tn; ++t) {
      const A *qt = qh.data() + t * D, *g = gh.data() + t * D;
      detail::attentionRow(qt, kT.data(), Tn, t, D, scale, p.data());
      // dp[s] = dout_t . v_s; dv_s += p[s] dout_t.
      zero(dp.data(), t + 1);
      for (int64_t d = 0; d < D; ++d) {
        const A gd = g[d];
        const A *values = vT.data() + d * Tn;
        for (int64_t s = 0; s <= t; ++s)
          dp[s] += gd * values[s];
      }
      A dotPdp = 0;
      for (int64_t s = 0; s <= t; ++s) {
        dotPdp += p[s] * dp[s];
        A *dvs = dvAcc.data() + s * D;
        for (int64_t d = 0; d < D; ++d)
          dvs[d] += p[s] * g[d];
      }
      // Through the softmax: ds = p (dp - p.dp), then dq_t += ds k_s and dk_s += ds q_t.
      zero(dqAcc.data(), D);
      for (int64_t s = 0; s <= t; ++s) {
        const A ds = p[s] * (dp[s] - dotPdp) * scale;
        const A *ks = kh.data() + s * D;
        A *dks = dkAcc.data() + s * D;
        for (int64_t d = 0; d < D; ++d) {
          dqAcc[d] += ds * ks[d];
          dks[d] += ds * qt[d];
        }
      }
      for (int64_t d = 0; d < D; ++d)
        dq[base + t * C + d] = T(dqAcc[d]);
    }
    for (int64_t s = 0; s < Tn; ++s)
      for (int64_t d = 0; d < D; ++d) {
        dk[base + s * C + d] = T(dkAcc[s * D + d]);
        dv[base + s * C + d] = T(dvAcc[s * D + d]);
      }
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ATTENTION_H
