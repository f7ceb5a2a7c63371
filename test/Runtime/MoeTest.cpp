// The Mixture-of-Experts kernels (runtime/cpu/Moe.h): the router's choice against a brute-force
// top-k, the dispatched order's invariants, every backward against central finite differences of
// its forward in f64, and a whole Mixtral sparse MoE block (router, top-2 of 8 renormalized,
// SwiGLU experts, combine; Hugging Face's MixtralSparseMoeBlock) composed from them against a
// token-by-token reference written here, in f64 and f32, with its input, router and expert
// gradients against finite differences.
#include "KernelTestUtils.h"

#include "cpu/Elementwise.h"
#include "cpu/Matmul.h"
#include "cpu/Moe.h"

#include <algorithm>
#include <numeric>

using namespace zrt::cpu;
using zrt::bf16;
using zrt::moeDispatchedRows;
using namespace zrt::test;

namespace {

struct Routed {
  Vec scores, weight; // scores: the reference's, in f64
  std::vector<int32_t> expert, offsets, rowOf;
  int64_t dropped = 0; // what moeRoute said it dropped
};

/// The softmax or sigmoid scores of each token, written here.
Vec referenceScores(const Vec &logits, const MoeRouting &r) {
  Vec s(logits.size());
  for (int64_t t = 0; t < r.tokens; ++t) {
    const double *l = logits.data() + t * r.experts;
    double *o = s.data() + t * r.experts, top = *std::max_element(l, l + r.experts), sum = 0;
    for (int64_t e = 0; e < r.experts; ++e)
      o[e] = r.score == MoeScore::Softmax ? std::exp(l[e] - top) : 1 / (1 + std::exp(-l[e]));
    for (int64_t e = 0; e < r.experts; ++e)
      sum += o[e];
    if (r.score == MoeScore::Softmax)
      for (int64_t e = 0; e < r.experts; ++e)
        o[e] /= sum;
  }
  return s;
}

Routed route(const Vec &logits, const Vec *bias, const MoeRouting &r) {
  Routed out;
  out.scores = referenceScores(logits, r);
  out.weight.resize(r.tokens * r.topK);
  out.expert.resize(r.tokens * r.topK);
  out.offsets.resize(r.experts + 1);
  out.rowOf.resize(r.tokens * r.topK);
  out.dropped = moeRoute(logits.data(), bias ? bias->data() : nullptr, r, out.expert.data(), out.weight.data(),
                         out.offsets.data(), out.rowOf.data());
  return out;
}

/// `ids` by `key`, highest first (ties keep their order: the lower expert first).
template <class Key> std::vector<int32_t> byKey(std::vector<int32_t> ids, Key key) {
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
  return ids;
}

std::vector<int32_t> firstIds(int64_t n) {
  std::vector<int32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

/// Token t chose the first k of `want`, weighted by their scores (renormalized over them where the
/// routing renormalizes) times `scale`.
void expectChosen(const Routed &got, const MoeRouting &r, int64_t t, const std::vector<int32_t> &want, double scale) {
  double sum = 0;
  for (int64_t j = 0; j < r.topK; ++j)
    sum += got.scores[t * r.experts + want[j]];
  for (int64_t j = 0; j < r.topK; ++j) {
    EXPECT_EQ(got.expert[t * r.topK + j], want[j]) << "token " << t << " choice " << j;
    const double s = got.scores[t * r.experts + want[j]];
    EXPECT_NEAR(got.weight[t * r.topK + j], scale * (r.renormalize ? s / sum : s), 1e-12);
  }
}

class Routings : public ::testing::TestWithParam<std::tuple<MoeScore, bool, bool>> {};
INSTANTIATE_TEST_SUITE_P(Moe, Routings,
                         ::testing::Combine(::testing::Values(MoeScore::Softmax, MoeScore::Sigmoid),
                                            ::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<MoeScore, bool, bool>> &info) {
                           return std::string(std::get<0>(info.param) == MoeScore::Softmax ? "Softmax" : "Sigmoid") +
                                  (std::get<1>(info.param) ? "Renormalized" : "") +
                                  (std::get<2>(info.param) ? "Biased" : "");
                         });

// The k highest scores (plus the bias, which only chooses), descending; the weights those
// scores (renormalized, scaled); every (token, choice) on its own row, the rows grouped by
// expert in expert order and within one in priority order (first choices in token order, then
// second choices, ...).
TEST_P(Routings, ChooseTheTopKAndGroupTheRowsByExpert) {
  const MoeScore score = std::get<0>(GetParam());
  const bool renormalize = std::get<1>(GetParam()), biased = std::get<2>(GetParam());
  const MoeRouting r{37, 8, 3, score, renormalize, 2.5};
  const Vec logits = randomVec(r.tokens * r.experts, 5, -3, 3), bias = randomVec(r.experts, 6, -0.3, 0.3);
  const Routed got = route(logits, biased ? &bias : nullptr, r);
  std::vector<int64_t> seen(r.tokens * r.topK, 0);
  for (int64_t t = 0; t < r.tokens; ++t) {
    auto key = [&](int32_t e) { return got.scores[t * r.experts + e] + (biased ? bias[e] : 0.0); };
    const std::vector<int32_t> order = byKey(firstIds(r.experts), key);
    expectChosen(got, r, t, order, 2.5);
    for (int64_t j = 0; j < r.topK; ++j) {
      const int64_t row = got.rowOf[t * r.topK + j];
      ASSERT_GE(row, got.offsets[order[j]]);
      ASSERT_LT(row, got.offsets[order[j] + 1]);
      ++seen[row];
    }
  }
  for (int64_t i = 0; i < r.tokens * r.topK; ++i)
    EXPECT_EQ(seen[i], 1) << "row " << i;
  EXPECT_EQ(got.offsets[r.experts], r.tokens * r.topK);
  // Priority order within an expert's rows: (choice, token) ascending.
  for (int64_t a = 0; a < r.tokens * r.topK; ++a)
    for (int64_t b = 0; b < r.tokens * r.topK; ++b)
      if (got.expert[a] == got.expert[b] && std::make_pair(a % r.topK, a / r.topK) < std::make_pair(b % r.topK, b / r.topK))
        EXPECT_LT(got.rowOf[a], got.rowOf[b]);
}

// DeepSeek-V3's group-limited routing (n_group, topk_group): a group scores the sum of its two
// best choice scores (score plus bias); each token takes its k among the experts of its best
// groups. Against a brute force over sorted lists.
TEST_P(Routings, GroupLimitedRoutingChoosesInTheBestGroups) {
  const MoeScore score = std::get<0>(GetParam());
  const bool renormalize = std::get<1>(GetParam()), biased = std::get<2>(GetParam());
  MoeRouting r{29, 12, 3, score, renormalize, 2.5};
  r.groups = 4; // 3 experts a group
  r.topkGroups = 2;
  const Vec logits = randomVec(r.tokens * r.experts, 28, -3, 3), bias = randomVec(r.experts, 29, -0.3, 0.3);
  const Routed got = route(logits, biased ? &bias : nullptr, r);
  const int64_t perGroup = r.experts / r.groups;
  int64_t outsideTheFlatTopK = 0;
  for (int64_t t = 0; t < r.tokens; ++t) {
    auto key = [&](int64_t e) { return got.scores[t * r.experts + e] + (biased ? bias[e] : 0.0); };
    std::vector<double> groupScore(r.groups);
    for (int64_t g = 0; g < r.groups; ++g) {
      std::vector<double> keys;
      for (int64_t i = 0; i < perGroup; ++i)
        keys.push_back(key(g * perGroup + i));
      std::sort(keys.rbegin(), keys.rend());
      groupScore[g] = keys[0] + keys[1];
    }
    std::vector<int> groups(r.groups);
    std::iota(groups.begin(), groups.end(), 0);
    std::stable_sort(groups.begin(), groups.end(), [&](int a, int b) { return groupScore[a] > groupScore[b]; });
    std::vector<int32_t> inGroups;
    for (int64_t e = 0; e < r.experts; ++e)
      for (int64_t i = 0; i < r.topkGroups; ++i)
        if (groups[i] == e / perGroup)
          inGroups.push_back(int32_t(e));
    const std::vector<int32_t> allowed = byKey(inGroups, key), flat = byKey(firstIds(r.experts), key);
    expectChosen(got, r, t, allowed, 2.5);
    for (int64_t j = 0; j < r.topK; ++j)
      outsideTheFlatTopK += std::find(flat.begin(), flat.begin() + r.topK, allowed[j]) == flat.begin() + r.topK;
  }
  EXPECT_GT(outsideTheFlatTopK, 0) << "the groups must change some token's choice for the test to mean anything";
}

/// DeepSpeed's top-k gating with a capacity, written here: each expert keeps its first C choices
/// in priority order (all first choices in token order, then the second ones, ...).
std::vector<bool> keptByCapacity(const std::vector<int32_t> &expert, const MoeRouting &r, int64_t capacity) {
  std::vector<int64_t> taken(r.experts, 0);
  std::vector<bool> kept(expert.size(), false);
  for (int64_t j = 0; j < r.topK; ++j)
    for (int64_t t = 0; t < r.tokens; ++t) {
      const int64_t i = t * r.topK + j;
      kept[i] = taken[expert[i]]++ < capacity;
    }
  return kept;
}

// A capacity factor: the choices past an expert's capacity (priority order) are dropped (row -1,
// weight 0, the kept ones renormalized), the kept rows fill [0, offsets[E]) grouped by expert, and
// the route says how many it dropped.
TEST_P(Routings, ACapacityDropsTheChoicesPastItInPriorityOrder) {
  const MoeScore score = std::get<0>(GetParam());
  const bool renormalize = std::get<1>(GetParam()), biased = std::get<2>(GetParam());
  MoeRouting r{41, 6, 2, score, renormalize, 1.5};
  r.capacityFactor = 0.75;
  const int64_t capacity = r.capacity();
  ASSERT_EQ(capacity, 11); // ceil(0.75 x 41 x 2 / 6)
  ASSERT_EQ(moeDispatchedRows(r.tokens, r.experts, r.topK, r.capacityFactor), 66);
  // Skewed logits: the low experts are wanted by more tokens than they can take.
  Vec logits = randomVec(r.tokens * r.experts, 25, -2, 2), bias = randomVec(r.experts, 26, -0.3, 0.3);
  for (int64_t t = 0; t < r.tokens; ++t)
    for (int64_t e = 0; e < r.experts; ++e)
      logits[t * r.experts + e] += e < 2 ? 1.5 : 0.0;
  const Routed got = route(logits, biased ? &bias : nullptr, r);
  const std::vector<bool> kept = keptByCapacity(got.expert, r, capacity);
  int64_t want = 0;
  std::vector<int64_t> seen(r.tokens * r.topK, 0);
  for (int64_t t = 0; t < r.tokens; ++t) {
    double sum = 0;
    for (int64_t j = 0; j < r.topK; ++j)
      if (kept[t * r.topK + j])
        sum += got.scores[t * r.experts + got.expert[t * r.topK + j]];
    for (int64_t j = 0; j < r.topK; ++j) {
      const int64_t i = t * r.topK + j;
      if (!kept[i]) {
        ++want;
        EXPECT_EQ(got.rowOf[i], -1) << "token " << t << " choice " << j;
        EXPECT_EQ(got.weight[i], 0.0);
        continue;
      }
      const double s = got.scores[t * r.experts + got.expert[i]];
      EXPECT_NEAR(got.weight[i], 1.5 * (renormalize ? s / sum : s), 1e-12);
      ASSERT_GE(got.rowOf[i], got.offsets[got.expert[i]]);
      ASSERT_LT(got.rowOf[i], got.offsets[got.expert[i] + 1]);
      ++seen[got.rowOf[i]];
    }
  }
  EXPECT_GT(want, 0) << "the test's logits must overflow a capacity";
  EXPECT_EQ(got.dropped, want);
  EXPECT_EQ(got.offsets[r.experts], r.tokens * r.topK - want);
  for (int64_t e = 0; e < r.experts; ++e)
    EXPECT_LE(got.offsets[e + 1] - got.offsets[e], capacity);
  for (int64_t i = 0; i < got.offsets[r.experts]; ++i)
    EXPECT_EQ(seen[i], 1) << "row " << i;

  // The backward treats the kept set as the forward's (piecewise constant): against finite
  // differences of the weights with the choice and the drops fixed.
  const Vec dw = randomVec(r.tokens * r.topK, 27);
  Vec dl(logits.size());
  moeRouteGrad(dw.data(), logits.data(), got.expert.data(), got.rowOf.data(), r, dl.data());
  auto fwd = [&](const std::vector<Vec> &in) { return route(in[0], biased ? &bias : nullptr, r).weight; };
  expectGradientsMatch("moe route with a capacity", {logits}, fwd, dw, {dl}, {0}, 66);
}

// d logits through the chosen experts' scores, against finite differences of the weights (the
// choice does not move at a step of 1e-5 away from ties).
TEST_P(Routings, RouteGradMatchesFiniteDifferences) {
  const MoeScore score = std::get<0>(GetParam());
  const bool renormalize = std::get<1>(GetParam()), biased = std::get<2>(GetParam());
  const MoeRouting r{11, 6, 2, score, renormalize, 1.7};
  const Vec logits = randomVec(r.tokens * r.experts, 7, -2, 2), bias = randomVec(r.experts, 8, -0.3, 0.3),
            dw = randomVec(r.tokens * r.topK, 9);
  const Routed at = route(logits, biased ? &bias : nullptr, r);
  Vec dl(logits.size());
  moeRouteGrad(dw.data(), logits.data(), at.expert.data(), at.rowOf.data(), r, dl.data());
  auto fwd = [&](const std::vector<Vec> &in) { return route(in[0], biased ? &bias : nullptr, r).weight; };
  expectGradientsMatch("moe route", {logits}, fwd, dw, {dl}, {0}, 66);
}

// Dropless and with a capacity that drops choices (the unkept rows zero).
TEST(Moe, DispatchAndCombineGradsMatchFiniteDifferences) {
  for (double factor : {0.0, 0.6}) {
    MoeRouting r{9, 5, 2};
    r.capacityFactor = factor;
    const int64_t C = 7, rows = moeDispatchedRows(r.tokens, r.experts, r.topK, factor);
    Vec logits = randomVec(r.tokens * r.experts, 10, -2, 2);
    for (int64_t t = 0; t < r.tokens; ++t)
      logits[t * r.experts] += 2.0; // expert 0 overflows its capacity
    const Routed at = route(logits, nullptr, r);
    if (factor > 0)
      ASSERT_LT(at.offsets[r.experts], r.tokens * r.topK);
    const Vec x = randomVec(r.tokens * C, 11), dxs = randomVec(rows * C, 12);
    Vec dx(x.size());
    moeDispatchGrad(dxs.data(), at.rowOf.data(), r.tokens, r.topK, C, dx.data());
    auto dispatch = [&](const std::vector<Vec> &in) {
      Vec xs(rows * C, 9.0);
      moeDispatch(in[0].data(), at.rowOf.data(), r.tokens, r.topK, C, rows, xs.data());
      for (int64_t i = at.offsets[r.experts] * C; i < rows * C; ++i)
        EXPECT_EQ(xs[i], 0.0);
      return xs;
    };
    expectGradientsMatch("moe dispatch", {x}, dispatch, dxs, {dx}, {0});

    const Vec ys = randomVec(rows * C, 13), dy = randomVec(r.tokens * C, 14);
    Vec dys(ys.size(), 9.0), dweight(at.weight.size());
    moeCombineGrad(dy.data(), ys.data(), at.weight.data(), at.rowOf.data(), r.tokens, r.topK, C, rows, dys.data(),
                   dweight.data());
    for (int64_t i = at.offsets[r.experts] * C; i < rows * C; ++i)
      EXPECT_EQ(dys[i], 0.0);
    auto combine = [&](const std::vector<Vec> &in) {
      Vec y(r.tokens * C);
      moeCombine(in[0].data(), in[1].data(), at.rowOf.data(), r.tokens, r.topK, C, y.data());
      return y;
    };
    expectGradientsMatch("moe combine", {ys, at.weight}, combine, dy, {dys, dweight}, {0, 1});
  }
}

// One product per expert at its row count equals each row times its expert's weight, stored [K, N]
// or, with transpose_rhs, a linear layer's [N, K] (Hugging Face's experts); its gradients against
// finite differences; an expert no row reached gets a zero weight gradient.
TEST(Moe, GroupedMatmulIsEachRowTimesItsExpertAndItsGradsMatch) {
  const int64_t E = 4, K = 6, N = 5;
  const std::vector<int32_t> offsets{0, 3, 3, 7, 8}; // expert 1 gets no row
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transpose_rhs" : "[K, N]");
    const Vec xs = randomVec(8 * K, 15), w = randomVec(E * K * N, 16), dout = randomVec(8 * N, 17);
    auto weight = [&](int64_t e, int64_t k, int64_t n) {
      return transposed ? w[(e * N + n) * K + k] : w[(e * K + k) * N + n];
    };
    Vec out(8 * N);
    groupedMatmul(xs.data(), w.data(), offsets.data(), E, 8, K, N, out.data(), transposed);
    for (int64_t e = 0; e < E; ++e)
      for (int64_t i = offsets[e]; i < offsets[e + 1]; ++i)
        for (int64_t n = 0; n < N; ++n) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k)
            want += xs[i * K + k] * weight(e, k, n);
          EXPECT_NEAR(out[i * N + n], want, 1e-12);
        }
    Vec dxs(xs.size()), dw(w.size(), 7.0);
    groupedMatmulGrad(dout.data(), xs.data(), w.data(), offsets.data(), E, 8, K, N, dxs.data(), dw.data(),
                      transposed);
    for (int64_t i = 0; i < K * N; ++i)
      EXPECT_EQ(dw[1 * K * N + i], 0.0);
    auto fwd = [&](const std::vector<Vec> &in) {
      Vec o(8 * N);
      groupedMatmul(in[0].data(), in[1].data(), offsets.data(), E, 8, K, N, o.data(), transposed);
      return o;
    };
    expectGradientsMatch("grouped matmul", {xs, w}, fwd, dout, {dxs, dw}, {0, 1});
  }
}

