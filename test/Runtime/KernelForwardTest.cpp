// Forward kernels against naive f64 references on odd shapes; bf16 paths against f32 with
// bf16 tolerances; optimizer steps against PyTorch's update formulas.
#include "KernelTestUtils.h"

#include <cfenv>
#include <cstring>

#include "cpu/Attention.h"
#include "cpu/Elementwise.h"
#include "cpu/Layout.h"
#include "cpu/Loss.h"
#include "cpu/Matmul.h"
#include "cpu/Normalization.h"
#include "cpu/Optimizer.h"
#include "cpu/Rotary.h"
#include "cpu/WidenedMatmul.h"
#include "zrt/KernelMath.h"

using namespace zrt;
using namespace zrt::cpu;
using namespace zrt::test;

namespace {

/// Naive reference: C[b] = op(A[b]) op(B[b]).
Vec naiveMatmul(const Vec &a, const Vec &b, const MatmulShape &s) {
  Vec c(s.batch * s.m * s.n, 0.0);
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    const double *A = a.data() + bi * s.m * s.k;
    const double *B = b.data() + (s.bShared ? 0 : bi * s.k * s.n);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p)
          sum += (s.transA ? A[p * s.m + i] : A[i * s.k + p]) *
                 (s.transB ? B[j * s.k + p] : B[p * s.n + j]);
        c[bi * s.m * s.n + i * s.n + j] = sum;
      }
  }
  return c;
}

/// The bf16 matmul paths this CPU runs: the widened one everywhere, oneDNN's native one where
/// it exists (AVX-512). The process-wide choice (ZRT_BF16_MATMUL) is not consulted: every
/// path the CPU can run is tested, whichever it would pick by itself.
std::vector<MatmulPath> bf16PathsThisCpuRuns() {
  std::vector<MatmulPath> paths{MatmulPath::Widen};
  if (nativeBf16MatmulAvailable())
    paths.push_back(MatmulPath::Native);
  else {
    static bool said = false;
    if (!said)
      std::printf("[ note ] no native bf16 matmul on this CPU (oneDNN %s): widened path only\n",
                  describeDnnlIsa().c_str());
    said = true;
  }
  return paths;
}

const char *pathName(MatmulPath path) { return matmulPathName(path); }

/// The f32 paths: oneDNN's GEMM and OpenBLAS run every shape, oneDNN's primitive those it creates.
std::vector<MatmulPath> f32PathsFor(const MatmulShape &s) {
  std::vector<MatmulPath> paths;
  for (MatmulPath path : {MatmulPath::Sgemm, MatmulPath::Primitive, MatmulPath::Blas})
    if (pathRuns(path, ZRT_DTYPE_F32, s))
      paths.push_back(path);
  return paths;
}

/// bf16 inputs are exact in f64, so a bf16 product is compared with the f64 product of the
/// rounded inputs: only f32 accumulation and the final bf16 rounding (2^-8 relative) remain.
template <class Product>
void expectBf16Product(const MatmulShape &s, uint64_t seed, Product product, const std::string &what) {
  const int64_t bBatch = s.bShared ? 1 : s.batch;
  auto ah = convert<bf16>(randomVec(s.batch * s.m * s.k, seed));
  auto bh = convert<bf16>(randomVec(bBatch * s.k * s.n, seed + 1));
  std::vector<bf16> ch(s.batch * s.m * s.n, bf16(12345.0f)); // every element must be written
  product(ah.data(), bh.data(), ch.data(), s);
  Vec ref = naiveMatmul(toDouble(ah), toDouble(bh), s);
  EXPECT_LE(worstRelativeError(toDouble(ch), ref, 1e-2, 8e-3), 1.0) << what;
}

