// Causal multi-head attention on [B, T, C] tensors (H heads of D = C / H), forward and
// backward. The backward recomputes the probabilities, so nothing of size T x T is stored
// between the two (the flash-attention trade).
#ifndef ZRT_CPU_ATTENTION_H
#define ZRT_CPU_ATTENTION_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

namespace detail {
/// Softmax probabilities p[0..t] of query row t of one (batch, head).
template <class T, class A>
inline void attentionRow(const T *q, const T *k, int64_t t, int64_t C, int64_t D, A scale,
                         A *p) {
  A maxValue = -INFINITY;
  for (int64_t s = 0; s <= t; ++s) {
    A dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += static_cast<A>(q[t * C + d]) * static_cast<A>(k[s * C + d]);
    p[s] = dot * scale;
    maxValue = std::max(maxValue, p[s]);
  }
  A sum = 0;
  for (int64_t s = 0; s <= t; ++s) {
    p[s] = std::exp(p[s] - maxValue);
    sum += p[s];
  }
  for (int64_t s = 0; s <= t; ++s)
    p[s] /= sum;
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
    std::vector<A> p(Tn), acc(D);
    for (int64_t t = 0; t < Tn; ++t) {
      detail::attentionRow(q + base, k + base, t, C, D, scale, p.data());
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t s = 0; s <= t; ++s)
        for (int64_t d = 0; d < D; ++d)
          acc[d] += p[s] * static_cast<A>(v[base + s * C + d]);
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
    std::vector<A> p(Tn), dp(Tn), dqAcc(D), dkAcc(Tn * D, A(0)), dvAcc(Tn * D, A(0));
    for (int64_t t = 0; t < Tn; ++t) {
      detail::attentionRow(q + base, k + base, t, C, D, scale, p.data());
      A dotPdp = 0;
      for (int64_t s = 0; s <= t; ++s) {
        A dot = 0;
        for (int64_t d = 0; d < D; ++d) {
          A g = static_cast<A>(dout[base + t * C + d]);
          dot += g * static_cast<A>(v[base + s * C + d]);
          dvAcc[s * D + d] += p[s] * g;
        }
        dp[s] = dot;
        dotPdp += p[s] * dot;
      }
      std::fill(dqAcc.begin(), dqAcc.end(), A(0));
      for (int64_t s = 0; s <= t; ++s) {
        A ds = p[s] * (dp[s] - dotPdp) * scale;
        for (int64_t d = 0; d < D; ++d) {
          dqAcc[d] += ds * static_cast<A>(k[base + s * C + d]);
          dkAcc[s * D + d] += ds * static_cast<A>(q[base + t * C + d]);
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