// Qwen2-MoE's gated shared expert: each token's output times the sigmoid of its gate logit; both
// gradients against finite differences (gate logits of both signs and large, where sigmoid saturates).
TEST(Moe, SharedGateIsTheOutputTimesTheSigmoidOfItsGateAndItsGradsMatch) {
  const int64_t T = 7, C = 5;
  const Vec shared = randomVec(T * C, 31), gate = randomVec(T, 32, -6, 6), dy = randomVec(T * C, 33);
  Vec y(T * C);
  moeSharedGate(shared.data(), gate.data(), T, C, y.data());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c)
      EXPECT_NEAR(y[t * C + c], shared[t * C + c] / (1 + std::exp(-gate[t])), 1e-12);
  Vec dshared(shared.size()), dgate(gate.size());
  moeSharedGateGrad(dy.data(), shared.data(), gate.data(), T, C, dshared.data(), dgate.data());
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec o(T * C);
    moeSharedGate(in[0].data(), in[1].data(), T, C, o.data());
    return o;
  };
  expectGradientsMatch("moe shared gate", {shared, gate}, fwd, dy, {dshared, dgate}, {0, 1});
}

// Mixtral's load_balancing_loss_func for one layer: E sum_e f_e P_e; its gradient through the
// scores (the counts fixed).
TEST(Moe, AuxLossIsMixtralsAndItsGradMatches) {
  for (MoeScore score : {MoeScore::Softmax, MoeScore::Sigmoid}) {
    const MoeRouting r{13, 6, 2, score, true, 1.0};
    const Vec logits = randomVec(r.tokens * r.experts, 18, -2, 2);
    const Routed at = route(logits, nullptr, r);
    double want = 0;
    for (int64_t e = 0; e < r.experts; ++e) {
      double f = 0, p = 0;
      for (int64_t t = 0; t < r.tokens; ++t) {
        for (int64_t j = 0; j < r.topK; ++j)
          f += at.expert[t * r.topK + j] == e ? 1.0 : 0.0;
        p += at.scores[t * r.experts + e];
      }
      want += f / double(r.tokens * r.topK) * p / double(r.tokens);
    }
    Vec dl(logits.size());
    EXPECT_NEAR(moeAuxLoss(logits.data(), at.expert.data(), r, 0.02, 1.0, dl.data()), 0.02 * r.experts * want,
                1e-12);
    auto fwd = [&](const std::vector<Vec> &in) { // the counts stay the forward's
      return Vec{moeAuxLoss(in[0].data(), at.expert.data(), r, 0.02, 1.0, static_cast<double *>(nullptr))};
    };
    expectGradientsMatch("moe aux loss", {logits}, fwd, Vec{1.0}, {dl}, {0});
    // dloss scales the gradient (the loss's seed, or the mean over micro-batches).
    Vec dlHalf(logits.size());
    moeAuxLoss(logits.data(), at.expert.data(), r, 0.02, 0.5, dlHalf.data());
    for (size_t i = 0; i < dl.size(); ++i)
      EXPECT_NEAR(dlHalf[i], 0.5 * dl[i], 1e-15);
  }
}

