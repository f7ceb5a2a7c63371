// Every backward kernel (and every gradient rule autodiff composes from forward kernels)
// against central finite differences of its forward kernel, in f64, on odd sizes.
#include "KernelTestUtils.h"

#include "cpu/Attention.h"
#include "cpu/Elementwise.h"
#include "cpu/Embedding.h"
#include "cpu/Layout.h"
#include "cpu/Loss.h"
#include "cpu/Matmul.h"
#include "cpu/MatmulCrossEntropy.h"
#include "cpu/Normalization.h"
#include "cpu/Rotary.h"

using namespace zrt::cpu;
using namespace zrt::test;

namespace {

TEST(KernelGradients, Relu) {
  Vec x = randomVec(37, 1);
  for (double &v : x)
    if (std::fabs(v) < 0.05) // keep probes off the kink
      v = 0.3;
  Vec w = randomVec(x.size(), 2), dx(x.size());
  reluGrad(w.data(), x.data(), dx.data(), x.size());
  auto fwd = [](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    relu(in[0].data(), y.data(), y.size());
    return y;
  };
  expectGradientsMatch("relu", {x}, fwd, w, {dx}, {0});
}

TEST(KernelGradients, Gelu) {
  Vec x = randomVec(41, 3, -3, 3), w = randomVec(41, 4), dx(41);
  geluGrad(w.data(), x.data(), dx.data(), x.size());
  auto fwd = [](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    gelu(in[0].data(), y.data(), y.size());
    return y;
  };
  expectGradientsMatch("gelu", {x}, fwd, w, {dx}, {0});
}

TEST(KernelGradients, GeluErf) {
  Vec x = randomVec(41, 5, -3, 3), w = randomVec(41, 6), dx(41);
  geluErfGrad(w.data(), x.data(), dx.data(), x.size());
  auto fwd = [](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    geluErf(in[0].data(), y.data(), y.size());
    return y;
  };
  expectGradientsMatch("gelu_erf", {x}, fwd, w, {dx}, {0});
}

// Wide enough that vexp's clamp (inputs below -87) and the sigmoid's saturation are crossed.
TEST(KernelGradients, Silu) {
  Vec x = randomVec(43, 31, -9, 9), w = randomVec(43, 32), dx(43);
  x[0] = -100; // exp(-x) clamped: the derivative is still a tiny negative number, not NaN
  siluGrad(w.data(), x.data(), dx.data(), x.size());
  auto fwd = [](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    silu(in[0].data(), y.data(), y.size());
    return y;
  };
  expectGradientsMatch("silu", {x}, fwd, w, {dx}, {0});
}

TEST(KernelGradients, Softmax) {
  const int64_t rows = 5, cols = 7;
  Vec x = randomVec(rows * cols, 5, -2, 2), w = randomVec(rows * cols, 6), y(rows * cols),
      dx(rows * cols);
  softmax(x.data(), y.data(), rows, cols);
  softmaxGrad(w.data(), y.data(), dx.data(), rows, cols);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec out(rows * cols);
    softmax(in[0].data(), out.data(), rows, cols);
    return out;
  };
  expectGradientsMatch("softmax", {x}, fwd, w, {dx}, {0});
}

// 6 rows fit one chunk of the dgamma/dbeta sums; 150 rows span three, the last partial.
class LayerNormRows : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(KernelGradients, LayerNormRows, ::testing::Values(int64_t(6), int64_t(150)));

TEST_P(LayerNormRows, MatchFiniteDifferences) {
  const int64_t rows = GetParam(), cols = 11;
  const double eps = 1e-5;
  Vec x = randomVec(rows * cols, 7, -2, 2), g = randomVec(cols, 8, 0.5, 1.5),
      b = randomVec(cols, 9), w = randomVec(rows * cols, 10);
  Vec dx(rows * cols), dg(cols), db(cols);
  layernormGrad(w.data(), x.data(), g.data(), dx.data(), dg.data(), db.data(), rows, cols, eps);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(rows * cols);
    layernorm(in[0].data(), in[1].data(), in[2].data(), y.data(), rows, cols, eps);
    return y;
  };
  expectGradientsMatch("layernorm", {x, g, b}, fwd, w, {dx, dg, db}, {0, 1, 2});
}

