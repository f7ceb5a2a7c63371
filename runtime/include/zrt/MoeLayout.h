// The dispatched layout of a Mixture-of-Experts layer, shared by the compiler (the ops' shapes,
// the matmul plan: dialects/zc, passes/LowerMoe.cpp) and the runtime (cpu/Moe.h).
//
// A routing's tokens x top_k choices go to rows grouped by expert. Dropless, every choice gets a
// row: tokens x top_k rows. With a capacity factor f (GShard, DeepSpeed's top-k gating) expert e
// keeps at most C = ceil(f x tokens x top_k / experts) rows, taken in priority order (every token's
// first choice in token order, then every second choice, ...); a choice past its expert's C is
// dropped, and the dispatched tensor has min(tokens x top_k, experts x C) rows, the first ones
// filled. Either way the size is known when compiling: the memory plan is exact.
#ifndef ZRT_MOELAYOUT_H
#define ZRT_MOELAYOUT_H

#include <cmath>
#include <cstdint>

namespace zrt {

/// Rows one expert keeps at `capacityFactor` (> 0), at least 1; 0 (dropless) for a factor of 0.
inline int64_t moeCapacity(int64_t tokens, int64_t experts, int64_t topK, double capacityFactor) {
  if (capacityFactor <= 0)
    return 0;
  const double even = double(tokens) * double(topK) / double(experts > 0 ? experts : 1);
  const int64_t c = static_cast<int64_t>(std::ceil(capacityFactor * even - 1e-9));
  return c > 0 ? c : 1;
}

/// The dispatched tensor's rows: tokens x top_k dropless, else at most experts x capacity.
inline int64_t moeDispatchedRows(int64_t tokens, int64_t experts, int64_t topK, double capacityFactor) {
  const int64_t all = tokens * topK, capacity = moeCapacity(tokens, experts, topK, capacityFactor);
  return capacity > 0 && experts * capacity < all ? experts * capacity : all;
}

/// The rows each expert's product of a grouped product is planned at: the dispatched rows spread
/// evenly (at least 1). How many an expert gets is known only at run time; the runtime runs every
/// expert's product on the path the matmul plan chose for this count.
inline int64_t plannedExpertRows(int64_t rows, int64_t experts) {
  const int64_t even = experts > 0 ? (rows + experts - 1) / experts : rows;
  return even > 0 ? even : 1;
}

/// Expert parallelism: the rows one rank of `ranks` receives for its experts / ranks experts,
/// the bound its received tensors are planned at. Each of the ranks sends it at most its
/// `dispatched` rows, and at most `tokens` (dropless: a token chooses an expert once) or the
/// capacity per expert; with a declared bound (`maxPerExpert` > 0, --moe-max-tokens-per-expert)
/// at most that many per expert, checked when the counts are exchanged.
inline int64_t moeReceivedRows(int64_t dispatched, int64_t tokens, int64_t experts, int64_t topK,
                               double capacityFactor, int64_t ranks, int64_t maxPerExpert) {
  const int64_t local = experts / (ranks > 0 ? ranks : 1), capacity = moeCapacity(tokens, experts, topK, capacityFactor);
  const int64_t perSource = capacity > 0 && capacity < tokens ? capacity : tokens;
  int64_t rows = ranks * dispatched;
  if (local * ranks * perSource < rows)
    rows = local * ranks * perSource;
  if (maxPerExpert > 0 && local * maxPerExpert < rows)
    rows = local * maxPerExpert;
  return rows > 0 ? rows : 1;
}

} // namespace zrt

#endif // ZRT_MOELAYOUT_H