// ST-MoE's router z-loss: coef mean_t logsumexp(logits_t)^2, and its gradient.
TEST(Moe, RouterZLossAndItsGradMatch) {
  const int64_t tokens = 9, experts = 5;
  const Vec logits = randomVec(tokens * experts, 19, -3, 3);
  double want = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    double sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += std::exp(logits[t * experts + e]);
    want += std::log(sum) * std::log(sum);
  }
  Vec dl(logits.size());
  EXPECT_NEAR(moeZLoss(logits.data(), tokens, experts, 1e-3, 1.0, dl.data()), 1e-3 * want / tokens, 1e-14);
  auto fwd = [&](const std::vector<Vec> &in) {
    return Vec{moeZLoss(in[0].data(), tokens, experts, 1e-3, 1.0, static_cast<double *>(nullptr))};
  };
  expectGradientsMatch("router z-loss", {logits}, fwd, Vec{1.0}, {dl}, {0});
}

/// A Mixtral sparse MoE block from the kernels: logits = x Wr; top-k renormalized softmax (with
/// r.capacityFactor, the choices past a capacity dropped); per expert down(silu(x Wg) * (x Wu));
/// combined. Returns y [T, C].
template <class T>
std::vector<T> moeBlock(const std::vector<T> &x, const std::vector<T> &wr, const std::vector<T> &wg,
                        const std::vector<T> &wu, const std::vector<T> &wd, const MoeRouting &r, int64_t C, int64_t F) {
  const int64_t choices = r.tokens * r.topK, rows = moeDispatchedRows(r.tokens, r.experts, r.topK, r.capacityFactor);
  std::vector<T> logits(r.tokens * r.experts), weight(choices), xs(rows * C), g(rows * F), u(rows * F), h(rows * F),
      ys(rows * C), y(r.tokens * C);
  std::vector<int32_t> expert(choices), offsets(r.experts + 1), rowOf(choices);
  matmul(x.data(), wr.data(), logits.data(), MatmulShape{1, r.tokens, r.experts, C, false, false, false});
  moeRoute(logits.data(), static_cast<const T *>(nullptr), r, expert.data(), weight.data(), offsets.data(),
           rowOf.data());
  moeDispatch(x.data(), rowOf.data(), r.tokens, r.topK, C, rows, xs.data());
  groupedMatmul(xs.data(), wg.data(), offsets.data(), r.experts, rows, C, F, g.data());
  groupedMatmul(xs.data(), wu.data(), offsets.data(), r.experts, rows, C, F, u.data());
  silu(g.data(), h.data(), rows * F);
  for (int64_t i = 0; i < rows * F; ++i)
    h[i] = T(static_cast<Acc<T>>(h[i]) * static_cast<Acc<T>>(u[i]));
  groupedMatmul(h.data(), wd.data(), offsets.data(), r.experts, rows, F, C, ys.data());
  moeCombine(ys.data(), weight.data(), rowOf.data(), r.tokens, r.topK, C, y.data());
  return y;
}