TEST(KernelForward, MatmulF32AndBf16AllLayouts) {
  for (int layout = 0; layout < 8; ++layout) {
    MatmulShape s{3, 7, 13, 19, bool(layout & 1), bool(layout & 2), bool(layout & 4)};
    const int64_t bBatch = s.bShared ? 1 : s.batch;
    Vec a = randomVec(s.batch * s.m * s.k, 100 + layout), b = randomVec(bBatch * s.k * s.n, 200);
    Vec ref = naiveMatmul(a, b, s);

    auto af = convert<float>(a), bf = convert<float>(b);
    std::vector<float> cf(ref.size());
    matmul(af.data(), bf.data(), cf.data(), s);
    EXPECT_LE(worstRelativeError(toDouble(cf), ref, 1e-5, 1e-5), 1.0) << "f32 layout " << layout;
    // Each f32 path a plan can choose; sgemm and blas run every shape.
    const std::vector<MatmulPath> f32Paths = f32PathsFor(s);
    EXPECT_GE(f32Paths.size(), 2u);
    for (MatmulPath path : f32Paths) {
      std::vector<float> c(ref.size(), 12345.0f); // every element must be written
      matmulOn(path, af.data(), bf.data(), c.data(), s);
      EXPECT_LE(worstRelativeError(toDouble(c), ref, 1e-5, 1e-5), 1.0)
          << "f32 " << pathName(path) << " layout " << layout;
    }

    // The process's own choice, then each path the CPU runs.
    expectBf16Product(s, 300 + layout, [](auto... args) { matmul(args...); },
                      "bf16 layout " + std::to_string(layout));
    for (MatmulPath path : bf16PathsThisCpuRuns())
      expectBf16Product(
          s, 300 + layout, [&](auto... args) { matmulOn(path, args...); },
          std::string("bf16 ") + pathName(path) + " layout " + std::to_string(layout));
  }
}

// Tiles smaller than the product: edge tiles in every dimension, K summed over several tiles
// in f32 (the bf16 result is rounded once, after the last), every layout, tiles taller than
// wide (threads own row panels) and wider than tall (column panels), on one thread and on the
// team (minParallelFlops 0: every tile; the team is OMP_NUM_THREADS, 2 under ctest).
TEST(KernelForward, WidenedMatmulTilesCoverEveryEdge) {
  for (double minParallelFlops : {1e30, 0.0})
    for (WidenTiles tiles : {WidenTiles{8, 5, 7}, WidenTiles{16, 16, 64}, WidenTiles{40, 24, 2048},
                             WidenTiles{24, 40, 2048}, WidenTiles()})
      for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 29}, {29, 37}})
        for (int layout = 0; layout < 8; ++layout) {
          MatmulShape s{2, m, n, 131, bool(layout & 1), bool(layout & 2), bool(layout & 4)};
          tiles.minParallelFlops = minParallelFlops;
          expectBf16Product(
              s, 400 + layout, [&](auto... args) { widenedMatmul(args..., tiles); },
              "tiles " + std::to_string(tiles.m) + "x" + std::to_string(tiles.n) + "x" +
                  std::to_string(tiles.k) + (minParallelFlops == 0 ? " team" : " one thread") +
                  " shape " + std::to_string(m) + "x" + std::to_string(n) + " layout " +
                  std::to_string(layout));
        }
}

// K = 0 is an empty sum: C is zero, on every path.
TEST(KernelForward, Bf16MatmulWithEmptyKIsZero) {
  const MatmulShape s{2, 3, 4, 0, false, false, false};
  for (MatmulPath path : bf16PathsThisCpuRuns()) {
    std::vector<bf16> c(2 * 3 * 4, bf16(7.0f));
    matmulOn(path, nullptr, nullptr, c.data(), s);
    for (bf16 v : c)
      EXPECT_EQ(float(v), 0.0f) << pathName(path);
  }
}

// A product one GEMM of the real model's size: long sums where the two paths' different f32
// summation orders matter most; both stay within bf16 rounding of the f64 product.
TEST(KernelForward, Bf16PathsAgreeOnModelSizedProducts) {
  for (MatmulPath path : bf16PathsThisCpuRuns()) {
    expectBf16Product(MatmulShape{1, 512, 384, 128, false, true, true}, 500,
                      [&](auto... args) { matmulOn(path, args...); }, pathName(path));
    expectBf16Product(MatmulShape{1, 128, 384, 2048, true, false, false}, 600,
                      [&](auto... args) { matmulOn(path, args...); },
                      std::string(pathName(path)) + " weight gradient");
  }
}

// T = 7 fits one query block; T = 150 spans three (kQueryBlock rows each), the last partial.
class CausalAttentionLength : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(KernelForward, CausalAttentionLength,
                         ::testing::Values(int64_t(7), 2 * detail::kQueryBlock + 22));

