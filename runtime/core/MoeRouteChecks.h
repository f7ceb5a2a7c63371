// A routing's sizes and options checked on the host before any kernel runs, the same on every
// backend (cpu/MoeAbi.cpp, cuda/MoeAbi.cu): what a routing's kernels could not report themselves.
#ifndef ZRT_CORE_MOEROUTECHECKS_H
#define ZRT_CORE_MOEROUTECHECKS_H

#include <cstdint>

#include "core/Error.h"

namespace zrt {

inline void checkRouting(const char *call, int64_t tokens, int64_t experts, int64_t topK) {
  if (tokens < 0 || experts < 1 || topK < 1 || topK > experts)
    fatal(call, "%lld tokens choosing %lld of %lld experts: need tokens >= 0 and 1 <= top_k <= experts",
          static_cast<long long>(tokens), static_cast<long long>(topK), static_cast<long long>(experts));
}

/// A dispatched tensor holds at most a row per choice.
inline void checkDispatchedRows(const char *call, int64_t tokens, int64_t topK, int64_t rows) {
  if (tokens < 0 || topK < 1 || rows < 0 || rows > tokens * topK)
    fatal(call, "%lld dispatched rows for %lld tokens x %lld choices", static_cast<long long>(rows),
          static_cast<long long>(tokens), static_cast<long long>(topK));
}

/// zrt_moe_route's options: the capacity factor (0: dropless) and group-limited routing (whole
/// groups of at least two experts, enough kept for the k choices).
inline void checkRouteOptions(const char *call, int64_t experts, int64_t topK, double capacityFactor, int64_t groups,
                              int64_t topkGroups) {
  if (!(capacityFactor >= 0))
    fatal(call, "capacity factor %g: 0 (dropless) or positive", capacityFactor);
  if (groups < 1 || experts % groups != 0 || (groups > 1 && experts / groups < 2) || topkGroups < 1 ||
      topkGroups > groups || (groups > 1 && topK > topkGroups * (experts / groups)))
    fatal(call, "%lld experts in %lld groups, choosing %lld among the best %lld groups' experts",
          static_cast<long long>(experts), static_cast<long long>(groups), static_cast<long long>(topK),
          static_cast<long long>(topkGroups));
}

} // namespace zrt

#endif // ZRT_CORE_MOEROUTECHECKS_H