/// The same block token by token, as MixtralSparseMoeBlock computes it (f64); with a capacity,
/// DeepSpeed's rule (keptByCapacity) decides which choices count, the kept ones renormalized.
Vec moeBlockReference(const Vec &x, const Vec &wr, const Vec &wg, const Vec &wu, const Vec &wd, const MoeRouting &r,
                      int64_t C, int64_t F) {
  std::vector<Vec> probs(r.tokens);
  std::vector<int32_t> chosen(r.tokens * r.topK);
  for (int64_t t = 0; t < r.tokens; ++t) {
    Vec &p = probs[t];
    p.assign(r.experts, 0.0);
    for (int64_t e = 0; e < r.experts; ++e)
      for (int64_t c = 0; c < C; ++c)
        p[e] += x[t * C + c] * wr[c * r.experts + e];
    const double top = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (double &v : p)
      sum += (v = std::exp(v - top));
    for (double &v : p)
      v /= sum;
    std::vector<int> order(r.experts);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
    for (int64_t j = 0; j < r.topK; ++j)
      chosen[t * r.topK + j] = order[j];
  }
  const std::vector<bool> kept = r.capacityFactor > 0 ? keptByCapacity(chosen, r, r.capacity())
                                                      : std::vector<bool>(chosen.size(), true);
  Vec y(r.tokens * C, 0.0);
  for (int64_t t = 0; t < r.tokens; ++t) {
    const Vec &p = probs[t];
    double total = 0;
    for (int64_t j = 0; j < r.topK; ++j)
      if (kept[t * r.topK + j])
        total += p[chosen[t * r.topK + j]];
    for (int64_t j = 0; j < r.topK; ++j) {
      if (!kept[t * r.topK + j])
        continue;
      const int e = chosen[t * r.topK + j];
      Vec h(F);
      for (int64_t f = 0; f < F; ++f) {
        double g = 0, u = 0;
        for (int64_t c = 0; c < C; ++c) {
          g += x[t * C + c] * wg[(e * C + c) * F + f];
          u += x[t * C + c] * wu[(e * C + c) * F + f];
        }
        h[f] = g / (1 + std::exp(-g)) * u;
      }
      for (int64_t c = 0; c < C; ++c) {
        double o = 0;
        for (int64_t f = 0; f < F; ++f)
          o += h[f] * wd[(e * F + f) * C + c];
        y[t * C + c] += p[e] / total * o;
      }
    }
  }
  return y;
}

