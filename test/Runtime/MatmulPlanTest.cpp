// The matmul plan (cpu/MatmulPlan.h): the table's rows stand for every product a program runs
// (a chunked language-model head's products included), a plan survives its text form (a
// checkpoint keeps it), and bad text is refused.
#include <gtest/gtest.h>

#include <vector>

#include "KernelTestUtils.h"
#include "cpu/MatmulCrossEntropy.h"
#include "cpu/MatmulPlan.h"
#include "zrt/MatmulCrossEntropy.h"

using namespace zrt;
using namespace zrt::cpu;
using namespace zrt::test;

namespace {

/// A plan of every product of `table`, each on the rule's path.
MatmulPlan ruleOf(const std::vector<int64_t> &table) {
  MatmulPlan plan;
  for (const MatmulKey &key : productsOfTable(table.data(), table.size() / ZRT_MATMUL_ROW, "test"))
    plan[key] = ruleMatmulPath(key.dtype);
  return plan;
}

template <class T> void runHead(int64_t rows, int64_t classes, int64_t channels, bool transW, int64_t chunkRows) {
  auto x = convert<T>(randomVec(rows * channels, 1)), w = convert<T>(randomVec(classes * channels, 2));
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r)
    labels[r] = static_cast<int32_t>(r % classes);
  const auto layout = zrt::MatmulCrossEntropyLayout::of(rows, classes, w.size(), chunkRows, sizeof(T));
  std::vector<char> workspace(layout.bytes);
  std::vector<T> dx(x.size()), dw(w.size());
  const float seed = 1.0f;
  float loss = 0;
  matmulCrossEntropy(x.data(), w.data(), labels.data(), &seed, &loss, dx.data(), dw.data(), workspace.data(), rows,
                     classes, channels, transW, chunkRows);
}

} // namespace

// A cross-entropy row covers every product the head runs: whole chunks, the last partial one,
// both weight layouts, f32 and bf16; a plain row its own product.
TEST(MatmulPlan, TableRowsCoverEveryProductTheyRun) {
  for (bool transW : {true, false})
    for (int64_t chunkRows : {int64_t(150), int64_t(64), int64_t(7)}) {
      std::vector<int64_t> table;
      for (int64_t dtype : {ZRT_DTYPE_F32, ZRT_DTYPE_BF16})
        table.insert(table.end(), {ZRT_MATMUL_CROSS_ENTROPY, dtype, 150, 37, 19, transW, chunkRows, 0, 0});
      table.insert(table.end(), {ZRT_MATMUL_PLAIN, ZRT_DTYPE_F32, 3, 5, 7, 11, 1, 0, 1});
      installMatmulPlan(ruleOf(table));
      const int64_t before = unplannedMatmulCalls();
      runHead<float>(150, 37, 19, transW, chunkRows);
      runHead<bf16>(150, 37, 19, transW, chunkRows);
      std::vector<float> a(3 * 11 * 5, 1.0f), b(11 * 7, 1.0f), c(3 * 5 * 7);
      matmul(a.data(), b.data(), c.data(), MatmulShape{3, 5, 7, 11, true, false, true});
      EXPECT_EQ(unplannedMatmulCalls(), before) << "chunks of " << chunkRows << (transW ? ", w transposed" : "");
      // ... and a product outside the plan is counted.
      matmul(a.data(), b.data(), c.data(), MatmulShape{1, 5, 7, 11, true, false, false});
      EXPECT_EQ(unplannedMatmulCalls(), before + 1);
    }
  installMatmulPlan({});
}

TEST(MatmulPlan, TextRoundTrips) {
  MatmulPlan plan;
  plan[{ZRT_DTYPE_F32, MatmulShape{1, 2048, 1152, 384, false, true, false}}] = MatmulPath::Blas;
  plan[{ZRT_DTYPE_F32, MatmulShape{4, 8, 16, 32, true, false, true}}] = MatmulPath::Primitive;
  plan[{ZRT_DTYPE_BF16, MatmulShape{1, 384, 1536, 2048, true, false, false}}] = MatmulPath::Widen;
  plan[{ZRT_DTYPE_BF16, MatmulShape{1, 64, 64, 64, false, false, false}}] = MatmulPath::Native;
  const std::string text = matmulPlanText(plan);
  EXPECT_EQ(parseMatmulPlan(text, "test"), plan);
  EXPECT_NE(text.find("bf16 1 384 1536 2048 1 0 0 widen\n"), std::string::npos) << text;
}

TEST(MatmulPlanDeathTest, BadTextAndRowsAreRefused) {
  EXPECT_DEATH(parseMatmulPlan("f32 1 2 3 4 0 0 0 widen\n", "zrt_plan_matmuls"),
               "zrt_plan_matmuls: matmul plan line 1 is not");
  EXPECT_DEATH(parseMatmulPlan("f32 1 2 3\n", "zrt_plan_matmuls"), "matmul plan line 1");
  EXPECT_DEATH(parseMatmulPlan("f16 1 2 3 4 0 0 0 sgemm\n", "zrt_plan_matmuls"), "matmul plan line 1");
  const std::vector<int64_t> badKind{7, 0, 1, 1, 1, 1, 0, 0, 0}, badChunk{1, 0, 10, 5, 5, 0, 11, 0, 0};
  EXPECT_DEATH(productsOfTable(badKind.data(), 1, "zrt_plan_matmuls"), "row 0: kind 7");
  EXPECT_DEATH(productsOfTable(badChunk.data(), 1, "zrt_plan_matmuls"), "row 0: 10 rows in chunks of 11");
}
