// Block-wise quantization on every ISA level this CPU runs, against the f64 reference
// (QuantizeReference.h): bitwise, for f32 and bf16 inputs, 8 and 4 bits, rows whose last block
// is short, all-zero blocks and exact ties.
#include <gtest/gtest.h>

#include "QuantizeReference.h"
#include "cpu/IsaKernels.h"
#include "zrt/Quantize.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

using namespace zrt;
using namespace zrt::test;

namespace {

std::vector<const cpu::IsaKernels *> levelsThisCpuRuns() {
  std::vector<const cpu::IsaKernels *> levels;
  for (const char *isa : {"generic", "avx2", "avx512"})
    if (const cpu::IsaKernels *k = cpu::isaKernelsFor(isa))
      levels.push_back(k);
  return levels;
}

template <class T> std::vector<T> as(const std::vector<double> &x) {
  std::vector<T> out(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    out[i] = T(static_cast<float>(x[i]));
  return out;
}

template <class T> void checkLevel(const cpu::IsaKernels &k, int32_t dtype, int bits, int64_t rows, int64_t cols,
                                   int64_t block) {
  const std::string what = std::string(k.isa) + (dtype ? " bf16" : " f32") + " bits " + std::to_string(bits) +
                           " [" + std::to_string(rows) + ", " + std::to_string(cols) + "] block " +
                           std::to_string(block);
  std::vector<T> x = as<T>(quantizationInputs(rows, cols, block, bits, 11 + bits + cols));
  std::vector<double> exact(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    exact[i] = static_cast<float>(x[i]);
  const int64_t stride = quant::rowBytes(cols, block, bits);
  ASSERT_EQ(stride, referenceRowBytes(cols, block, bits)) << what;
  std::vector<uint8_t> got(rows * stride, 0xAB), want = referenceQuantize(exact, rows, cols, block, bits);
  k.quantize(dtype, x.data(), got.data(), rows, cols, block, bits);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << what << ": byte " << i << " of row " << i / stride;
  std::vector<T> back(rows * cols);
  k.dequantize(dtype, got.data(), back.data(), rows, cols, block, bits);
  std::vector<double> wantBack = referenceDequantize(want, rows, cols, block, bits);
  for (size_t i = 0; i < back.size(); ++i)
    ASSERT_EQ(static_cast<float>(back[i]), static_cast<float>(T(static_cast<float>(wantBack[i])))) << what << " at " << i;
}

TEST(Quantize, EveryLevelMatchesTheF64ReferenceBitwise) {
  struct Shape {
    int64_t rows, cols, block;
  };
  // A short last block (cols % block), an odd row length at 4 bits, one block per row, and
  // enough blocks to cross the parallel grain.
  for (Shape s : {Shape{3, 1000, 128}, Shape{5, 257, 64}, Shape{1, 64, 64}, Shape{4, 70001, 2048},
                  Shape{2, 31, 2}})
    for (const cpu::IsaKernels *k : levelsThisCpuRuns())
      for (int bits : {8, 4}) {
        checkLevel<float>(*k, ZRT_DTYPE_F32, bits, s.rows, s.cols, s.block);
        checkLevel<bf16>(*k, ZRT_DTYPE_BF16, bits, s.rows, s.cols, s.block);
      }
}

TEST(Quantize, TiesRoundToEvenAndLevelsSaturate) {
  // Scale 1/8 (amax 127/8); 2.5 / (1/8) = 20 exactly, 0.3125 x 8 = 2.5 -> 2, 0.4375 x 8 = 3.5 -> 4.
  std::vector<float> x{127.0f / 8, 0.3125f, 0.4375f, -0.3125f, -127.0f / 8};
  std::vector<uint8_t> q(quant::rowBytes(5, 8, 8));
  zrt_quantize(ZRT_DTYPE_F32, x.data(), q.data(), 1, 5, 8, 8);
  float scale;
  std::memcpy(&scale, q.data(), 4);
  EXPECT_EQ(scale, 0.125f);
  const int8_t *levels = reinterpret_cast<const int8_t *>(q.data() + 4);
  EXPECT_EQ(levels[0], 127);
  EXPECT_EQ(levels[1], 2);
  EXPECT_EQ(levels[2], 4);
  EXPECT_EQ(levels[3], -2);
  EXPECT_EQ(levels[4], -127);
  // 4 bits: levels -7..7, two per byte, low nibble first.
  std::vector<float> y{7.0f, -7.0f, 1.0f, -1.0f};
  std::vector<uint8_t> p(quant::rowBytes(4, 4, 4));
  zrt_quantize(ZRT_DTYPE_F32, y.data(), p.data(), 1, 4, 4, 4);
  EXPECT_EQ(p[4], 0x97); // 7 | (-7 & 0xF) << 4
  EXPECT_EQ(p[5], 0xF1); // 1 | (-1 & 0xF) << 4
  std::vector<float> back(4);
  zrt_dequantize(ZRT_DTYPE_F32, p.data(), back.data(), 1, 4, 4, 4);
  EXPECT_EQ(back, y);
}

TEST(FakeQuantize, EveryLevelMatchesDeepSpeedsQuantizersBitwise) {
  // Groups of 1000 and 33 values (vector remainders), one group; weights at the scale of an
  // initialization, some exactly on a tie of the grid, and a constant group (scale 0).
  for (const cpu::IsaKernels *k : levelsThisCpuRuns())
    for (bool asymmetric : {false, true})
      for (int bits : {8, 4, 2})
        for (int64_t groups : {int64_t(1), int64_t(3), int64_t(100)}) {
          const int64_t n = 3300;
          std::vector<double> x = quantizationInputs(1, n, 64, 8, 7 + bits);
          for (double &v : x)
            v = static_cast<float>(v * 0.02);
          for (int64_t i = 0; i < n / groups && groups == 100; ++i)
            x[i] = 0.25; // group 0: constant
          const std::string what = std::string(k->isa) + (asymmetric ? " asymmetric" : " symmetric") + " bits " +
                                   std::to_string(bits) + " groups " + std::to_string(groups);
          // Contiguous groups, and blocks of columns: of a [100, 33] tensor for 3 groups (runs of
          // 11), of a [33, 100] one otherwise (runs of 100 / groups).
          for (int64_t width : {n / groups, groups == 3 ? int64_t(11) : int64_t(100) / groups}) {
            std::vector<double> want = referenceFakeQuantize(x, groups, bits, asymmetric, width);
            std::vector<float> in = as<float>(x), got(n);
            const float on = 1.0f;
            const std::string how = what + " runs of " + std::to_string(width);
            k->fakeQuantize(ZRT_DTYPE_F32, in.data(), got.data(), n, groups, width, bits, asymmetric, on);
            for (int64_t i = 0; i < n; ++i)
              ASSERT_EQ(got[i], static_cast<float>(want[i])) << how << " at " << i << " (x " << x[i] << ")";
            k->fakeQuantize(ZRT_DTYPE_F32, in.data(), got.data(), n, groups, width, bits, asymmetric, 0.0f);
            ASSERT_EQ(got, in) << how << ": gate 0 must copy";
          }
        }
}

TEST(FakeQuantize, SymmetricGridIsDeepSpeeds) {
  // amax 1 at 8 bits: scale 2/256, levels -128..127, so 1.0 saturates at 127/128 and -1.0 is exact.
  std::vector<float> x{1.0f, -1.0f, 0.5f, 3.0f / 256, 0.0f}, y(5);
  const float gate = 1.0f;
  zrt_fake_quantize(ZRT_DTYPE_F32, x.data(), &gate, y.data(), 5, 1, 5, 8, 0);
  EXPECT_EQ(y[0], 127.0f / 128);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[3], 2.0f / 128); // 1.5 steps: ties to even
  EXPECT_EQ(y[4], 0.0f);
}

TEST(Quantize, RowBytesKeepScalesAligned) {
  EXPECT_EQ(quant::rowBytes(1000, 128, 8), 4 * 8 + 1000);
  EXPECT_EQ(quant::rowBytes(257, 64, 4), 4 * 5 + 132); // 129 value bytes padded to 132
  EXPECT_EQ(quant::rowBytes(3, 2, 8), 4 * 2 + 4);
  for (int64_t cols : {1, 2, 3, 5, 7, 1023})
    for (int bits : {8, 4})
      EXPECT_EQ(quant::rowBytes(cols, 2, bits) % 4, 0);
}

} // namespace
