// Causal attention on tensor cores (FlashAttention.cu): bf16, head sizes 16..128 in steps of 16,
// on sm_80 and later; the row kernels take every other case.
#ifndef ZRT_CUDA_FLASH_ATTENTION_H
#define ZRT_CUDA_FLASH_ATTENTION_H

#include <cstdint>
#include <cuda_runtime.h>

#include "zrt/AttentionVariant.h"

namespace zrt::cuda {

/// Whether flashAttention/flashAttentionGrad take this dtype and head size on this device.
bool flashAttentionApplies(int32_t dtype, int64_t channels, int64_t heads);
/// q, out: [batch, time, heads x D]; k, v: [batch, time, kvHeads x D] (bf16).
void flashAttention(const void *q, const void *k, const void *v, void *out, int64_t batch, int64_t time,
                    int64_t channels, int64_t heads, int64_t kvHeads, const AttentionVariant &variant, cudaStream_t s);
void flashAttentionGrad(const void *dout, const void *q, const void *k, const void *v, void *dq, void *dk, void *dv,
                        int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                        const AttentionVariant &variant, cudaStream_t s);

} // namespace zrt::cuda

#endif // ZRT_CUDA_FLASH_ATTENTION_H
