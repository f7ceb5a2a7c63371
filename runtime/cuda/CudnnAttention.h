// Causal attention through cuDNN's fused flash attention (cudnn-frontend's SDPA graphs, forward
// and backward), as llm.c, PyTorch and Transformer Engine run it on Hopper. CudnnAttention.cpp
// builds each op's graphs once (its first, eager run: before a step graph is captured), caches
// them by SdpaProblem::key(), and loads libcudnn at run time, so train.bin starts without it and
// says why it runs zcc's kernels instead. test/CudaOnCpu/CpuSdpa.cpp stands in for this file there.
#ifndef ZRT_CUDA_CUDNN_ATTENTION_H
#define ZRT_CUDA_CUDNN_ATTENTION_H

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/SdpaProblem.h"

namespace zrt::cuda {

/// This device's compute capability and the loadable cuDNN's version (0: none), found once.
CudnnSupport cudnnSupport();

/// out = attention(q, k, v); `stats` (p.statsCount() floats) receives each row's log-sum-exp,
/// what the backward reads.
void cudnnAttentionForward(const SdpaProblem &p, const void *q, const void *k, const void *v, void *out,
                           float *stats, cudaStream_t s);
/// dq, dk, dv from the forward's inputs, its output and statistics, and the output's gradient.
void cudnnAttentionBackward(const SdpaProblem &p, const void *q, const void *k, const void *v, const void *out,
                            const void *dout, const float *stats, void *dq, void *dk, void *dv, cudaStream_t s);

} // namespace zrt::cuda

#endif // ZRT_CUDA_CUDNN_ATTENTION_H