// RMSNorm: the dgamma sums over one chunk of rows and over three.
class RmsNormRows : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(KernelGradients, RmsNormRows, ::testing::Values(int64_t(6), int64_t(150)));

TEST_P(RmsNormRows, MatchFiniteDifferences) {
  const int64_t rows = GetParam(), cols = 13;
  const double eps = 1e-6;
  Vec x = randomVec(rows * cols, 33, -2, 2), g = randomVec(cols, 34, 0.5, 1.5), w = randomVec(rows * cols, 35);
  Vec dx(rows * cols), dg(cols);
  rmsnormGrad(w.data(), x.data(), g.data(), dx.data(), dg.data(), rows, cols, eps);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(rows * cols);
    rmsnorm(in[0].data(), in[1].data(), y.data(), rows, cols, eps);
    return y;
  };
  expectGradientsMatch("rmsnorm", {x, g}, fwd, w, {dx, dg}, {0, 1});
}

// Gemma's gain, 1 + gamma, with gamma near zero as it starts: dx reads the offset gain, dgamma
// does not change.
TEST(KernelGradients, RmsNormWithGainOffset) {
  const int64_t rows = 70, cols = 13;
  const double eps = 1e-6;
  Vec x = randomVec(rows * cols, 36, -2, 2), g = randomVec(cols, 37, -0.1, 0.1), w = randomVec(rows * cols, 38);
  Vec dx(rows * cols), dg(cols);
  rmsnormGrad(w.data(), x.data(), g.data(), dx.data(), dg.data(), rows, cols, eps, 1.0);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(rows * cols);
    rmsnorm(in[0].data(), in[1].data(), y.data(), rows, cols, eps, 1.0);
    return y;
  };
  expectGradientsMatch("rmsnorm gain_offset 1", {x, g}, fwd, w, {dx, dg}, {0, 1});
  // And the forward is the plain RMSNorm with the gain 1 + gamma.
  Vec onePlus(cols), y(rows * cols), ref(rows * cols);
  for (int64_t c = 0; c < cols; ++c)
    onePlus[c] = 1.0 + g[c];
  rmsnorm(x.data(), g.data(), y.data(), rows, cols, eps, 1.0);
  rmsnorm(x.data(), onePlus.data(), ref.data(), rows, cols, eps);
  EXPECT_LE(worstRelativeError(y, ref, 1e-14, 1e-12), 1.0);
}

// The rotation's gradient is the inverse rotation (autodiff's rule for zc.rotary).
TEST(KernelGradients, RotaryThroughInverseRotation) {
  const int64_t batch = 2, time = 5, heads = 3, headDim = 6, channels = heads * headDim;
  const double theta = 10000.0;
  Vec x = randomVec(batch * time * channels, 36), w = randomVec(x.size(), 37), dx(x.size());
  rotary(w.data(), dx.data(), batch, time, channels, heads, theta, /*inverse=*/true);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    rotary(in[0].data(), y.data(), batch, time, channels, heads, theta, false);
    return y;
  };
  expectGradientsMatch("rotary", {x}, fwd, w, {dx}, {0});
}

// The same over a third of each head (rotary_dims 2 of 6): the pass-through channels' gradient
// is the output's.
TEST(KernelGradients, PartialRotaryThroughInverseRotation) {
  const int64_t batch = 2, time = 5, heads = 3, headDim = 6, channels = heads * headDim, dims = 2;
  const double theta = 10000.0;
  Vec x = randomVec(batch * time * channels, 38), w = randomVec(x.size(), 39), dx(x.size());
  rotary(w.data(), dx.data(), batch, time, channels, heads, theta, /*inverse=*/true, nullptr, dims);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    rotary(in[0].data(), y.data(), batch, time, channels, heads, theta, false, nullptr, dims);
    return y;
  };
  expectGradientsMatch("partial rotary", {x}, fwd, w, {dx}, {0});
}

