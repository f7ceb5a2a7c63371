// Mixture-of-Experts routing on the CPU, forward and backward: the pieces a MoE feed-forward
// layer (Mixtral, Qwen2/3-MoE, OLMoE, DeepSeek-V3's routed experts) is composed of.
//
//   route:    router logits [T, E] -> for each token its top-k experts, their combine weights
//             (softmax or sigmoid scores, renormalized over the kept k or not, times a routed
//             scaling factor; DeepSeek-V3's per-expert bias moves the choice, not the weights),
//             and the dispatched layout (zrt/MoeLayout.h): the kept (token, expert) choices'
//             rows grouped by expert (offsets [E + 1], rowOf [T, k], -1 for a dropped choice);
//   dispatch: x [T, C] -> xs [R, C], token t's row copied to each of its kept rows;
//   grouped matmul: xs [R, C] x W [E, C, F] -> [R, F], expert e's rows times W[e]: one product
//             per expert at its real row count (the BLAS/oneDNN path the plan picks for that
//             shape), not one per token;
//   combine:  ys [R, C] -> y [T, C], y[t] = sum_j w[t, j] ys[rowOf[t, j]] over the kept choices;
//   auxiliary load-balancing loss (Switch Transformer / Mixtral): E sum_e f_e P_e, f_e the
//             fraction of the T k choices that chose expert e (before any capacity), P_e its mean
//             score; the router z-loss (ST-MoE).
//
// Each backward takes the forward's routing (the chosen experts and the layout are piecewise
// constant in the logits: no gradient flows through the choice). The rows past the kept ones
// (capacity mode) are written as zeros, so nothing reads memory no kernel wrote.
#ifndef ZRT_CPU_MOE_H
#define ZRT_CPU_MOE_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cpu/Matmul.h"
#include "zrt/MoeLayout.h"
#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// How a router turns logits into scores: softmax over the experts (Mixtral, Qwen, OLMoE) or
/// each expert's sigmoid (DeepSeek-V3).
enum class MoeScore : uint8_t { Softmax, Sigmoid };

struct MoeRouting {
  int64_t tokens = 0, experts = 0, topK = 0;
  MoeScore score = MoeScore::Softmax;
  bool renormalize = true;    // the kept weights divided by their sum (Mixtral; Qwen's norm_topk_prob)
  double scale = 1.0;         // the routed scaling factor (DeepSeek-V3's 2.5)
  double capacityFactor = 0;  // 0: dropless; else each expert keeps moeCapacity(...) rows
  int64_t groups = 1;         // DeepSeek-V3's group-limited routing: E / groups experts a group, and
  int64_t topkGroups = 1;     // each token chooses among its topkGroups best groups' (groups 1: all)
  int64_t capacity() const { return moeCapacity(tokens, experts, topK, capacityFactor); }
};

/// One token's scores s [E] from its logits l [E], in the accumulation type: the softmax over
/// the experts, or each one's sigmoid. Recomputed wherever a backward needs them (E values a
/// token) rather than kept: the router's logits are what the step keeps.
template <class T, class A> void moeScores(const T *l, int64_t experts, MoeScore score, A *s) {
  if (score == MoeScore::Softmax) {
    A top = static_cast<A>(l[0]);
    for (int64_t e = 1; e < experts; ++e)
      top = std::max(top, static_cast<A>(l[e]));
    A sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += (s[e] = std::exp(static_cast<A>(l[e]) - top));
    for (int64_t e = 0; e < experts; ++e)
      s[e] /= sum;
  } else {
    for (int64_t e = 0; e < experts; ++e)
      s[e] = A(1) / (A(1) + std::exp(-static_cast<A>(l[e])));
  }
}

/// The k best of the n candidates `allowed` by `key` (descending; ties to the lower index) into
/// `out` [k]; returns how many (fewer where fewer are allowed). By insertion: k is small (1-8 of up
/// to a few hundred).
template <class Key, class Allowed> int64_t topKOf(int64_t n, int64_t k, Key key, Allowed allowed, int32_t *out) {
  int64_t have = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (!allowed(e))
      continue;
    int64_t at = have;
    while (at > 0 && key(out[at - 1]) < key(e))
      --at;
    if (at >= k)
      continue;
    for (int64_t i = std::min(have, k - 1); i > at; --i)
      out[i] = out[i - 1];
    out[at] = static_cast<int32_t>(e);
    have = std::min(have + 1, k);
  }
  return have;
}

