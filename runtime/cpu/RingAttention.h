// Ring attention's count of the query-key scores it computed, for zrt_get_counters: what shows
// that causal work is balanced over the context ranks.
#ifndef ZRT_CPU_RINGATTENTION_H
#define ZRT_CPU_RINGATTENTION_H

#include <cstdint>

namespace zrt::cpu {
int64_t ringAttentionScores();
} // namespace zrt::cpu

#endif // ZRT_CPU_RINGATTENTION_H