// Shapes (B, T, C, H, G, probes): one query block; then longer than two blocks (kQueryBlock rows
// each), the last partial, where dK and dV sum over every block that sees a key; then grouped-query
// attention (G < H key/value heads), where dK and dV also sum over the group's query heads. Then
// zc's variants: a scale with soft-capped scores, and sliding windows inside a block and across
// blocks (a key's gradient sums over the queries whose window reaches it).
struct AttentionShape {
  int64_t B, T, C, H, G;
  size_t probes;
  zrt::AttentionVariant variant = {};
};
class CausalAttentionShapes : public ::testing::TestWithParam<AttentionShape> {};
INSTANTIATE_TEST_SUITE_P(KernelGradients, CausalAttentionShapes,
                         ::testing::Values(AttentionShape{2, 5, 12, 3, 3, 60},
                                           AttentionShape{1, 2 * detail::kQueryBlock + 22, 8, 2, 2, 150},
                                           AttentionShape{2, 7, 16, 4, 2, 80},
                                           AttentionShape{1, detail::kQueryBlock + 9, 12, 6, 1, 100},
                                           AttentionShape{2, 7, 16, 4, 2, 80, {0.6, 1.5, 0}},
                                           AttentionShape{1, 9, 12, 3, 3, 60, {0.0, 0.0, 3}},
                                           AttentionShape{1, 2 * detail::kQueryBlock + 22, 8, 2, 1, 150,
                                                          {0.0, 2.0, 50}}));

TEST_P(CausalAttentionShapes, MatchFiniteDifferences) {
  const AttentionShape shape = GetParam();
  const int64_t B = shape.B, T = shape.T, C = shape.C, H = shape.H, G = shape.G, n = B * T * C,
                nkv = B * T * (C / H) * G;
  Vec q = randomVec(n, 11), k = randomVec(nkv, 12), v = randomVec(nkv, 13), w = randomVec(n, 14);
  Vec dq(n), dk(nkv), dv(nkv);
  causalAttentionGrad(w.data(), q.data(), k.data(), v.data(), dq.data(), dk.data(), dv.data(), B, T, C, H, G,
                      shape.variant);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(n);
    causalAttention(in[0].data(), in[1].data(), in[2].data(), y.data(), B, T, C, H, G, shape.variant);
    return y;
  };
  expectGradientsMatch("causal_attention", {q, k, v}, fwd, w, {dq, dk, dv}, {0, 1, 2}, shape.probes);
}

TEST(KernelGradients, EmbeddingWithRepeatedIds) {
  const int64_t V = 7, C = 5;
  std::vector<int32_t> ids = {3, 0, 6, 3, 3, 1, 6, 2, 0};
  const int64_t count = ids.size();
  Vec table = randomVec(V * C, 15), w = randomVec(count * C, 16), dtable(V * C);
  embeddingGrad(w.data(), ids.data(), dtable.data(), count, VocabRows{0, V, V}, C);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(count * C);
    embedding(in[0].data(), ids.data(), y.data(), count, VocabRows{0, V, V}, C);
    return y;
  };
  expectGradientsMatch("embedding", {table}, fwd, w, {dtable}, {0});
  for (int64_t c = 0; c < C; ++c) // row 4 is never looked up
    EXPECT_EQ(dtable[4 * C + c], 0.0);
}

TEST(KernelGradients, CrossEntropy) {
  const int64_t rows = 6, classes = 9;
  std::vector<int32_t> labels = {0, 8, 3, 3, 5, 1};
  Vec logits = randomVec(rows * classes, 17, -3, 3), dlogits(rows * classes);
  Vec w = {0.7}; // d loss / d (the scalar loss)
  crossEntropyGrad(w.data(), logits.data(), labels.data(), dlogits.data(), rows, classes);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec loss(1);
    crossEntropy(in[0].data(), labels.data(), loss.data(), rows, classes);
    return loss;
  };
  expectGradientsMatch("cross_entropy", {logits}, fwd, w, {dlogits}, {0});
}

