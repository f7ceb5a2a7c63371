// Which implementation runs a causal attention op on the GPU: cuDNN's fused flash attention
// (CudnnAttention.h) wherever cuDNN takes the op, else zcc's own kernels (FlashAttention.cu on
// tensor cores, RowAttention.cu's row kernels for the rest). ZRT_ATTENTION=auto|cudnn|own chooses
// otherwise: cudnn stops with cuDNN's reason where it cannot run, own never asks cuDNN. Each op
// shape's path is printed once per node (local rank 0) with the reason, as the matmul paths are.
#ifndef ZRT_CUDA_ATTENTION_PATH_H
#define ZRT_CUDA_ATTENTION_PATH_H

#include "cuda/SdpaProblem.h"

namespace zrt::cuda {

enum class AttentionPath { Auto, Cudnn, Own };

/// ZRT_ATTENTION as read at the first attention op, unless setAttentionPath came first.
AttentionPath attentionPath();
/// What the conformance suite uses to run one case on each path.
void setAttentionPath(AttentionPath path);

/// Whether this op runs on cuDNN under the current path (fatal for `cudnn` where cuDNN refuses).
bool useCudnnAttention(const SdpaProblem &p, const AttentionVariant &variant);

} // namespace zrt::cuda

#endif // ZRT_CUDA_ATTENTION_PATH_H