TEST_P(CausalAttentionLength, MatchesNaiveMaskedSoftmax) {
  const int64_t B = 2, T = GetParam(), C = 12, H = 4, D = C / H, n = B * T * C;
  Vec q = randomVec(n, 1), k = randomVec(n, 2), v = randomVec(n, 3), ref(n, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> score(T, -INFINITY);
        double maxScore = -INFINITY;
        for (int64_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[(b * T + t) * C + h * D + d] * k[(b * T + s) * C + h * D + d];
          score[s] = dot / std::sqrt(double(D));
          maxScore = std::max(maxScore, score[s]);
        }
        double sum = 0;
        for (int64_t s = 0; s <= t; ++s)
          sum += std::exp(score[s] - maxScore);
        for (int64_t s = 0; s <= t; ++s)
          for (int64_t d = 0; d < D; ++d)
            ref[(b * T + t) * C + h * D + d] +=
                std::exp(score[s] - maxScore) / sum * v[(b * T + s) * C + h * D + d];
      }
  auto qf = convert<float>(q), kf = convert<float>(k), vf = convert<float>(v);
  std::vector<float> out(n);
  causalAttention(qf.data(), kf.data(), vf.data(), out.data(), B, T, C, H, H);
  EXPECT_LE(worstRelativeError(toDouble(out), ref, 1e-5, 1e-4), 1.0);

  auto qh = convert<bf16>(q), kh = convert<bf16>(k), vh = convert<bf16>(v);
  std::vector<bf16> outh(n);
  causalAttention(qh.data(), kh.data(), vh.data(), outh.data(), B, T, C, H, H);
  EXPECT_LE(worstRelativeError(toDouble(outh), ref, 2e-2, 2e-2), 1.0);
}

// zc's variants against the definition, position by position: scores scale q.k, soft-capped
// C tanh(scores / C), query t seeing keys t - W < s <= t. Windows inside one query block, across
// blocks (the kernel skips the keys before a block's window) and wider than the context.
TEST_P(CausalAttentionLength, VariantsMatchTheirDefinition) {
  const int64_t B = 1, T = GetParam(), C = 12, H = 4, D = C / H, n = B * T * C;
  Vec q = randomVec(n, 31), k = randomVec(n, 32), v = randomVec(n, 33);
  for (zrt::AttentionVariant variant : {zrt::AttentionVariant{0.7, 0.0, 0}, zrt::AttentionVariant{0.0, 2.0, 0},
                                        zrt::AttentionVariant{0.0, 0.0, 3}, zrt::AttentionVariant{0.4, 1.5, 70},
                                        zrt::AttentionVariant{0.0, 0.0, 1000}}) {
    SCOPED_TRACE("scale " + std::to_string(variant.scale) + " softcap " + std::to_string(variant.softcap) +
                 " window " + std::to_string(variant.window));
    const double scale = variant.scale > 0 ? variant.scale : 1 / std::sqrt(double(D));
    Vec ref(n, 0.0), out(n);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t first = variant.window > 0 ? std::max<int64_t>(0, t - variant.window + 1) : 0;
        std::vector<double> score(T, -INFINITY);
        double maxScore = -INFINITY, sum = 0;
        for (int64_t s = first; s <= t; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[t * C + h * D + d] * k[s * C + h * D + d];
          score[s] = dot * scale;
          if (variant.softcap > 0)
            score[s] = variant.softcap * std::tanh(score[s] / variant.softcap);
          maxScore = std::max(maxScore, score[s]);
        }
        for (int64_t s = first; s <= t; ++s)
          sum += std::exp(score[s] - maxScore);
        for (int64_t s = first; s <= t; ++s)
          for (int64_t d = 0; d < D; ++d)
            ref[t * C + h * D + d] += std::exp(score[s] - maxScore) / sum * v[s * C + h * D + d];
      }
    causalAttention(q.data(), k.data(), v.data(), out.data(), B, T, C, H, H, variant);
    EXPECT_LE(worstRelativeError(out, ref, 1e-12, 1e-10), 1.0);
  }
}

