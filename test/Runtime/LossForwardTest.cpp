// The losses' kernels: the fused language-model head (zc.matmul_cross_entropy and its loss-only
// form) against the ops it replaces, and the soft-capped cross-entropy against its definition.
// Run again with the CPU capped at AVX2 and at the generic level (test/Runtime/CMakeLists.txt):
// the head's products go through the matmul paths those levels pick.
#include "KernelTestUtils.h"

#include <cmath>

#include "cpu/Loss.h"
#include "cpu/Matmul.h"
#include "cpu/MatmulCrossEntropy.h"

using namespace zrt;
using namespace zrt::cpu;
using namespace zrt::test;

namespace {

/// The fused head against the ops it replaces (zrt_matmul's kernels, cross_entropy and its
/// gradient), in f32 and bf16, either weight layout: bitwise in one chunk; over several, within
/// the rounding of sums in another order (a GEMM of fewer rows may block K differently, and the
/// weight gradient sums its chunks one after another).
template <class T>
void expectHeadMatchesUnfused(bool transW, int64_t chunkRows, double rowTol, double wTol, double softcap = 0) {
  const int64_t rows = 150, classes = 67, channels = 24;
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r)
    labels[r] = static_cast<int32_t>((r * 37) % classes);
  auto x = convert<T>(randomVec(rows * channels, 41, -2, 2)), w = convert<T>(randomVec(classes * channels, 42));
  const float seed = 0.7f;
  // Unfused: the ops autodiff writes.
  std::vector<T> logits(rows * classes), dlogits(rows * classes), dxRef(x.size()), dwRef(w.size());
  float lossRef = 0;
  matmul(x.data(), w.data(), logits.data(), MatmulShape{1, rows, classes, channels, false, transW, false});
  crossEntropy(logits.data(), labels.data(), &lossRef, rows, classes, softcap);
  crossEntropyGrad(&seed, logits.data(), labels.data(), dlogits.data(), rows, classes, softcap);
  matmul(dlogits.data(), w.data(), dxRef.data(), MatmulShape{1, rows, channels, classes, false, !transW, false});
  if (transW)
    matmul(dlogits.data(), x.data(), dwRef.data(), MatmulShape{1, classes, channels, rows, true, false, false});
  else
    matmul(x.data(), dlogits.data(), dwRef.data(), MatmulShape{1, channels, classes, rows, true, false, false});
  // Fused; every output must be written.
  const auto layout = zrt::MatmulCrossEntropyLayout::of(rows, classes, w.size(), chunkRows, sizeof(T));
  std::vector<char> workspace(layout.bytes, 0x7f);
  std::vector<T> dx(x.size(), T(12345.0f)), dw(w.size(), T(12345.0f));
  float loss = -1;
  matmulCrossEntropy(x.data(), w.data(), labels.data(), &seed, &loss, dx.data(), dw.data(), workspace.data(), rows,
                     classes, channels, transW, chunkRows, softcap);
  const std::string what = std::string(sizeof(T) == 4 ? "f32" : "bf16") + (transW ? " [classes, channels]" : " [channels, classes]") +
                           " in chunks of " + std::to_string(chunkRows) + " softcap " + std::to_string(softcap);
  if (chunkRows >= rows) {
    EXPECT_EQ(loss, lossRef) << what;
    EXPECT_EQ(toDouble(dx), toDouble(dxRef)) << what;
    EXPECT_EQ(toDouble(dw), toDouble(dwRef)) << what;
    return;
  }
  EXPECT_NEAR(loss, lossRef, 1e-5 * std::fabs(lossRef)) << what;
  EXPECT_LE(worstRelativeError(toDouble(dx), toDouble(dxRef), rowTol, rowTol), 1.0) << what;
  EXPECT_LE(worstRelativeError(toDouble(dw), toDouble(dwRef), wTol, wTol), 1.0) << what;
}

TEST(LossForward, MatmulCrossEntropyMatchesTheOpsItReplaces) {
  for (bool transW : {true, false})
    for (int64_t chunkRows : {int64_t(150), int64_t(64), int64_t(7)}) {
      expectHeadMatchesUnfused<float>(transW, chunkRows, 1e-5, 1e-5);
      // bf16: the unfused weight gradient is rounded once from one f32 sum, the fused one from
      // the f32 sum of per-chunk bf16 products (a rounding of 2^-9 each).
      expectHeadMatchesUnfused<bf16>(transW, chunkRows, 1e-2, 2e-2);
      // Gemma 2's final-logit soft-cap, 2 against logits of about +-5: the same equalities.
      expectHeadMatchesUnfused<float>(transW, chunkRows, 1e-5, 1e-5, 2.0);
      expectHeadMatchesUnfused<bf16>(transW, chunkRows, 1e-2, 2e-2, 2.0);
    }
}

