// The matmul plan (cpu/MatmulPlan.h): the table's rows stand for every product a program runs
// (a chunked language-model head's products and a grouped product's experts included), a plan
// survives its text form (a checkpoint keeps it), and bad text is refused; a grouped product's
// experts, whose row counts change every step, run on one oneDNN primitive each.
#include <cblas.h>
#include <gtest/gtest.h>

#include <vector>

#include "KernelTestUtils.h"
#include "cpu/MatmulCrossEntropy.h"
#include "cpu/MatmulPlan.h"
#include "cpu/Moe.h"
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

// The rows zcc writes for a grouped product (passes/LowerMoe.cpp: each expert's product at the
// balanced row count, its m or, for the weight gradient, its k varying) cover every product the
// kernels run whatever the routing gives each expert.
TEST(MatmulPlan, GroupedRowsCoverEveryExpertsProduct) {
  constexpr int64_t E = 4, rows = 24, K = 8, N = 12, even = rows / E;
  for (bool transposed : {false, true}) {
    std::vector<int64_t> table;
    table.insert(table.end(), {ZRT_MATMUL_GROUPED_M, ZRT_DTYPE_F32, 1, even, N, K, 0, transposed, 0});
    table.insert(table.end(), {ZRT_MATMUL_GROUPED_M, ZRT_DTYPE_F32, 1, even, K, N, 0, !transposed, 0});
    if (transposed)
      table.insert(table.end(), {ZRT_MATMUL_GROUPED_K, ZRT_DTYPE_F32, 1, N, K, even, 1, 0, 0});
    else
      table.insert(table.end(), {ZRT_MATMUL_GROUPED_K, ZRT_DTYPE_F32, 1, K, N, even, 1, 0, 0});
    const MatmulPlan plan = ruleOf(table);
    for (const auto &[key, path] : plan)
      EXPECT_NE(key.shape.varies, MatmulVarying::None) << key.describe();
    installMatmulPlan(plan);
    const int64_t before = unplannedMatmulCalls();
    const std::vector<int32_t> offsets{0, 1, 1, 15, 24}; // skewed, one expert without rows
    auto xs = convert<float>(randomVec(rows * K, 1)), w = convert<float>(randomVec(E * K * N, 2));
    auto dout = convert<float>(randomVec(rows * N, 3));
    std::vector<float> out(rows * N), dxs(rows * K), dw(E * K * N);
    groupedMatmul(xs.data(), w.data(), offsets.data(), E, rows, K, N, out.data(), transposed);
    groupedMatmulGrad(dout.data(), xs.data(), w.data(), offsets.data(), E, rows, K, N, dxs.data(), dw.data(),
                      transposed);
    EXPECT_EQ(unplannedMatmulCalls(), before) << (transposed ? "transposed" : "plain");
  }
  installMatmulPlan({});
}

// oneDNN JITs a kernel for each primitive: a product whose m (or k) varies makes one for every
// value, not one per row count met (which cost the 8-expert MoE benchmark a third of its step),
// and computes what the GEMM does at each.
TEST(MatmulPlan, AVaryingProductRunsOnOnePrimitive) {
  for (MatmulVarying varies : {MatmulVarying::M, MatmulVarying::K}) {
    const int64_t created = dnnlPrimitivesCreated();
    for (int64_t count : {int64_t(3), int64_t(17), int64_t(64), int64_t(201)}) {
      const MatmulShape shape = varies == MatmulVarying::M ? MatmulShape{1, count, 24, 40, false, true, false, varies}
                                                           : MatmulShape{1, 24, 40, count, true, false, false, varies};
      auto a = convert<float>(randomVec(shape.m * shape.k, 4)), b = convert<float>(randomVec(shape.k * shape.n, 5));
      std::vector<float> got(shape.m * shape.n), want(shape.m * shape.n);
      ASSERT_TRUE(pathRuns(MatmulPath::Primitive, ZRT_DTYPE_F32, shape));
      matmulOn(MatmulPath::Primitive, a.data(), b.data(), got.data(), shape);
      MatmulShape fixed = shape;
      fixed.varies = MatmulVarying::None;
      matmulOn(MatmulPath::Sgemm, a.data(), b.data(), want.data(), fixed);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i]))) << "count " << count << " at " << i;
    }
    EXPECT_EQ(dnnlPrimitivesCreated() - created, 1) << (varies == MatmulVarying::M ? "m varies" : "k varies");
  }
  if (!nativeBf16MatmulAvailable())
    return;
  const int64_t created = dnnlPrimitivesCreated();
  for (int64_t count : {int64_t(5), int64_t(33), int64_t(130)}) {
    const MatmulShape shape{1, count, 32, 48, false, false, false, MatmulVarying::M};
    auto a = convert<bf16>(randomVec(shape.m * shape.k, 6)), b = convert<bf16>(randomVec(shape.k * shape.n, 7));
    std::vector<bf16> got(shape.m * shape.n), want(shape.m * shape.n);
    matmulOn(MatmulPath::Native, a.data(), b.data(), got.data(), shape);
    matmulOn(MatmulPath::Widen, a.data(), b.data(), want.data(), shape);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(float(got[i]), float(want[i]), 2e-2f * (1.0f + std::abs(float(want[i])))) << "count " << count;
  }
  EXPECT_EQ(dnnlPrimitivesCreated() - created, 1) << "bf16, m varies";
}