// Grouped-query attention is multi-head attention over key/value heads repeated as Hugging
// Face's repeat_kv repeats them (head g copied to heads g x group .. (g + 1) x group - 1); its key
// and value gradients are the repeated heads' gradients summed over each group.
TEST_P(CausalAttentionLength, GroupedQueryIsMultiHeadOverRepeatedKeyValueHeads) {
  const int64_t B = 2, T = GetParam(), H = 6, G = 2, D = 4, C = H * D, Ckv = G * D, group = H / G;
  const int64_t n = B * T * C, nkv = B * T * Ckv;
  Vec q = randomVec(n, 21), k = randomVec(nkv, 22), v = randomVec(nkv, 23), dout = randomVec(n, 24);
  Vec kRep(n), vRep(n);
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d) {
        kRep[row * C + h * D + d] = k[row * Ckv + (h / group) * D + d];
        vRep[row * C + h * D + d] = v[row * Ckv + (h / group) * D + d];
      }
  Vec out(n), outRef(n), dq(n), dk(nkv), dv(nkv), dqRef(n), dkRep(n), dvRep(n), dkRef(nkv, 0.0), dvRef(nkv, 0.0);
  causalAttention(q.data(), k.data(), v.data(), out.data(), B, T, C, H, G);
  causalAttention(q.data(), kRep.data(), vRep.data(), outRef.data(), B, T, C, H, H);
  causalAttentionGrad(dout.data(), q.data(), k.data(), v.data(), dq.data(), dk.data(), dv.data(), B, T, C, H, G);
  causalAttentionGrad(dout.data(), q.data(), kRep.data(), vRep.data(), dqRef.data(), dkRep.data(), dvRep.data(), B, T,
                      C, H, H);
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d) {
        dkRef[row * Ckv + (h / group) * D + d] += dkRep[row * C + h * D + d];
        dvRef[row * Ckv + (h / group) * D + d] += dvRep[row * C + h * D + d];
      }
  EXPECT_LE(worstRelativeError(out, outRef, 1e-12, 1e-10), 1.0);
  EXPECT_LE(worstRelativeError(dq, dqRef, 1e-12, 1e-10), 1.0);
  EXPECT_LE(worstRelativeError(dk, dkRef, 1e-12, 1e-10), 1.0);
  EXPECT_LE(worstRelativeError(dv, dvRef, 1e-12, 1e-10), 1.0);
}