/// Each token's k experts (the highest scores, plus `bias` [E] where given, which only chooses;
/// ties to the lower expert) in `expert` [T, k] (descending), their weights in `weight` [T, k]
/// (0 for a dropped choice); `offsets` [E + 1] where each expert's rows start in the dispatched
/// order (offsets[E]: the kept rows), `rowOf` [T, k] each choice's row there, -1 if dropped.
/// With r.groups > 1 (DeepSeek-V3's group-limited routing) a group's score is the sum of its two
/// best choice scores, and a token chooses among the experts of its r.topkGroups best groups.
/// Rows go to an expert in priority order: every token's first choice in token order, then the
/// second choices, ... (GShard's and DeepSpeed's order), so with a capacity the later choices
/// and tokens are the ones dropped. Returns the dropped choices.
template <class T>
int64_t moeRoute(const T *logits, const T *bias, const MoeRouting &r, int32_t *expert, T *weight, int32_t *offsets,
                 int32_t *rowOf) {
  using A = Acc<T>;
  const int64_t E = r.experts, K = r.topK, capacity = r.capacity();
  const int64_t G = r.groups > 1 ? r.groups : 1, perGroup = E / G;
  parallelFor(r.tokens, 64, [&](int64_t t) {
    A *s = threadWorkspace<A>(E + G), *groupScore = s + E;
    moeScores(logits + t * E, E, r.score, s);
    auto key = [&](int64_t e) { return s[e] + (bias ? static_cast<A>(bias[e]) : A(0)); };
    auto every = [](int64_t) { return true; };
    int32_t *chosen = expert + t * K;
    if (G == 1) {
      topKOf(E, K, key, every, chosen);
      return;
    }
    int32_t *best = threadWorkspace<int32_t>(G + 2), *two = best + G;
    for (int64_t g = 0; g < G; ++g) {
      const int64_t n = topKOf(perGroup, 2, [&](int64_t i) { return key(g * perGroup + i); }, every, two);
      groupScore[g] = 0;
      for (int64_t i = 0; i < n; ++i)
        groupScore[g] += key(g * perGroup + two[i]);
    }
    const int64_t kept = topKOf(G, r.topkGroups, [&](int64_t g) { return groupScore[g]; }, every, best);
    auto inKeptGroup = [&](int64_t e) {
      for (int64_t i = 0; i < kept; ++i)
        if (best[i] == e / perGroup)
          return true;
      return false;
    };
    topKOf(E, K, key, inKeptGroup, chosen);
  });
  // The layout: each choice's place among its expert's, in priority order (one serial pass over
  // the T k ids); kept while it is within the capacity.
  Scratch<int32_t> next(E);
  for (int64_t j = 0; j < K; ++j)
    for (int64_t t = 0; t < r.tokens; ++t) {
      const int64_t i = t * K + j;
      const int32_t place = next[expert[i]]++;
      rowOf[i] = capacity == 0 || place < capacity ? place : -1;
    }
  offsets[0] = 0;
  for (int64_t e = 0; e < E; ++e)
    offsets[e + 1] = offsets[e] + (capacity == 0 ? next[e] : std::min<int32_t>(next[e], int32_t(capacity)));
  for (int64_t i = 0; i < r.tokens * K; ++i)
    if (rowOf[i] >= 0)
      rowOf[i] += offsets[expert[i]];
  // The weights of the kept choices (renormalized over them).
  parallelFor(r.tokens, 64, [&](int64_t t) {
    A *s = threadWorkspace<A>(E);
    moeScores(logits + t * E, E, r.score, s);
    A sum = 0;
    for (int64_t j = 0; j < K; ++j)
      if (rowOf[t * K + j] >= 0)
        sum += s[expert[t * K + j]];
    for (int64_t j = 0; j < K; ++j) {
      A w = rowOf[t * K + j] >= 0 ? s[expert[t * K + j]] : A(0);
      if (r.renormalize && sum > A(0))
        w /= sum;
      weight[t * K + j] = T(w * static_cast<A>(r.scale));
    }
  });
  return r.tokens * K - offsets[E];
}

/// One token's d logits [E] from its d scores [E]: through the softmax, or each sigmoid.
template <class T, class A> void moeScoreGrad(const A *ds, const A *s, int64_t experts, MoeScore score, T *dl) {
  if (score == MoeScore::Softmax) {
    A inner = 0;
    for (int64_t e = 0; e < experts; ++e)
      inner += ds[e] * s[e];
    for (int64_t e = 0; e < experts; ++e)
      dl[e] = T(s[e] * (ds[e] - inner));
  } else {
    for (int64_t e = 0; e < experts; ++e)
      dl[e] = T(ds[e] * s[e] * (A(1) - s[e]));
  }
}