/// The loss alone (zc.matmul_cross_entropy_loss) against matmul then cross_entropy: bitwise in
/// one chunk, within the rounding of a GEMM of fewer rows over several; the workspace is all it
/// writes besides the loss.
template <class T> void expectHeadLossMatchesUnfused(bool transW, int64_t chunkRows, double softcap = 0) {
  const int64_t rows = 150, classes = 67, channels = 24;
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r)
    labels[r] = static_cast<int32_t>((r * 29) % classes);
  auto x = convert<T>(randomVec(rows * channels, 43, -2, 2)), w = convert<T>(randomVec(classes * channels, 44));
  std::vector<T> logits(rows * classes);
  float lossRef = 0;
  matmul(x.data(), w.data(), logits.data(), MatmulShape{1, rows, classes, channels, false, transW, false});
  crossEntropy(logits.data(), labels.data(), &lossRef, rows, classes, softcap);
  const auto layout = zrt::MatmulCrossEntropyLayout::forLoss(rows, classes, chunkRows, sizeof(T));
  EXPECT_LT(layout.bytes, static_cast<int64_t>(logits.size() * sizeof(T)) + 1024);
  std::vector<char> workspace(layout.bytes + 64, 0x7f);
  float loss = -1;
  matmulCrossEntropyLoss(x.data(), w.data(), labels.data(), &loss, workspace.data(), rows, classes, channels, transW,
                         chunkRows, softcap);
  const std::string what = std::string(sizeof(T) == 4 ? "f32" : "bf16") +
                           (transW ? " [classes, channels]" : " [channels, classes]") + " in chunks of " +
                           std::to_string(chunkRows) + " softcap " + std::to_string(softcap);
  for (int64_t i = layout.bytes; i < layout.bytes + 64; ++i)
    ASSERT_EQ(workspace[i], 0x7f) << what << ": wrote past its workspace";
  if (chunkRows >= rows)
    EXPECT_EQ(loss, lossRef) << what;
  else
    EXPECT_NEAR(loss, lossRef, (sizeof(T) == 4 ? 1e-6 : 1e-3) * std::fabs(lossRef)) << what;
}

TEST(LossForward, MatmulCrossEntropyLossMatchesTheOpsItReplaces) {
  for (bool transW : {true, false})
    for (int64_t chunkRows : {int64_t(150), int64_t(64), int64_t(7)}) {
      expectHeadLossMatchesUnfused<float>(transW, chunkRows);
      expectHeadLossMatchesUnfused<bf16>(transW, chunkRows);
      expectHeadLossMatchesUnfused<float>(transW, chunkRows, 2.0);
      expectHeadLossMatchesUnfused<bf16>(transW, chunkRows, 2.0);
    }
}

/// The soft-capped cross-entropy against its definition in f64: mean over rows of
/// logsumexp(c) - c[label] with c = cap tanh(z / cap); the gradient seed (softmax(c) - onehot)
/// (1 - tanh^2) / rows. Large logits (+-40 against a cap of 30) saturate the cap.
TEST(LossForward, CrossEntropySoftcapMatchesItsDefinition) {
  const int64_t rows = 5, classes = 13;
  const double cap = 30.0;
  Vec z = randomVec(rows * classes, 61, -40, 40);
  std::vector<int32_t> labels = {0, 12, 4, 4, 7};
  double want = 0;
  Vec gradWant(z.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> c(classes);
    double m = -1e300, sum = 0;
    for (int64_t k = 0; k < classes; ++k)
      m = std::max(m, c[k] = cap * std::tanh(z[r * classes + k] / cap));
    for (double v : c)
      sum += std::exp(v - m);
    want += (m + std::log(sum) - c[labels[r]]) / rows;
    for (int64_t k = 0; k < classes; ++k) {
      const double t = std::tanh(z[r * classes + k] / cap);
      gradWant[r * classes + k] = (std::exp(c[k] - m) / sum - (k == labels[r])) * (1 - t * t) / rows;
    }
  }
  auto zf = convert<float>(z);
  float loss = 0, one = 1.0f;
  std::vector<float> grad(z.size());
  crossEntropy(zf.data(), labels.data(), &loss, rows, classes, cap);
  crossEntropyGrad(&one, zf.data(), labels.data(), grad.data(), rows, classes, cap);
  EXPECT_NEAR(loss, want, 1e-5 * std::fabs(want));
  EXPECT_LE(worstRelativeError(toDouble(grad), gradWant, 1e-5, 1e-6), 1.0);
  // The cap changes the loss: the test would not pass with it ignored.
  float plain = 0;
  crossEntropy(zf.data(), labels.data(), &plain, rows, classes);
  EXPECT_GT(std::fabs(plain - loss), 0.1);
}

} // namespace