/// Gemma 2's final-logit soft-cap: the loss of cap tanh(logits / cap), its gradient through the
/// cap's slope. A cap of 2 over logits in [-3, 3] bends every row.
TEST(KernelGradients, CrossEntropyWithSoftcap) {
  const int64_t rows = 6, classes = 9;
  const double cap = 2.0;
  std::vector<int32_t> labels = {0, 8, 3, 3, 5, 1};
  Vec logits = randomVec(rows * classes, 23, -3, 3), dlogits(rows * classes);
  Vec w = {0.7};
  crossEntropyGrad(w.data(), logits.data(), labels.data(), dlogits.data(), rows, classes, cap);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec loss(1);
    crossEntropy(in[0].data(), labels.data(), loss.data(), rows, classes, cap);
    return loss;
  };
  expectGradientsMatch("cross_entropy softcap", {logits}, fwd, w, {dlogits}, {0});
}

/// zc.matmul_cross_entropy's input and weight gradients against finite differences of its own
/// loss, for either weight layout, in one chunk and in three (the last one short).
struct HeadCase {
  bool transW;
  int64_t chunkRows;
  double softcap = 0.0;
};
class MatmulCrossEntropyGrad : public ::testing::TestWithParam<HeadCase> {};
INSTANTIATE_TEST_SUITE_P(KernelGradients, MatmulCrossEntropyGrad,
                         ::testing::Values(HeadCase{true, 7}, HeadCase{true, 3}, HeadCase{false, 7},
                                           HeadCase{false, 3}, HeadCase{true, 3, 1.5}, HeadCase{false, 7, 1.5}));

TEST_P(MatmulCrossEntropyGrad, MatchesFiniteDifferences) {
  const auto [transW, chunkRows, softcap] = GetParam();
  const int64_t rows = 7, classes = 11, channels = 5;
  std::vector<int32_t> labels = {0, 10, 3, 3, 5, 1, 7};
  Vec x = randomVec(rows * channels, 31, -2, 2), w = randomVec(classes * channels, 32, -1, 1);
  Vec dx(x.size()), dw(w.size()), loss(1), seed = {0.7};
  const auto layout = zrt::MatmulCrossEntropyLayout::of(rows, classes, w.size(), chunkRows, sizeof(double));
  std::vector<char> workspace(layout.bytes);
  matmulCrossEntropy(x.data(), w.data(), labels.data(), seed.data(), loss.data(), dx.data(), dw.data(),
                     workspace.data(), rows, classes, channels, transW, chunkRows, softcap);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec l(1), gx(in[0].size()), gw(in[1].size()), one = {1.0};
    std::vector<char> ws(layout.bytes);
    matmulCrossEntropy(in[0].data(), in[1].data(), labels.data(), one.data(), l.data(), gx.data(), gw.data(),
                       ws.data(), rows, classes, channels, transW, chunkRows, softcap);
    return l;
  };
  expectGradientsMatch("matmul_cross_entropy", {x, w}, fwd, seed, {dx, dw}, {0, 1});
}

TEST(KernelGradients, Mse) {
  const int64_t n = 13;
  Vec p = randomVec(n, 18), t = randomVec(n, 19), dp(n), w = {1.3};
  mseGrad(w.data(), p.data(), t.data(), dp.data(), n);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec loss(1);
    mse(in[0].data(), t.data(), loss.data(), n);
    return loss;
  };
  expectGradientsMatch("mse", {p}, fwd, w, {dp}, {0});
}

/// The matmul rule of docs/dialect.md: for C = op(A) op(B),
///   dA = dC op(B)^T (stored transposed when transA), dB = op(A)^T dC (likewise),
/// and a B shared by the batch gets the batch sum (reduce_sum over axis 0).
struct MatmulCase {
  bool transA, transB, bShared;
};
class MatmulGradient : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulGradient, MatchesFiniteDifferences) {
  const MatmulCase p = GetParam();
  const int64_t batch = 3, m = 4, n = 5, k = 6;
  MatmulShape shape{batch, m, n, k, p.transA, p.transB, p.bShared};
  const int64_t bBatch = p.bShared ? 1 : batch;
  Vec a = randomVec(batch * m * k, 20), b = randomVec(bBatch * k * n, 21),
      w = randomVec(batch * m * n, 22);