/// d logits [T, E] from d weight [T, k], through the scores of the kept choices (the choice
/// itself, and a dropped choice's weight of 0, have no gradient).
template <class T>
void moeRouteGrad(const T *dweight, const T *logits, const int32_t *expert, const int32_t *rowOf, const MoeRouting &r,
                  T *dlogits) {
  using A = Acc<T>;
  const int64_t E = r.experts, K = r.topK;
  parallelFor(r.tokens, 64, [&](int64_t t) {
    A *s = threadWorkspace<A>(2 * E), *ds = s + E;
    moeScores(logits + t * E, E, r.score, s);
    const int32_t *chosen = expert + t * K, *rows = rowOf + t * K;
    const T *dw = dweight + t * K;
    // d score of each kept expert (the scale and the renormalization: w_j = c s_j / S).
    A sum = 0, dot = 0;
    for (int64_t j = 0; j < K; ++j)
      if (rows[j] >= 0) {
        sum += s[chosen[j]];
        dot += static_cast<A>(dw[j]) * s[chosen[j]];
      }
    const A c = static_cast<A>(r.scale);
    for (int64_t e = 0; e < E; ++e)
      ds[e] = 0;
    for (int64_t j = 0; j < K; ++j) {
      if (rows[j] < 0)
        continue;
      const A g = static_cast<A>(dw[j]);
      ds[chosen[j]] = r.renormalize ? c * (g / sum - dot / (sum * sum)) : c * g;
    }
    moeScoreGrad(ds, s, E, r.score, dlogits + t * E);
  });
}

/// The rows past the first `kept` of a [rows, cols] dispatched tensor, zeroed (capacity mode).
template <class T> void zeroUnkeptRows(T *xs, int64_t kept, int64_t rows, int64_t cols) {
  for (int64_t i = kept * cols; i < rows * cols; ++i)
    xs[i] = T(0.0f);
}

/// How many of the T k choices were kept (rowOf >= 0).
inline int64_t keptChoices(const int32_t *rowOf, int64_t choices) {
  int64_t kept = 0;
  for (int64_t i = 0; i < choices; ++i)
    kept += rowOf[i] >= 0;
  return kept;
}

/// xs [rows, C]: token t's row at each of its kept rows rowOf[t, j]; the rows past the kept ones
/// zero.
template <class T>
void moeDispatch(const T *x, const int32_t *rowOf, int64_t tokens, int64_t topK, int64_t cols, int64_t rows, T *xs) {
  parallelFor(tokens * topK, 256, [&](int64_t i) {
    if (rowOf[i] < 0)
      return;
    const T *from = x + (i / topK) * cols;
    T *to = xs + rowOf[i] * cols;
    for (int64_t c = 0; c < cols; ++c)
      to[c] = from[c];
  });
  zeroUnkeptRows(xs, keptChoices(rowOf, tokens * topK), rows, cols);
}

/// dx [T, C] = the sum of its kept rows of dxs (in j order).
template <class T>
void moeDispatchGrad(const T *dxs, const int32_t *rowOf, int64_t tokens, int64_t topK, int64_t cols, T *dx) {
  using A = Acc<T>;
  parallelFor(tokens, 64, [&](int64_t t) {
    T *to = dx + t * cols;
    for (int64_t c = 0; c < cols; ++c) {
      A sum = 0;
      for (int64_t j = 0; j < topK; ++j)
        if (const int32_t row = rowOf[t * topK + j]; row >= 0)
          sum += static_cast<A>(dxs[row * cols + c]);
      to[c] = T(sum);
    }
  });
}

/// y [T, C] = sum_j weight[t, j] ys[rowOf[t, j]] over the kept choices (in j order).
template <class T>
void moeCombine(const T *ys, const T *weight, const int32_t *rowOf, int64_t tokens, int64_t topK, int64_t cols, T *y) {
  using A = Acc<T>;
  parallelFor(tokens, 64, [&](int64_t t) {
    T *to = y + t * cols;
    for (int64_t c = 0; c < cols; ++c) {
      A sum = 0;
      for (int64_t j = 0; j < topK; ++j)
        if (const int32_t row = rowOf[t * topK + j]; row >= 0)
          sum += static_cast<A>(weight[t * topK + j]) * static_cast<A>(ys[row * cols + c]);
      to[c] = T(sum);
    }
  });
}