// zc.add_layernorm and zc.layernorm_grad_add are defined as the ops they replace: the same bits.
template <class T> void expectResidualFusionsBitwise() {
  const int64_t rows = 150, cols = 37, n = rows * cols;
  auto a = convert<T>(randomVec(n, 51, -2, 2)), b = convert<T>(randomVec(n, 52, -2, 2)),
       g = convert<T>(randomVec(cols, 53, 0.5, 1.5)), beta = convert<T>(randomVec(cols, 54)),
       dy = convert<T>(randomVec(n, 55)), residual = convert<T>(randomVec(n, 56));
  std::vector<T> sum(n), y(n), sumRef(n), yRef(n);
  addLayernorm(a.data(), b.data(), g.data(), beta.data(), sum.data(), y.data(), rows, cols, 1e-5);
  add(a.data(), b.data(), sumRef.data(), n);
  layernorm(sumRef.data(), g.data(), beta.data(), yRef.data(), rows, cols, 1e-5);
  EXPECT_EQ(0, std::memcmp(sum.data(), sumRef.data(), n * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(y.data(), yRef.data(), n * sizeof(T)));

  std::vector<T> dx(n), dg(cols), db(cols), dxRef(n), dgRef(cols), dbRef(cols), sumGrad(n);
  layernormGrad(dy.data(), sum.data(), g.data(), dx.data(), dg.data(), db.data(), rows, cols, 1e-5, residual.data());
  layernormGrad(dy.data(), sum.data(), g.data(), dxRef.data(), dgRef.data(), dbRef.data(), rows, cols, 1e-5);
  add(residual.data(), dxRef.data(), sumGrad.data(), n);
  EXPECT_EQ(0, std::memcmp(dx.data(), sumGrad.data(), n * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(dg.data(), dgRef.data(), cols * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(db.data(), dbRef.data(), cols * sizeof(T)));
}

// zc.swiglu and zc.swiglu_grad: the bits of silu, mul and silu_grad, mul as autodiff writes them.
template <class T> void expectSwigluBitwise() {
  const int64_t n = 10007;
  auto gate = convert<T>(randomVec(n, 61, -8, 8)), up = convert<T>(randomVec(n, 62, -3, 3)),
       dy = convert<T>(randomVec(n, 63));
  std::vector<T> h(n), act(n), hRef(n);
  swiglu(gate.data(), up.data(), h.data(), n);
  silu(gate.data(), act.data(), n);
  mul(act.data(), up.data(), hRef.data(), n);
  EXPECT_EQ(0, std::memcmp(h.data(), hRef.data(), n * sizeof(T)));
  std::vector<T> dgate(n), dup(n), dact(n), dgateRef(n), dupRef(n);
  swigluGrad(dy.data(), gate.data(), up.data(), dgate.data(), dup.data(), n);
  mul(dy.data(), up.data(), dact.data(), n);
  siluGrad(dact.data(), gate.data(), dgateRef.data(), n);
  mul(dy.data(), act.data(), dupRef.data(), n);
  EXPECT_EQ(0, std::memcmp(dgate.data(), dgateRef.data(), n * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(dup.data(), dupRef.data(), n * sizeof(T)));
}

TEST(KernelForward, SwigluMatchesTheOpsItReplaces) {
  expectSwigluBitwise<float>();
  expectSwigluBitwise<bf16>();
}

TEST(KernelForward, ResidualLayerNormFusionsMatchTheOpsTheyReplace) {
  expectResidualFusionsBitwise<float>();
  expectResidualFusionsBitwise<bf16>();
}

TEST(KernelForward, LayerNormAndSoftmaxRows) {
  const int64_t rows = 9, cols = 33;
  Vec x = randomVec(rows * cols, 4, -5, 5), g = randomVec(cols, 5), b = randomVec(cols, 6);
  Vec lnRef(rows * cols), smRef(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0, maxV = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x[r * cols + c] / cols, maxV = std::max(maxV, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean) / cols;
    for (int64_t c = 0; c < cols; ++c) {
      lnRef[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
      sum += std::exp(x[r * cols + c] - maxV);
    }
    for (int64_t c = 0; c < cols; ++c)
      smRef[r * cols + c] = std::exp(x[r * cols + c] - maxV) / sum;
  }
  auto xf = convert<float>(x), gf = convert<float>(g), bf = convert<float>(b);
  std::vector<float> ln(rows * cols), sm(rows * cols);
  layernorm(xf.data(), gf.data(), bf.data(), ln.data(), rows, cols, 1e-5);
  softmax(xf.data(), sm.data(), rows, cols);
  EXPECT_LE(worstRelativeError(toDouble(ln), lnRef, 1e-5, 1e-4), 1.0);
  EXPECT_LE(worstRelativeError(toDouble(sm), smRef, 1e-7, 1e-5), 1.0);
}

// Llama's ops against f64 formulas: RMSNorm, SiLU, and the rotary embedding as Hugging Face
// writes it (x cos + rotate_half(x) sin, rotate_half(x) = [-x2, x1], angle t theta^(-2i/D)).
TEST(KernelForward, RmsNormSiluRotaryMatchReferences) {
  const int64_t rows = 9, cols = 33;
  Vec x = randomVec(rows * cols, 41, -5, 5), g = randomVec(cols, 42);
  Vec rmsRef(rows * cols), siluRef(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double meanSquare = 0;
    for (int64_t c = 0; c < cols; ++c)
      meanSquare += x[r * cols + c] * x[r * cols + c] / cols;
    for (int64_t c = 0; c < cols; ++c)
      rmsRef[r * cols + c] = x[r * cols + c] / std::sqrt(meanSquare + 1e-6) * g[c];
  }
  for (size_t i = 0; i < x.size(); ++i)
    siluRef[i] = x[i] / (1 + std::exp(-x[i]));
  auto xf = convert<float>(x), gf = convert<float>(g);
  std::vector<float> rms(rows * cols), si(rows * cols);
  rmsnorm(xf.data(), gf.data(), rms.data(), rows, cols, 1e-6);
  silu(xf.data(), si.data(), si.size());
  EXPECT_LE(worstRelativeError(toDouble(rms), rmsRef, 1e-5, 1e-4), 1.0);
  EXPECT_LE(worstRelativeError(toDouble(si), siluRef, 1e-6, 1e-5), 1.0);

  for (double theta : {10000.0, 500000.0}) {
    const int64_t batch = 2, time = 37, heads = 2, headDim = 8, channels = heads * headDim, half = headDim / 2;
    Vec q = randomVec(batch * time * channels, 43), ref(q.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < time; ++t)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t i = 0; i < half; ++i) {
            const int64_t at = (b * time + t) * channels + h * headDim;
            const double angle = t * std::pow(theta, -2.0 * i / headDim);
            const double x1 = q[at + i], x2 = q[at + i + half];
            ref[at + i] = x1 * std::cos(angle) - x2 * std::sin(angle);
            ref[at + i + half] = x2 * std::cos(angle) + x1 * std::sin(angle);
          }
    auto qf = convert<float>(q);
    std::vector<float> out(q.size()), back(q.size());
    rotary(qf.data(), out.data(), batch, time, channels, heads, theta, false);
    EXPECT_LE(worstRelativeError(toDouble(out), ref, 1e-5, 1e-4), 1.0) << "theta " << theta;
    rotary(out.data(), back.data(), batch, time, channels, heads, theta, true); // and back
    EXPECT_LE(worstRelativeError(toDouble(back), toDouble(qf), 1e-5, 1e-4), 1.0) << "theta " << theta;
  }
}

/// rotary_dims R (GPT-NeoX's rotary_pct): each head's first R channels rotate as a head of R
/// channels would (angles t theta^(-2i/R)), the other channels are copied; both ways.
TEST(KernelForward, PartialRotaryMatchesItsDefinition) {
  const int64_t batch = 2, time = 37, heads = 3, headDim = 16, dims = 4, channels = heads * headDim, half = dims / 2;
  const double theta = 10000.0;
  Vec q = randomVec(batch * time * channels, 47), ref(q);
  for (int64_t row = 0; row < batch * time; ++row)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const int64_t at = row * channels + h * headDim, t = row % time;
        const double angle = t * std::pow(theta, -2.0 * i / dims);
        const double x1 = q[at + i], x2 = q[at + i + half];
        ref[at + i] = x1 * std::cos(angle) - x2 * std::sin(angle);
        ref[at + i + half] = x2 * std::cos(angle) + x1 * std::sin(angle);
      }
  auto qf = convert<float>(q);
  std::vector<float> out(q.size(), 12345.0f), back(q.size(), 12345.0f); // every channel written
  rotary(qf.data(), out.data(), batch, time, channels, heads, theta, false, nullptr, dims);
  EXPECT_LE(worstRelativeError(toDouble(out), ref, 1e-5, 1e-4), 1.0);
  rotary(out.data(), back.data(), batch, time, channels, heads, theta, true, nullptr, dims);
  EXPECT_LE(worstRelativeError(toDouble(back), toDouble(qf), 1e-5, 1e-4), 1.0);
  // In place, as the backward may run it.
  rotary(qf.data(), qf.data(), batch, time, channels, heads, theta, false, nullptr, dims);
  EXPECT_EQ(qf, out);
}

TEST(KernelForward, SoftmaxAndCrossEntropyStableForLargeLogits) {
  std::vector<float> logits = {1000.f, 1001.f, 999.f, -1000.f, -1001.f, -999.f}, y(6);
  softmax(logits.data(), y.data(), 2, 3);
  for (float v : y)
    EXPECT_TRUE(std::isfinite(v));
  std::vector<int32_t> labels = {1, 2};
  float loss = 0;
  crossEntropy(logits.data(), labels.data(), &loss, 2, 3);
  // Both rows are a shifted [1, 2, 0]: loss = logsumexp([1,2,0]) - 2 for each.
  double expected = std::log(std::exp(1.0) + std::exp(2.0) + 1.0) - 2.0;
  EXPECT_NEAR(loss, expected, 1e-5);
}

TEST(KernelForward, ElementwiseBf16AgreesWithF32) {
  const int64_t n = 1001;
  Vec x = randomVec(n, 7, -4, 4), y = randomVec(n, 8, -4, 4);
  auto xf = convert<float>(x), yf = convert<float>(y);
  auto xh = convert<bf16>(x), yh = convert<bf16>(y);
  std::vector<float> of(n);
  std::vector<bf16> oh(n);
  gelu(xh.data(), oh.data(), n);
  gelu(convert<float>(toDouble(xh)).data(), of.data(), n);
  EXPECT_LE(worstRelativeError(toDouble(oh), toDouble(of), 1e-2, 8e-3), 1.0);
  mul(xh.data(), yh.data(), oh.data(), n);
  mul(convert<float>(toDouble(xh)).data(), convert<float>(toDouble(yh)).data(), of.data(), n);
  EXPECT_LE(worstRelativeError(toDouble(oh), toDouble(of), 1e-3, 8e-3), 1.0);
}

// No subnormal anywhere in exp, tanh or GELU and its derivative, whatever the input (each
// subnormal operand costs a microcode assist: GELU over inputs of magnitude 20 ran 13x
// slower), and exp stays within 2 ulp where its result is a normal float.
/// The exact GELU against 0.5 x (1 + erf(x / sqrt 2)) in f64, in f32 and bf16; it differs from the
/// tanh form (the test would fail with that one) by up to ~1e-3.
TEST(KernelForward, GeluErfMatchesItsDefinition) {
  const int64_t n = 1001;
  Vec x = randomVec(n, 71, -6, 6), ref(n);
  for (int64_t i = 0; i < n; ++i)
    ref[i] = 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0)));
  auto xf = convert<float>(x);
  std::vector<float> out(n), tanhForm(n);
  geluErf(xf.data(), out.data(), n);
  EXPECT_LE(worstRelativeError(toDouble(out), ref, 1e-6, 1e-5), 1.0);
  gelu(xf.data(), tanhForm.data(), n);
  EXPECT_GT(worstRelativeError(toDouble(tanhForm), ref, 1e-6, 1e-5), 1.0);
  auto xh = convert<bf16>(x);
  std::vector<bf16> oh(n);
  geluErf(xh.data(), oh.data(), n);
  EXPECT_LE(worstRelativeError(toDouble(oh), ref, 1e-2, 1e-2), 1.0);
}