  // dA: [m, k] = dC [m, n] x op(B)^T, or [k, m] = op(B) x dC^T when A is stored transposed.
  Vec da(a.size());
  if (!p.transA)
    matmul(w.data(), b.data(), da.data(), {batch, m, k, n, false, !p.transB, p.bShared});
  else if (p.bShared) {
    for (int64_t i = 0; i < batch; ++i)
      matmul(b.data(), w.data() + i * m * n, da.data() + i * k * m, {1, k, m, n, p.transB, true, true});
  } else
    matmul(b.data(), w.data(), da.data(), {batch, k, m, n, p.transB, true, false});

  // dB per batch element, then summed over the batch when B is shared.
  Vec dbBatched(batch * k * n), db(bBatch * k * n);
  if (!p.transB)
    matmul(a.data(), w.data(), dbBatched.data(), {batch, k, n, m, !p.transA, false, false});
  else
    matmul(w.data(), a.data(), dbBatched.data(), {batch, n, k, m, true, p.transA, false});
  if (p.bShared) {
    const int64_t dims[3] = {batch, p.transB ? n : k, p.transB ? k : n};
    reduceSum(dbBatched.data(), db.data(), dims, 3, /*axesMask=*/1);
  } else {
    db = dbBatched;
  }

  auto fwd = [&](const std::vector<Vec> &in) {
    Vec c(batch * m * n);
    matmul(in[0].data(), in[1].data(), c.data(), shape);
    return c;
  };
  expectGradientsMatch("matmul", {a, b}, fwd, w, {da, db}, {0, 1});
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, MatmulGradient,
                         ::testing::Values(MatmulCase{false, false, false},
                                           MatmulCase{true, false, false},
                                           MatmulCase{false, true, false},
                                           MatmulCase{true, true, false},
                                           MatmulCase{false, false, true},
                                           MatmulCase{true, false, true},
                                           MatmulCase{false, true, true},
                                           MatmulCase{true, true, true}));

TEST(KernelGradients, BiasAddThroughReduceSum) {
  const int64_t d0 = 3, d1 = 4, cols = 5;
  Vec x = randomVec(d0 * d1 * cols, 23), bias = randomVec(cols, 24), w = randomVec(x.size(), 25);
  Vec dbias(cols);
  const int64_t dims[3] = {d0, d1, cols};
  reduceSum(w.data(), dbias.data(), dims, 3, 0b011);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(in[0].size());
    biasAdd(in[0].data(), in[1].data(), y.data(), d0 * d1, cols);
    return y;
  };
  expectGradientsMatch("bias_add", {x, bias}, fwd, w, {w, dbias}, {0, 1});
}

TEST(KernelGradients, TransposeThroughInversePermutation) {
  const int64_t shape[4] = {2, 3, 4, 5}, perm[4] = {2, 0, 3, 1};
  const int64_t outShape[4] = {4, 2, 5, 3}, inverse[4] = {1, 3, 0, 2};
  Vec x = randomVec(120, 26), w = randomVec(120, 27), dx(120);
  transpose(w.data(), dx.data(), outShape, 4, inverse);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(120);
    transpose(in[0].data(), y.data(), shape, 4, perm);
    return y;
  };
  expectGradientsMatch("transpose", {x}, fwd, w, {dx}, {0});
}

TEST(KernelGradients, SliceThroughInsertIntoZeros) {
  const int64_t whole[3] = {2, 5, 9}, box[3] = {2, 3, 4}, offsets[3] = {0, 1, 5};
  Vec x = randomVec(90, 28), w = randomVec(24, 29), dx(90, 0.0);
  insert(w.data(), box, dx.data(), whole, 3, offsets);
  auto fwd = [&](const std::vector<Vec> &in) {
    Vec y(24);
    slice(in[0].data(), whole, y.data(), box, 3, offsets);
    return y;
  };
  expectGradientsMatch("slice", {x}, fwd, w, {dx}, {0});
}

} // namespace
