// Every ISA level of the compute-bound kernels (cpu/IsaKernels.h) this CPU runs agrees with
// the f64 kernels: the -march builds must change speed, never results beyond f32 rounding.
#include "KernelTestUtils.h"

#include "cpu/Attention.h"
#include "cpu/Elementwise.h"
#include "cpu/IsaKernels.h"
#include "cpu/Normalization.h"
#include "cpu/WidenTiles.h"
#include "zrt/zrt.h"

using namespace zrt;
using namespace zrt::cpu;
using namespace zrt::test;

namespace {

void expectClose(const std::string &what, const std::vector<float> &got, const Vec &want,
                 double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at " << i;
}

std::vector<const IsaKernels *> levelsThisCpuRuns() {
  std::vector<const IsaKernels *> levels;
  for (const char *isa : {"generic", "avx2", "avx512"})
    if (const IsaKernels *k = isaKernelsFor(isa))
      levels.push_back(k);
  return levels;
}

TEST(IsaKernels, GenericIsAlwaysThereAndUnknownLevelsAreNot) {
  ASSERT_NE(isaKernelsFor("generic"), nullptr);
  EXPECT_EQ(isaKernelsFor("sse9"), nullptr);
  EXPECT_NE(isaKernels().isa, nullptr);
}

TEST(IsaKernels, EveryLevelMatchesF64) {
  // Odd sizes leave vector remainders; 70001 elements cross the parallel grain.
  const int64_t n = 70001;
  Vec x = randomVec(n, 1, -6, 6), dy = randomVec(n, 2);
  Vec gelu64(n), geluGrad64(n);
  gelu(x.data(), gelu64.data(), n);
  geluGrad(dy.data(), x.data(), geluGrad64.data(), n);
  Vec silu64(n), siluGrad64(n);
  silu(x.data(), silu64.data(), n);
  siluGrad(dy.data(), x.data(), siluGrad64.data(), n);

  const int64_t rows = 37, cols = 301;
  Vec logits = randomVec(rows * cols, 3, -20, 20), soft64(rows * cols);
  softmax(logits.data(), soft64.data(), rows, cols);

  const int64_t B = 2, T = 19, C = 24, H = 3;
  Vec q = randomVec(B * T * C, 4), k = randomVec(B * T * C, 5), v = randomVec(B * T * C, 6);
  Vec dout = randomVec(B * T * C, 7), att64(B * T * C), dq64(B * T * C), dk64(B * T * C),
      dv64(B * T * C);
  causalAttention(q.data(), k.data(), v.data(), att64.data(), B, T, C, H, H);
  causalAttentionGrad(dout.data(), q.data(), k.data(), v.data(), dq64.data(), dk64.data(),
                      dv64.data(), B, T, C, H, H);
  // zc's variants: a scale, soft-capped scores and a window of 40 over 150 positions (query
  // blocks of 64 that skip the keys before their window), grouped-query heads.
  const zrt::AttentionVariant variant{0.3, 4.0, 40};
  const int64_t Tv = 150, Gv = 1, Ckv = C / H * Gv;
  Vec qv = randomVec(Tv * C, 8), kv = randomVec(Tv * Ckv, 9), vv = randomVec(Tv * Ckv, 10), gv = randomVec(Tv * C, 11);
  Vec attV64(Tv * C), dqV64(Tv * C), dkV64(Tv * Ckv), dvV64(Tv * Ckv);
  causalAttention(qv.data(), kv.data(), vv.data(), attV64.data(), 1, Tv, C, H, Gv, variant);
  causalAttentionGrad(gv.data(), qv.data(), kv.data(), vv.data(), dqV64.data(), dkV64.data(), dvV64.data(), 1, Tv, C,
                      H, Gv, variant);

  for (const IsaKernels *level : levelsThisCpuRuns()) {
    SCOPED_TRACE(level->isa);
    auto xf = convert<float>(x), dyf = convert<float>(dy);
    std::vector<float> o(n);
    level->gelu(ZRT_DTYPE_F32, xf.data(), o.data(), n);
    expectClose("gelu", o, gelu64, 1e-5);
    level->geluGrad(ZRT_DTYPE_F32, dyf.data(), xf.data(), o.data(), n);
    expectClose("gelu_grad", o, geluGrad64, 1e-5);
    {
      // SwiGLU (gate = x, up = dy): within f32 rounding of f64's silu(x) dy and its gradient.
      std::vector<float> dg(n), du(n);
      Vec want(n), wantDg(n), wantDu(n);
      for (int64_t i = 0; i < n; ++i) {
        const double sig = 1 / (1 + std::exp(-x[i]));
        want[i] = silu64[i] * dy[i];
        wantDg[i] = sig * (1 + x[i] * (1 - sig)) * dy[i] * dy[i]; // silu'(gate) (grad up), up = grad = dy
        wantDu[i] = dy[i] * silu64[i];
      }
      level->swiglu(ZRT_DTYPE_F32, xf.data(), dyf.data(), o.data(), n);
      expectClose("swiglu", o, want, 1e-5);
      level->swigluGrad(ZRT_DTYPE_F32, dyf.data(), xf.data(), dyf.data(), dg.data(), du.data(), n);
      expectClose("swiglu_grad gate", dg, wantDg, 1e-4);
      expectClose("swiglu_grad up", du, wantDu, 1e-5);
    }
    level->silu(ZRT_DTYPE_F32, xf.data(), o.data(), n);
    expectClose("silu", o, silu64, 1e-5);
    level->siluGrad(ZRT_DTYPE_F32, dyf.data(), xf.data(), o.data(), n);
    expectClose("silu_grad", o, siluGrad64, 1e-5);

    auto lf = convert<float>(logits);
    std::vector<float> s(rows * cols);
    level->softmax(ZRT_DTYPE_F32, lf.data(), s.data(), rows, cols);
    expectClose("softmax", s, soft64, 1e-5);

    auto qf = convert<float>(q), kf = convert<float>(k), vf = convert<float>(v),
         df = convert<float>(dout);
    std::vector<float> a(B * T * C), dq(B * T * C), dk(B * T * C), dv(B * T * C);
    level->causalAttention(ZRT_DTYPE_F32, qf.data(), kf.data(), vf.data(), a.data(), B, T, C, H, H, {});
    expectClose("attention", a, att64, 1e-5);
    level->causalAttentionGrad(ZRT_DTYPE_F32, df.data(), qf.data(), kf.data(), vf.data(),
                               dq.data(), dk.data(), dv.data(), B, T, C, H, H, {});
    expectClose("attention dq", dq, dq64, 1e-4);
    expectClose("attention dk", dk, dk64, 1e-4);
    expectClose("attention dv", dv, dv64, 1e-4);
    {
      auto qvf = convert<float>(qv), kvf = convert<float>(kv), vvf = convert<float>(vv), gvf = convert<float>(gv);
      std::vector<float> av(Tv * C), dqv(Tv * C), dkv(Tv * Ckv), dvv(Tv * Ckv);
      level->causalAttention(ZRT_DTYPE_F32, qvf.data(), kvf.data(), vvf.data(), av.data(), 1, Tv, C, H, Gv, variant);
      expectClose("attention (scale, softcap, window)", av, attV64, 1e-5);
      level->causalAttentionGrad(ZRT_DTYPE_F32, gvf.data(), qvf.data(), kvf.data(), vvf.data(), dqv.data(), dkv.data(),
                                 dvv.data(), 1, Tv, C, H, Gv, variant);
      expectClose("attention dq (scale, softcap, window)", dqv, dqV64, 1e-4);
      expectClose("attention dk (scale, softcap, window)", dkv, dkV64, 1e-4);
      expectClose("attention dv (scale, softcap, window)", dvv, dvV64, 1e-4);
    }

    // bf16 goes through the same level with f32 math: within bf16 rounding of f32.
    auto xb = convert<bf16>(x);
    std::vector<bf16> ob(n);
    level->gelu(ZRT_DTYPE_BF16, xb.data(), ob.data(), n);
    Vec xRounded = toDouble(xb), want(n);
    gelu(xRounded.data(), want.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(float(ob[i]), want[i], 1e-2 * (1 + std::abs(want[i]))) << "bf16 gelu at " << i;
  }
}

// Every level's widened bf16 GEMM rounds its f32 sums exactly as bf16::fromFloat (nearest even,
// NaN kept quiet), in registers on whole tiles and one by one on edge tiles: C = A ones(2, 64)
// sums two bf16 values per row (exact in f32) into 64 columns, so every column is that sum
// rounded once. Ties to even both ways, infinities, NaN and sums past bf16's range are among
// the rows; 997 rows leave an edge tile at the bottom.
TEST(IsaKernels, WidenedGemmRoundsAsBf16FromFloat) {
  std::vector<std::pair<float, float>> pairs = {
      {1.0f, 0x1p-8f},   {0x1.02p0f, 0x1p-8f}, {1.0f, 0x3p-9f},   {-0x1.02p0f, -0x1p-8f},
      {0x1.fep127f, 0x1p120f}, {INFINITY, 1.0f}, {-INFINITY, -1.0f}, {NAN, 1.0f},
      {0.0f, -0.0f},     {-0.0f, -0.0f}};
  uint32_t state = 12345;
  while (pairs.size() < 997) {
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return std::ldexp(float(int32_t(state) >> 8), int(state % 40) - 50);
    };
    pairs.push_back({next(), next()});
  }
  const int64_t m = static_cast<int64_t>(pairs.size()), n = 64;
  std::vector<bf16> a(2 * m), ones(2 * n, bf16(1.0f)), c(m * n);
  for (int64_t i = 0; i < m; ++i)
    a[2 * i] = bf16(pairs[i].first), a[2 * i + 1] = bf16(pairs[i].second);
  for (const IsaKernels *level : levelsThisCpuRuns()) {
    SCOPED_TRACE(level->isa);
    for (bool transB : {false, true})
      for (WidenTiles tiles : {WidenTiles(), WidenTiles{8, 40, 1}}) { // K in one block, in two
        level->widenedGemm(a.data(), ones.data(), c.data(), m, n, 2, false, transB, tiles);
        for (int64_t i = 0; i < m; ++i) {
          // A GEMM's sums start at +0 (so -0 + -0 is +0 here, as in BLAS and oneDNN).
          const float sum = (0.0f + float(a[2 * i])) + float(a[2 * i + 1]);
          for (int64_t j = 0; j < n; ++j)
            ASSERT_EQ(c[i * n + j].bits, bf16(sum).bits)
                << "row " << i << " column " << j << ": " << float(a[2 * i]) << " + "
                << float(a[2 * i + 1]) << (transB ? ", B transposed" : "") << ", K block "
                << tiles.k;
        }
      }
  }
}
} // namespace
