// zrt_moe_take_stats and zrt_moe_take_load on the CUDA backend: it has no Mixture-of-Experts
// kernels yet (zcc refuses a MoE model for --target cuda, issue 58), so no routing ever ran: all zero.
#include "zrt/zrt.h"

#include <cstring>

extern "C" void zrt_moe_take_stats(void *out) { std::memset(out, 0, 6 * sizeof(int64_t)); }

extern "C" void zrt_moe_take_load(const void *, void *out, int64_t experts) {
  std::memset(out, 0, static_cast<size_t>(experts) * sizeof(float));
}
