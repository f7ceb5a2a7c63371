// The C ABI: every entry of zrt_abi.def is defined, dtype dispatch works, and bad input
// stops the process with a message naming the call (and the rank) instead of corrupting memory.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

// Taking every entry's address makes the link fail if the .def lists a function the
// runtime does not define (the declarations come from the same .def).
#define ZRT_VOID
#define ZRT_RI32
#define ZRT_RI64
#define ZRT_FN(ret, name, params) reinterpret_cast<const void *>(&name),
const void *const kEntries[] = {
#include "zrt/zrt_abi.def"
};
#undef ZRT_FN

TEST(Abi, EveryEntryIsDefined) {
  for (const void *entry : kEntries)
    EXPECT_NE(entry, nullptr);
  EXPECT_GE(sizeof(kEntries) / sizeof(kEntries[0]), 30u);
}

TEST(Abi, DispatchesOnDtype) {
  std::vector<float> a = {1, 2, 3}, b = {4, 5, 6}, c(3);
  zrt_add(ZRT_DTYPE_F32, a.data(), b.data(), c.data(), 3);
  EXPECT_EQ(c, (std::vector<float>{5, 7, 9}));
  std::vector<zrt::bf16> ah(3), ch(3);
  zrt_cast(ZRT_DTYPE_F32, a.data(), ZRT_DTYPE_BF16, ah.data(), 3);
  zrt_scale(ZRT_DTYPE_BF16, ah.data(), ch.data(), 3, 0.5);
  EXPECT_EQ(float(ch[2]), 1.5f);
  float loss = -1;
  std::vector<float> logits = {0, 0, 0, 0};
  std::vector<int32_t> labels = {3};
  zrt_cross_entropy(ZRT_DTYPE_F32, logits.data(), labels.data(), &loss, 1, 4, 0.0);
  EXPECT_NEAR(loss, std::log(4.0), 1e-6);
}

// zrt_copy and zrt_fill_zero move bytes by 64 KiB chunks over the threads: sizes around a chunk, several
// chunks with a ragged end, both dtypes; the bytes beyond n are left alone.
TEST(Abi, CopyAndFillZeroByChunks) {
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(16383), int64_t(16384), int64_t(16385), int64_t(100003)}) {
    std::vector<float> src(n + 1), dst(n + 1, -1.0f);
    for (int64_t i = 0; i <= n; ++i)
      src[i] = float(i) + 0.5f;
    zrt_copy(ZRT_DTYPE_F32, src.data(), dst.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(dst[i], src[i]) << "n " << n << " at " << i;
    EXPECT_EQ(dst[n], -1.0f);
    zrt_fill_zero(ZRT_DTYPE_F32, dst.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(dst[i], 0.0f) << "n " << n << " at " << i;
    EXPECT_EQ(dst[n], -1.0f);
    std::vector<zrt::bf16> half(n + 1, zrt::bf16(2.0f)), copy(n + 1, zrt::bf16(-1.0f));
    zrt_copy(ZRT_DTYPE_BF16, half.data(), copy.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(float(copy[i]), 2.0f) << "n " << n << " at " << i;
    EXPECT_EQ(float(copy[n]), -1.0f);
  }
}

// zrt_finalize wakes the collectives' watchdog instead of waiting out its half-second check
// (runtime/cpu/Runtime.cpp): a sleeping watchdog held every train.bin's exit for up to 0.5 s, a
// few minutes of the test suite's hundreds of runs. Four init/finalize pairs 20 ms apart (the
// watchdog asleep by then) took 2 s then; here 0.08 s, so 1 s is far from either.
TEST(Abi, FinalizeDoesNotWaitForTheWatchdog) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    zrt_init(1, 4096);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    zrt_finalize();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);
}

// train.bin's non-finite check: every gradient in one call, the first bad tensor's index.
TEST(Abi, FirstNonFiniteTensor) {
  zrt_init(1, 4096);
  std::vector<float> values(256, 1.0f);
  values[200] = INFINITY;                     // in the third tensor, [192, 256)
  zrt_arena_write(0, values.data(), 256 * 4);
  std::vector<zrt::bf16> half(64, zrt::bf16(1.0f));
  half[5] = zrt::bf16(NAN);
  zrt_arena_write(2048, half.data(), 64 * 2); // a bf16 tensor with a NaN
  const int64_t offsets[] = {0, 64 * 4, 192 * 4, 2048}, elements[] = {64, 128, 64, 64};
  const int32_t dtypes[] = {ZRT_DTYPE_F32, ZRT_DTYPE_F32, ZRT_DTYPE_F32, ZRT_DTYPE_BF16};
  EXPECT_EQ(zrt_arena_first_nonfinite(2, offsets, elements, dtypes), -1);
  EXPECT_EQ(zrt_arena_first_nonfinite(4, offsets, elements, dtypes), 2);
  EXPECT_EQ(zrt_arena_first_nonfinite(1, offsets + 3, elements + 3, dtypes + 3), 0);
  zrt_finalize();
}