TEST(KernelForward, ExpTanhGeluNeverGoSubnormal) {
  using namespace zrt::math;
  for (float x = -200.0f; x <= 200.0f; x += 0.0625f) {
    if (x <= 88.0f) {
      const float e = vexp(x);
      ASSERT_TRUE(std::isnormal(e)) << "vexp(" << x << ") = " << e;
      if (x >= -87.0f)
        ASSERT_NEAR(e, std::exp(double(x)), 2.4e-7 * std::exp(double(x))) << x;
    }
    for (float v : {vtanh(x), 1.0f - vtanh(x), 1.0f + vtanh(x), geluValue(x), geluDerivative(x)})
      ASSERT_TRUE(v == 0.0f || std::isnormal(v)) << "x = " << x << ": " << v;
    std::feclearexcept(FE_UNDERFLOW);
    volatile float g = geluValue(x) + geluDerivative(x);
    (void)g;
    ASSERT_FALSE(std::fetestexcept(FE_UNDERFLOW)) << "an intermediate of GELU(" << x << ") underflowed";
  }
}

TEST(KernelForward, Bf16RoundsToNearestEven) {
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(bf16(1.0f + 1.0f / 256).bits, 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
  EXPECT_EQ(bf16(1.0f + 3.0f / 256).bits, 0x3f82);
  EXPECT_EQ(float(bf16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(float(bf16(NAN))));
  EXPECT_TRUE(std::isinf(float(bf16(INFINITY))));
}

TEST(KernelForward, ReduceSumTransposeSliceInsert) {
  const int64_t shape[3] = {3, 4, 5};
  Vec x = randomVec(60, 9);
  Vec sum02(4), t(60), box(2 * 2 * 3);
  reduceSum(x.data(), sum02.data(), shape, 3, 0b101);
  for (int64_t j = 0; j < 4; ++j) {
    double s = 0;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t l = 0; l < 5; ++l)
        s += x[i * 20 + j * 5 + l];
    EXPECT_NEAR(sum02[j], s, 1e-12);
  }
  const int64_t perm[3] = {2, 0, 1};
  transpose(x.data(), t.data(), shape, 3, perm);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t l = 0; l < 5; ++l)
        EXPECT_EQ(t[l * 12 + i * 4 + j], x[i * 20 + j * 5 + l]);
  const int64_t boxShape[3] = {2, 2, 3}, offsets[3] = {1, 2, 1};
  slice(x.data(), shape, box.data(), boxShape, 3, offsets);
  Vec back(60, 0.0);
  insert(box.data(), boxShape, back.data(), shape, 3, offsets);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t l = 0; l < 5; ++l) {
        bool inside = i >= 1 && j >= 2 && l >= 1 && l < 4;
        EXPECT_EQ(back[i * 20 + j * 5 + l], inside ? x[i * 20 + j * 5 + l] : 0.0);
      }
}

