// The path each product of a program runs on (cpu/Matmul.h's MatmulPath), chosen once before the
// first step by zrt_plan_matmuls (cpu/MatmulTuner.cpp) and read by every zrt_matmul after. A
// plan is fixed for a run: two paths of one shape round differently, so a checkpoint keeps the
// plan's text and a resumed run installs it again.
#ifndef ZRT_CPU_MATMULPLAN_H
#define ZRT_CPU_MATMULPLAN_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cpu/Matmul.h"

namespace zrt::cpu {

/// One product: its dtype (zrt_dtype) and shape, as matmul() is called with them.
struct MatmulKey {
  int32_t dtype = ZRT_DTYPE_F32;
  MatmulShape shape{};
  bool operator<(const MatmulKey &o) const;
  bool operator==(const MatmulKey &o) const { return !(*this < o) && !(o < *this); }
  /// "bf16 1x2048x1152x384 nt" (batch x m x n x k, then trans_a/trans_b as n|t, "shared" if so,
  /// ", m varies" or ", k varies" if so).
  std::string describe() const;
};

using MatmulPlan = std::map<MatmulKey, MatmulPath>;

/// The products of zrt_plan_matmuls' table (`rows` rows of ZRT_MATMUL_ROW int64s), each once, in
/// key order; a cross-entropy row stands for its chunks' products. A malformed row is a fatal
/// error naming `call`.
std::vector<MatmulKey> productsOfTable(const int64_t *table, int64_t rows, const char *call);

/// Installs the plan matmul() reads from now on (before the first step: it is not locked).
void installMatmulPlan(MatmulPlan plan);
const MatmulPlan &installedMatmulPlan();
/// The installed plan's path of this product; none where no plan is installed or it does not
/// cover the product (a product outside an installed plan is said once on stderr: the table
/// the compiler emitted missed it).
std::optional<MatmulPath> plannedMatmulPath(int32_t dtype, const MatmulShape &shape);

/// How many products ran outside an installed plan (none should: the tests check it).
int64_t unplannedMatmulCalls();

/// A plan as text, a product a line: "<dtype> <batch> <m> <n> <k> <ta> <tb> <shared> <path>"; the
/// dtype "f32:m" (or ":k", and bf16's) for a product whose m (k) varies.
std::string matmulPlanText(const MatmulPlan &plan);
/// The plan `text` holds; a malformed line is a fatal error naming `call`.
MatmulPlan parseMatmulPlan(const std::string &text, const char *call);

} // namespace zrt::cpu

#endif // ZRT_CPU_MATMULPLAN_H