/// dys [rows, C] = weight[t, j] dy[t] at row rowOf[t, j] (the rows past the kept ones zero);
/// dweight [T, k] = <dy[t], ys[rowOf[t, j]]>, 0 for a dropped choice.
template <class T>
void moeCombineGrad(const T *dy, const T *ys, const T *weight, const int32_t *rowOf, int64_t tokens, int64_t topK,
                    int64_t cols, int64_t rows, T *dys, T *dweight) {
  using A = Acc<T>;
  parallelFor(tokens * topK, 256, [&](int64_t i) {
    if (rowOf[i] < 0) {
      dweight[i] = T(0.0f);
      return;
    }
    const T *g = dy + (i / topK) * cols, *row = ys + rowOf[i] * cols;
    T *to = dys + rowOf[i] * cols;
    const A w = static_cast<A>(weight[i]);
    A dot = 0;
    for (int64_t c = 0; c < cols; ++c) {
      to[c] = T(w * static_cast<A>(g[c]));
      dot += static_cast<A>(g[c]) * static_cast<A>(row[c]);
    }
    dweight[i] = T(dot);
  });
  zeroUnkeptRows(dys, keptChoices(rowOf, tokens * topK), rows, cols);
}

/// y [T, C] = shared [T, C] x sigmoid(gate [T, 1]): Qwen2-MoE's gated shared expert.
template <class T>
void moeSharedGate(const T *shared, const T *gate, int64_t tokens, int64_t cols, T *y) {
  using A = Acc<T>;
  parallelFor(tokens, 64, [&](int64_t t) {
    const A s = A(1) / (A(1) + std::exp(-static_cast<A>(gate[t])));
    for (int64_t c = 0; c < cols; ++c)
      y[t * cols + c] = T(static_cast<A>(shared[t * cols + c]) * s);
  });
}

/// dshared = dy sigmoid(gate), dgate = <dy, shared> sigmoid(gate) (1 - sigmoid(gate)), per token.
template <class T>
void moeSharedGateGrad(const T *dy, const T *shared, const T *gate, int64_t tokens, int64_t cols, T *dshared,
                       T *dgate) {
  using A = Acc<T>;
  parallelFor(tokens, 64, [&](int64_t t) {
    const A s = A(1) / (A(1) + std::exp(-static_cast<A>(gate[t])));
    A dot = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const A g = static_cast<A>(dy[t * cols + c]);
      dot += g * static_cast<A>(shared[t * cols + c]);
      dshared[t * cols + c] = T(g * s);
    }
    dgate[t] = T(dot * s * (A(1) - s));
  });
}

/// out [rows, N] = xs [rows, K] x W[e] ([K, N]; with transposeRhs W[e] is [N, K], a linear
/// layer's [out, in], and the product reads it transposed) for each expert e's rows
/// [offsets[e], offsets[e + 1]): one product per expert with rows, at its row count, on the path
/// the matmul plan chose for the balanced count of the `rows` (zrt/MoeLayout.h), as a product
/// whose m varies (one oneDNN primitive for every count); the rows past offsets[experts]
/// (capacity mode) zero.
template <class T>
void groupedMatmul(const T *xs, const T *w, const int32_t *offsets, int64_t experts, int64_t rows, int64_t k,
                   int64_t n, T *out, bool transposeRhs = false) {
  const int64_t even = plannedExpertRows(rows, experts);
  for (int64_t e = 0; e < experts; ++e)
    if (const int64_t count = offsets[e + 1] - offsets[e]; count > 0)
      matmulPlannedAs(xs + offsets[e] * k, w + e * k * n, out + offsets[e] * n,
                      MatmulShape{1, count, n, k, false, transposeRhs, false},
                      MatmulShape{1, even, n, k, false, transposeRhs, false, MatmulVarying::M});
  zeroUnkeptRows(out, offsets[experts], rows, n);
}

/// dxs [rows, K] = dout x W[e]^T per expert (the rows past offsets[experts] zero); dw [E, K, N] =
/// xs^T x dout per expert (zero for an expert no row reached). With transposeRhs (W[e] [N, K]):
/// dxs = dout x W[e], dw[e] = dout^T x xs. Either output may be null.
template <class T>
void groupedMatmulGrad(const T *dout, const T *xs, const T *w, const int32_t *offsets, int64_t experts, int64_t rows,
                       int64_t k, int64_t n, T *dxs, T *dw, bool transposeRhs = false) {
  const int64_t even = plannedExpertRows(rows, experts);
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t count = offsets[e + 1] - offsets[e];
    if (dxs && count > 0)
      matmulPlannedAs(dout + offsets[e] * n, w + e * k * n, dxs + offsets[e] * k,
                      MatmulShape{1, count, k, n, false, !transposeRhs, false},
                      MatmulShape{1, even, k, n, false, !transposeRhs, false, MatmulVarying::M});
    if (dw && count > 0 && transposeRhs)
      matmulPlannedAs(dout + offsets[e] * n, xs + offsets[e] * k, dw + e * k * n,
                      MatmulShape{1, n, k, count, true, false, false},
                      MatmulShape{1, n, k, even, true, false, false, MatmulVarying::K});
    else if (dw && count > 0)
      matmulPlannedAs(xs + offsets[e] * k, dout + offsets[e] * n, dw + e * k * n,
                      MatmulShape{1, k, n, count, true, false, false},
                      MatmulShape{1, k, n, even, true, false, false, MatmulVarying::K});
    else if (dw)
      for (int64_t i = 0; i < k * n; ++i)
        dw[e * k * n + i] = T(0.0f);
  }
  if (dxs)
    zeroUnkeptRows(dxs, offsets[experts], rows, k);
}