// Dropless, and with a capacity that drops a tenth or more of the choices.
TEST(Moe, MixtralBlockFromTheKernelsMatchesTheTokenByTokenReference) {
  for (double factor : {0.0, 0.8}) {
    MoeRouting r{19, 8, 2, MoeScore::Softmax, true, 1.0};
    r.capacityFactor = factor;
    const int64_t C = 12, F = 20;
    const Vec x = randomVec(r.tokens * C, 20), wr = randomVec(C * r.experts, 21),
              wg = randomVec(r.experts * C * F, 22, -0.4, 0.4), wu = randomVec(r.experts * C * F, 23, -0.4, 0.4),
              wd = randomVec(r.experts * F * C, 24, -0.4, 0.4);
    const Vec want = moeBlockReference(x, wr, wg, wu, wd, r, C, F);
    const Vec got = moeBlock(x, wr, wg, wu, wd, r, C, F);
    EXPECT_LE(worstRelativeError(got, want, 1e-12, 1e-10), 1.0) << "capacity factor " << factor;
    const std::vector<float> got32 = moeBlock(convert<float>(x), convert<float>(wr), convert<float>(wg),
                                              convert<float>(wu), convert<float>(wd), r, C, F);
    EXPECT_LE(worstRelativeError(toDouble(got32), want, 1e-5, 1e-4), 1.0) << "capacity factor " << factor;
    // bf16 tensors (f32 sums, each result rounded to bf16's 8 bits): within bf16's rounding of the
    // inputs and the intermediate products (the routing must not tie at bf16: it does not here).
    // Dropless only: with a capacity, a bf16 rounding that swaps two of a token's scores moves which
    // choice is first and so which tokens an expert drops.
    if (factor > 0)
      continue;
    const std::vector<bf16> got16 = moeBlock(convert<bf16>(x), convert<bf16>(wr), convert<bf16>(wg),
                                             convert<bf16>(wu), convert<bf16>(wd), r, C, F);
    EXPECT_LE(worstRelativeError(toDouble(got16), want, 3e-2, 5e-2), 1.0) << "capacity factor " << factor;
  }
}