/// Every axis set of a rank-4 tensor whose innermost axis spans two 256-column
/// blocks and a remainder, against a direct sum.
TEST(KernelForward, ReduceSumEveryAxisSet) {
  const int64_t shape[4] = {3, 2, 5, 517};
  const int64_t n = 3 * 2 * 5 * 517;
  Vec x = randomVec(n, 11);
  for (int32_t mask = 0; mask < 16; ++mask) {
    int64_t outCount = 1;
    for (int i = 0; i < 4; ++i)
      if (!(mask & (1 << i)))
        outCount *= shape[i];
    Vec got(outCount), want(outCount, 0.0);
    reduceSum(x.data(), got.data(), shape, 4, mask);
    for (int64_t e = 0; e < n; ++e) {
      int64_t idx[4], rem = e, o = 0;
      for (int i = 3; i >= 0; --i) {
        idx[i] = rem % shape[i];
        rem /= shape[i];
      }
      for (int i = 0; i < 4; ++i)
        if (!(mask & (1 << i)))
          o = o * shape[i] + idx[i];
      want[o] += x[e];
    }
    for (int64_t o = 0; o < outCount; ++o)
      ASSERT_NEAR(got[o], want[o], 1e-10) << "mask " << mask << " output " << o;
  }
}

/// Boxes that span some inner axes whole (one contiguous run per outer index), none,
/// or the whole tensor: slice then insert puts back exactly the box.
TEST(KernelForward, SliceInsertEveryBoxKind) {
  const int64_t shape[3] = {4, 3, 6};
  Vec x = randomVec(72, 12);
  struct Box { int64_t dims[3], offsets[3]; };
  const Box boxes[] = {{{2, 3, 6}, {1, 0, 0}}, {{4, 2, 6}, {0, 1, 0}}, {{3, 2, 4}, {1, 1, 2}},
                       {{4, 3, 6}, {0, 0, 0}}, {{1, 1, 1}, {3, 2, 5}}, {{4, 3, 2}, {0, 0, 4}}};
  for (const Box &box : boxes) {
    Vec part(box.dims[0] * box.dims[1] * box.dims[2]), back(72, 0.0);
    slice(x.data(), shape, part.data(), box.dims, 3, box.offsets);
    insert(part.data(), box.dims, back.data(), shape, 3, box.offsets);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t l = 0; l < 6; ++l) {
          bool inside = i >= box.offsets[0] && i < box.offsets[0] + box.dims[0] && j >= box.offsets[1] &&
                        j < box.offsets[1] + box.dims[1] && l >= box.offsets[2] &&
                        l < box.offsets[2] + box.dims[2];
          ASSERT_EQ(back[i * 18 + j * 6 + l], inside ? x[i * 18 + j * 6 + l] : 0.0)
              << "box " << box.dims[0] << "x" << box.dims[1] << "x" << box.dims[2];
        }
  }
}