/// The load-balancing loss coef E sum_e f_e P_e (f_e: the fraction of the T k choices that chose
/// expert e, from `expert` [T, k], before any capacity drops them, as DeepSpeed's gating counts;
/// P_e: the mean score of expert e over the tokens), and, where `dlogits` is given, its gradient
/// d logits [T, E] times `dloss` through the scores; f is counted, not differentiated (Switch
/// Transformer, Mixtral's load_balancing_loss_func). Summed in double in token order, so the loss
/// does not depend on the thread count. With `pool` (context parallelism: these T tokens are this
/// rank's part of every sequence, one of `parts`), pool(stats) sums the choices' counts and the
/// score sums (stats [2E]) over the parts first: the loss is the whole sequence's, and the
/// gradient is its gradient with respect to these tokens' logits times `parts` (each part's
/// objective holds the whole loss, and train.bin averages them).
template <class T, class Pool = std::nullptr_t>
double moeAuxLoss(const T *logits, const int32_t *expert, const MoeRouting &r, double coef, double dloss,
                  T *dlogits, Pool pool = nullptr, int64_t parts = 1) {
  using A = Acc<T>;
  const int64_t E = r.experts;
  Scratch<double> mean(E), chose(E);
  Scratch<A> s(E);
  for (int64_t t = 0; t < r.tokens; ++t) {
    moeScores(logits + t * E, E, r.score, s.data());
    for (int64_t e = 0; e < E; ++e)
      mean[e] += double(s[e]);
  }
  for (int64_t i = 0; i < r.tokens * r.topK; ++i)
    chose[expert[i]] += 1;
  double tokens = double(r.tokens);
  if constexpr (!std::is_same_v<Pool, std::nullptr_t>) {
    pool(chose.data(), mean.data(), E);
    tokens *= double(parts);
  }
  const double choices = tokens * double(r.topK);
  double loss = 0;
  for (int64_t e = 0; e < E; ++e)
    loss += chose[e] / choices * mean[e] / tokens;
  loss *= coef * double(E);
  if (dlogits) {
    // d loss / d score[t, e] = coef E f_e / T (the whole sequence's T, times the parts), the
    // same for every token.
    Scratch<A> ds(E);
    for (int64_t e = 0; e < E; ++e)
      ds[e] = static_cast<A>(dloss * coef * double(E) * chose[e] / choices / tokens * double(parts));
    parallelFor(r.tokens, 64, [&](int64_t t) {
      A *st = threadWorkspace<A>(E);
      moeScores(logits + t * E, E, r.score, st);
      moeScoreGrad(ds.data(), st, E, r.score, dlogits + t * E);
    });
  }
  return loss;
}

/// The router z-loss (ST-MoE, Zoph et al. 2022): coef times the mean over tokens of
/// logsumexp(logits)^2, and, where `dlogits` is given, dloss times its gradient
/// 2 coef lse softmax(logits) / T. Summed in double in token order.
template <class T>
double moeZLoss(const T *logits, int64_t tokens, int64_t experts, double coef, double dloss, T *dlogits) {
  using A = Acc<T>;
  auto lse = [&](const T *l) {
    A top = static_cast<A>(l[0]);
    for (int64_t e = 1; e < experts; ++e)
      top = std::max(top, static_cast<A>(l[e]));
    A sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += std::exp(static_cast<A>(l[e]) - top);
    return top + std::log(sum);
  };
  double loss = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    const double z = double(lse(logits + t * experts));
    loss += z * z;
  }
  if (dlogits)
    parallelFor(tokens, 64, [&](int64_t t) {
      const T *l = logits + t * experts;
      const A z = lse(l), g = static_cast<A>(dloss * 2.0 * coef / double(tokens)) * z;
      for (int64_t e = 0; e < experts; ++e)
        dlogits[t * experts + e] = T(g * std::exp(static_cast<A>(l[e]) - z));
    });
  return coef * loss / double(tokens);
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_MOE_H