// The block's backward composed from the kernels' backwards (combine, down product, SwiGLU,
// gate and up products, dispatch, route, router product): d x, d router, d gate weights against
// finite differences of the whole block; dropless, and with a capacity that drops choices.
TEST(Moe, MixtralBlockGradientsMatchFiniteDifferences) {
  for (double factor : {0.0, 0.6}) {
    MoeRouting r{7, 4, 2, MoeScore::Softmax, true, 1.0};
    r.capacityFactor = factor;
    const int64_t C = 5, F = 6, rows = moeDispatchedRows(r.tokens, r.experts, r.topK, factor);
    const Vec x = randomVec(r.tokens * C, 30), wr = randomVec(C * r.experts, 31), wg = randomVec(r.experts * C * F, 32),
              wu = randomVec(r.experts * C * F, 33), wd = randomVec(r.experts * F * C, 34),
              dy = randomVec(r.tokens * C, 35);
    // Forward, keeping what the backward reads.
    Vec logits(r.tokens * r.experts), xs(rows * C), g(rows * F), u(rows * F), s(rows * F), h(rows * F), ys(rows * C);
    matmul(x.data(), wr.data(), logits.data(), MatmulShape{1, r.tokens, r.experts, C, false, false, false});
    const Routed at = route(logits, nullptr, r);
    if (factor > 0)
      ASSERT_LT(at.offsets[r.experts], r.tokens * r.topK) << "the capacity must drop a choice";
    moeDispatch(x.data(), at.rowOf.data(), r.tokens, r.topK, C, rows, xs.data());
    groupedMatmul(xs.data(), wg.data(), at.offsets.data(), r.experts, rows, C, F, g.data());
    groupedMatmul(xs.data(), wu.data(), at.offsets.data(), r.experts, rows, C, F, u.data());
    silu(g.data(), s.data(), rows * F);
    for (int64_t i = 0; i < rows * F; ++i)
      h[i] = s[i] * u[i];
    groupedMatmul(h.data(), wd.data(), at.offsets.data(), r.experts, rows, F, C, ys.data());
    // Backward.
    const int64_t choices = r.tokens * r.topK;
    Vec dys(rows * C), dweight(choices), dh(rows * F), dwd(wd.size()), ds(rows * F), du(rows * F), dg(rows * F),
        dxs(rows * C), dxsU(rows * C), dwg(wg.size()), dwu(wu.size()), dx(x.size()), dlogits(logits.size()),
        dwr(wr.size()), dxRouter(x.size());
    moeCombineGrad(dy.data(), ys.data(), at.weight.data(), at.rowOf.data(), r.tokens, r.topK, C, rows, dys.data(),
                   dweight.data());
    groupedMatmulGrad(dys.data(), h.data(), wd.data(), at.offsets.data(), r.experts, rows, F, C, dh.data(),
                      dwd.data());
    for (int64_t i = 0; i < rows * F; ++i) {
      ds[i] = dh[i] * u[i];
      du[i] = dh[i] * s[i];
    }
    siluGrad(ds.data(), g.data(), dg.data(), rows * F);
    groupedMatmulGrad(dg.data(), xs.data(), wg.data(), at.offsets.data(), r.experts, rows, C, F, dxs.data(),
                      dwg.data());
    groupedMatmulGrad(du.data(), xs.data(), wu.data(), at.offsets.data(), r.experts, rows, C, F, dxsU.data(),
                      dwu.data());
    for (int64_t i = 0; i < rows * C; ++i)
      dxs[i] += dxsU[i];
    moeDispatchGrad(dxs.data(), at.rowOf.data(), r.tokens, r.topK, C, dx.data());
    moeRouteGrad(dweight.data(), logits.data(), at.expert.data(), at.rowOf.data(), r, dlogits.data());
    matmul(x.data(), dlogits.data(), dwr.data(), MatmulShape{1, C, r.experts, r.tokens, true, false, false});
    matmul(dlogits.data(), wr.data(), dxRouter.data(), MatmulShape{1, r.tokens, C, r.experts, false, true, false});
    for (size_t i = 0; i < dx.size(); ++i)
      dx[i] += dxRouter[i];
    auto fwd = [&](const std::vector<Vec> &in) { return moeBlock(in[0], in[1], in[2], in[3], in[4], r, C, F); };
    expectGradientsMatch("mixtral block", {x, wr, wg, wu, wd}, fwd, dy, {dx, dwr, dwg, dwu, dwd}, {0, 1, 2, 3, 4});
  }
}

} // namespace