// The blas path's threads are the OpenMP pool's (OpenBLAS's OpenMP build, runtime/CMakeLists.txt):
// the pthread build's pool of its own spun against the OpenMP kernels after every call (an
// imported Mixtral step 790-820 ms against 665-695 on a 2-core Xeon).
TEST(MatmulPaths, OpenBlasThreadsAreTheOpenMpPools) {
  EXPECT_EQ(openblas_get_parallel(), 2) << "0: sequential, 1: pthreads, 2: OpenMP";
}

TEST(MatmulPlan, TextRoundTrips) {
  MatmulPlan plan;
  plan[{ZRT_DTYPE_F32, MatmulShape{1, 2048, 1152, 384, false, true, false}}] = MatmulPath::Blas;
  plan[{ZRT_DTYPE_F32, MatmulShape{4, 8, 16, 32, true, false, true}}] = MatmulPath::Primitive;
  plan[{ZRT_DTYPE_BF16, MatmulShape{1, 384, 1536, 2048, true, false, false}}] = MatmulPath::Widen;
  plan[{ZRT_DTYPE_BF16, MatmulShape{1, 64, 64, 64, false, false, false}}] = MatmulPath::Native;
  // A grouped product's: apart from the fixed product of the same sizes.
  plan[{ZRT_DTYPE_F32, MatmulShape{1, 2048, 1152, 384, false, true, false, MatmulVarying::M}}] = MatmulPath::Sgemm;
  plan[{ZRT_DTYPE_BF16, MatmulShape{1, 384, 1536, 256, true, false, false, MatmulVarying::K}}] = MatmulPath::Native;
  const std::string text = matmulPlanText(plan);
  EXPECT_EQ(parseMatmulPlan(text, "test"), plan);
  EXPECT_EQ(plan.size(), 6u);
  EXPECT_NE(text.find("bf16 1 384 1536 2048 1 0 0 widen\n"), std::string::npos) << text;
  EXPECT_NE(text.find("f32:m 1 2048 1152 384 0 1 0 sgemm\n"), std::string::npos) << text;
  EXPECT_NE(text.find("bf16:k 1 384 1536 256 1 0 0 native\n"), std::string::npos) << text;
}

TEST(MatmulPlanDeathTest, BadTextAndRowsAreRefused) {
  EXPECT_DEATH(parseMatmulPlan("f32 1 2 3 4 0 0 0 widen\n", "zrt_plan_matmuls"),
               "zrt_plan_matmuls: matmul plan line 1 is not");
  EXPECT_DEATH(parseMatmulPlan("f32 1 2 3\n", "zrt_plan_matmuls"), "matmul plan line 1");
  EXPECT_DEATH(parseMatmulPlan("f16 1 2 3 4 0 0 0 sgemm\n", "zrt_plan_matmuls"), "matmul plan line 1");
  EXPECT_DEATH(parseMatmulPlan("f32:n 1 2 3 4 0 0 0 sgemm\n", "zrt_plan_matmuls"), "matmul plan line 1");
  const std::vector<int64_t> badKind{7, 0, 1, 1, 1, 1, 0, 0, 0}, badChunk{1, 0, 10, 5, 5, 0, 11, 0, 0};
  EXPECT_DEATH(productsOfTable(badKind.data(), 1, "zrt_plan_matmuls"), "row 0: kind 7");
  EXPECT_DEATH(productsOfTable(badChunk.data(), 1, "zrt_plan_matmuls"), "row 0: 10 rows in chunks of 11");
}