// Gradient clipping: the weighted global norm (f32 and bf16 pieces), clip_grad_norm_'s
// coefficient, and an update reading its gradient through the coefficient equal to the update of
// the gradient scaled first (bitwise: one f32 multiply either way).
TEST(Abi, GradNormAndClippedUpdate) {
  zrt_init(1, 4096);
  std::vector<float> a = {3.0f, 0.0f, 0.0f, 4.0f};          // sum of squares 25
  std::vector<zrt::bf16> b = {zrt::bf16(1.0f), zrt::bf16(2.0f)}; // 5, counted half (two ranks hold it)
  const void *grads[] = {a.data(), b.data()};
  const int64_t numels[] = {4, 2}, dtypes[] = {ZRT_DTYPE_F32, ZRT_DTYPE_BF16};
  const double weights[] = {1.0, 0.5};
  float norm = 0, coef = 0;
  zrt_grad_norm(2, grads, numels, dtypes, weights, 1.0, &norm, &coef);
  const float expected = static_cast<float>(std::sqrt(27.5));
  EXPECT_EQ(norm, expected);
  EXPECT_EQ(coef, 1.0f / (expected + 1e-6f));
  EXPECT_EQ(zrt_last_grad_norm(), static_cast<double>(expected));
  zrt_grad_norm(2, grads, numels, dtypes, weights, 0.0, &norm, &coef); // max_norm 0: no clipping
  EXPECT_EQ(coef, 1.0f);
  zrt_grad_norm(2, grads, numels, dtypes, weights, 100.0, &norm, &coef); // under the bound
  EXPECT_EQ(coef, 1.0f);

  zrt_grad_norm(2, grads, numels, dtypes, weights, 1.0, &norm, &coef);
  std::vector<float> p1 = {0.5f, -0.25f, 1.0f, 2.0f}, m1(4, 0), v1(4, 0), p2 = p1, m2(4, 0), v2(4, 0), scaled(4);
  for (int i = 0; i < 4; ++i)
    scaled[i] = a[i] * coef;
  zrt_adamw(p1.data(), ZRT_DTYPE_F32, a.data(), m1.data(), v1.data(), nullptr, 4, 1e-2, 0.9, 0.999, 1e-8, 0.1, 1,
            &coef);
  zrt_adamw(p2.data(), ZRT_DTYPE_F32, scaled.data(), m2.data(), v2.data(), nullptr, 4, 1e-2, 0.9, 0.999, 1e-8, 0.1,
            1, nullptr);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(v1, v2);
  std::vector<float> q1 = {0.5f, -0.25f, 1.0f, 2.0f}, q2 = q1, buf1(4, 0), buf2(4, 0);
  zrt_sgd_momentum(q1.data(), ZRT_DTYPE_F32, a.data(), buf1.data(), nullptr, 4, 0.1, 0.9, 0.0, &coef);
  zrt_sgd_momentum(q2.data(), ZRT_DTYPE_F32, scaled.data(), buf2.data(), nullptr, 4, 0.1, 0.9, 0.0, nullptr);
  EXPECT_EQ(q1, q2);
  zrt_finalize();
}

// The norm in three calls, as a pipeline rank runs it over its stage programs: each program adds
// its tensors, the rank's sum is reduced once, each program finishes from it. Two programs
// holding the two tensors give zrt_grad_norm's norm over both, and both finish with it; the next
// add starts the next step's sum.
TEST(Abi, GradNormOverSeveralPrograms) {
  zrt_init(1, 4096);
  std::vector<float> a = {3.0f, 0.0f, 0.0f, 4.0f};
  std::vector<zrt::bf16> b = {zrt::bf16(1.0f), zrt::bf16(2.0f)};
  const void *grads[] = {a.data(), b.data()};
  const int64_t numels[] = {4, 2}, dtypes[] = {ZRT_DTYPE_F32, ZRT_DTYPE_BF16};
  const double weights[] = {1.0, 0.5};
  float whole = 0, wholeCoef = 0;
  zrt_grad_norm(2, grads, numels, dtypes, weights, 1.0, &whole, &wholeCoef);
  for (int step = 0; step < 2; ++step) {
    zrt_grad_norm_add(1, grads, numels, dtypes, weights);
    zrt_grad_norm_add(1, grads + 1, numels + 1, dtypes + 1, weights + 1);
    zrt_grad_norm_reduce();
    float norm0 = 0, coef0 = 0, norm1 = 0, coef1 = 0;
    zrt_grad_norm_finish(1.0, &norm0, &coef0);
    zrt_grad_norm_finish(1.0, &norm1, &coef1);
    EXPECT_EQ(norm0, whole);
    EXPECT_EQ(norm1, whole);
    EXPECT_EQ(coef0, wholeCoef);
    EXPECT_EQ(coef1, wholeCoef);
  }
  // One program's tensors alone: a new sum, not the last step's.
  zrt_grad_norm_add(1, grads, numels, dtypes, weights);
  zrt_grad_norm_reduce();
  float norm = 0, coef = 0;
  zrt_grad_norm_finish(0.0, &norm, &coef);
  EXPECT_EQ(norm, 5.0f);
  EXPECT_EQ(coef, 1.0f);
  zrt_finalize();
}

