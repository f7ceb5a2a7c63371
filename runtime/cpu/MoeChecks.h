// The checks and the routing description the CPU backend's MoE entry points share (MoeAbi.cpp,
// MoeLossAbi.cpp): a routing's integers checked before any kernel reads through them.
#ifndef ZRT_CPU_MOECHECKS_H
#define ZRT_CPU_MOECHECKS_H

#include <cstdint>

#include "core/Error.h"
#include "core/MoeRouteChecks.h"
#include "cpu/Moe.h"

namespace zrt::cpu {

inline MoeRouting routingOf(int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid, int32_t normalize,
                            double scale, double capacityFactor = 0) {
  MoeRouting r;
  r.capacityFactor = capacityFactor;
  r.tokens = tokens;
  r.experts = experts;
  r.topK = topK;
  r.score = sigmoid ? MoeScore::Sigmoid : MoeScore::Softmax;
  r.renormalize = normalize != 0;
  r.scale = scale;
  return r;
}

/// Each choice names an expert in [0, experts).
inline void checkExperts(const char *call, const void *expert, int64_t choices, int64_t experts) {
  const auto *chosen = static_cast<const int32_t *>(expert);
  for (int64_t i = 0; i < choices; ++i)
    if (chosen[i] < 0 || chosen[i] >= experts)
      fatal(call, "choice %lld names expert %d of %lld", static_cast<long long>(i), chosen[i],
            static_cast<long long>(experts));
}

} // namespace zrt::cpu

#endif // ZRT_CPU_MOECHECKS_H
