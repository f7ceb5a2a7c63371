// The product that stands for a grouped product's per-expert products in the matmul plan
// (zc.grouped_matmul, zrt_grouped_matmul): how many rows an expert gets is known only at run
// time, so the compiler plans each of its products at the balanced count, ceil(rows / experts),
// and the runtime runs every expert's product on the path planned for that one. Shared by the
// compiler's plan table (passes/LowerMoe.cpp) and the runtime (cpu/Moe.h).
#ifndef ZRT_GROUPEDMATMUL_H
#define ZRT_GROUPEDMATMUL_H

#include <cstdint>

namespace zrt {

/// The rows each expert's product is planned at: the dispatched rows spread evenly (at least 1).
inline int64_t plannedExpertRows(int64_t rows, int64_t experts) {
  const int64_t even = experts > 0 ? (rows + experts - 1) / experts : rows;
  return even > 0 ? even : 1;
}

} // namespace zrt

#endif // ZRT_GROUPEDMATMUL_H