using AbiDeathTest = ::testing::Test;

TEST_F(AbiDeathTest, GradNormFinishBeforeReduce) {
  std::vector<float> a = {3.0f, 4.0f};
  const void *grads[] = {a.data()};
  const int64_t numels[] = {2}, dtypes[] = {ZRT_DTYPE_F32};
  const double weights[] = {1.0};
  float norm = 0, coef = 0;
  EXPECT_EXIT(
      {
        zrt_init(1, 4096);
        zrt_grad_norm_add(1, grads, numels, dtypes, weights);
        zrt_grad_norm_finish(1.0, &norm, &coef);
      },
      ::testing::ExitedWithCode(1), "zrt_grad_norm_finish: no zrt_grad_norm_reduce since the last zrt_grad_norm_add");
}

TEST_F(AbiDeathTest, UnknownDtype) {
  std::vector<float> a(4);
  EXPECT_EXIT(zrt_relu(7, a.data(), a.data(), 4), ::testing::ExitedWithCode(1),
              "zrt: rank 0: zrt_relu: unknown dtype 7");
}

TEST_F(AbiDeathTest, TokenIdOutOfRange) {
  std::vector<float> table(4 * 2), out(3 * 2);
  std::vector<int32_t> ids = {0, 4, 1};
  EXPECT_EXIT(zrt_embedding(ZRT_DTYPE_F32, table.data(), ids.data(), out.data(), 3, 4, 2),
              ::testing::ExitedWithCode(1),
              "zrt_embedding: id 4 at position 1 is outside \\[0, 4\\)");
}

TEST_F(AbiDeathTest, LabelOutOfRange) {
  std::vector<float> logits(2 * 3);
  std::vector<int32_t> labels = {2, -1};
  float loss;
  EXPECT_EXIT(zrt_cross_entropy(ZRT_DTYPE_F32, logits.data(), labels.data(), &loss, 2, 3, 0.0),
              ::testing::ExitedWithCode(1),
              "zrt_cross_entropy: label -1 at position 1 is outside \\[0, 3\\)");
}

TEST_F(AbiDeathTest, SliceBoxOutsideTensor) {
  std::vector<float> x(12), out(4);
  const int64_t xShape[2] = {3, 4}, outShape[2] = {2, 2}, offsets[2] = {2, 0};
  EXPECT_EXIT(zrt_slice(ZRT_DTYPE_F32, x.data(), xShape, out.data(), outShape, 2, offsets),
              ::testing::ExitedWithCode(1), "zrt_slice: box \\[2, 4\\) on axis 0 is outside \\[0, 3\\)");
}

TEST_F(AbiDeathTest, AttentionHeadsMustDivideChannels) {
  std::vector<float> q(2 * 3 * 10);
  EXPECT_EXIT(zrt_causal_attention(ZRT_DTYPE_F32, q.data(), q.data(), q.data(), q.data(), 2, 3,
                                   10, 4, 4, 0.0, 0.0, 0),
              ::testing::ExitedWithCode(1), "zrt_causal_attention: 10 channels are not divisible into 4 heads");
}

TEST_F(AbiDeathTest, AttentionKeyValueHeadsMustDivideHeads) {
  std::vector<float> q(2 * 3 * 12);
  EXPECT_EXIT(zrt_causal_attention_grad(ZRT_DTYPE_F32, q.data(), q.data(), q.data(), q.data(), q.data(), q.data(),
                                        q.data(), 2, 3, 12, 6, 4, 0.0, 0.0, 0),
              ::testing::ExitedWithCode(1),
              "zrt_causal_attention_grad: 6 query heads do not split into groups of 4 key/value heads");
}

TEST_F(AbiDeathTest, AdamWStepStartsAtOne) {
  std::vector<float> p(2), g(2), m(2), v(2);
  EXPECT_EXIT(zrt_adamw(p.data(), ZRT_DTYPE_F32, g.data(), m.data(), v.data(), nullptr, 2, 1e-3,
                        0.9, 0.999, 1e-8, 0.0, 0, nullptr),
              ::testing::ExitedWithCode(1), "zrt_adamw: step must start at 1, got 0");
}

} // namespace