TEST(KernelForward, AdamWMatchesTorchFormulaOverSteps) {
  const int64_t n = 17;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  Vec p = randomVec(n, 10), m(n, 0), v(n, 0);
  auto pf = convert<float>(p);
  std::vector<float> mf(n, 0), vf(n, 0);
  std::vector<bf16> copy(n);
  for (int64_t step = 1; step <= 3; ++step) {
    Vec g = randomVec(n, 20 + step);
    auto gf = convert<float>(g);
    adamw(pf.data(), gf.data(), mf.data(), vf.data(), copy.data(), n,
          AdamWConfig{lr, b1, b2, eps, wd, step});
    for (int64_t i = 0; i < n; ++i) { // torch.optim.AdamW, in f64
      double gi = double(gf[i]);
      p[i] *= 1 - lr * wd;
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double denom = std::sqrt(v[i]) / std::sqrt(1 - std::pow(b2, step)) + eps;
      p[i] -= lr / (1 - std::pow(b1, step)) * m[i] / denom;
    }
  }
  EXPECT_LE(worstRelativeError(toDouble(pf), p, 1e-6, 1e-5), 1.0);
  EXPECT_LE(worstRelativeError(toDouble(copy), p, 1e-3, 8e-3), 1.0);
}

TEST(KernelForward, SgdMomentumMatchesTorchFormula) {
  const int64_t n = 9;
  const double lr = 0.1, mu = 0.9, wd = 0.01;
  Vec p = randomVec(n, 30), buf(n, 0);
  auto pf = convert<float>(p);
  std::vector<float> bf(n, 0);
  for (int step = 0; step < 3; ++step) {
    auto gh = convert<bf16>(randomVec(n, 40 + step)); // a bf16 gradient
    sgdMomentum(pf.data(), gh.data(), bf.data(), nullptr, n, lr, mu, wd);
    for (int64_t i = 0; i < n; ++i) {
      double g = double(float(gh[i])) + wd * p[i];
      buf[i] = mu * buf[i] + g;
      p[i] -= lr * buf[i];
    }
  }
  EXPECT_LE(worstRelativeError(toDouble(pf), p, 1e-6, 1e-5), 1.0);
}

} // namespace
