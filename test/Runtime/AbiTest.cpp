// The C ABI: every entry of zrt_abi.def is defined, dtype dispatch works, and bad input
// stops the process with a message naming the call (and the rank) instead of corrupting memory.
#include <gtest/gtest.h>

#include <cmath>
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
  zrt_cross_entropy(ZRT_DTYPE_F32, logits.data(), labels.data(), &loss, 1, 4);
  EXPECT_NEAR(loss, std::log(4.0), 1e-6);
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

using AbiDeathTest = ::testing::Test;

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
  EXPECT_EXIT(zrt_cross_entropy(ZRT_DTYPE_F32, logits.data(), labels.data(), &loss, 2, 3),
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
                                   10, 4, 4),
              ::testing::ExitedWithCode(1), "zrt_causal_attention: 10 channels are not divisible into 4 heads");
}

TEST_F(AbiDeathTest, AttentionKeyValueHeadsMustDivideHeads) {
  std::vector<float> q(2 * 3 * 12);
  EXPECT_EXIT(zrt_causal_attention_grad(ZRT_DTYPE_F32, q.data(), q.data(), q.data(), q.data(), q.data(), q.data(),
                                        q.data(), 2, 3, 12, 6, 4),
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
