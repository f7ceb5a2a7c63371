// ZeRO-Offload's optimizer on the CUDA backend's host side: one chunk of an AdamW or SGD update
// on host memory (the host tier's fp32 master weights and moments, a pinned copy of the
// gradient), run by the CUDA host function the offload stream reaches once the gradient's copy
// landed (cuda/HostOffload.cu). Plain C++ (compiled by the host compiler, with OpenMP): the CPU
// backend's update kernels (cpu/Optimizer.h), so both backends' host updates are one code.
#ifndef ZRT_CUDA_HOSTOPTIMIZER_H
#define ZRT_CUDA_HOSTOPTIMIZER_H

#include <cstdint>

namespace zrt::cuda {

struct HostUpdateChunk {
  bool adamw = true;     // else SGD with momentum
  float *param = nullptr; // the fp32 values updated in place (master, or the fp32 shard)
  int32_t gradDtype = 0;  // zrt_dtype of `grad`
  const void *grad = nullptr;
  float *m = nullptr, *v = nullptr; // AdamW's moments; SGD: m is the momentum buffer, v null
  void *paramBf16 = nullptr;        // the bf16 copy rounded from `param`, or null
  int64_t n = 0;
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weightDecay = 0, momentum = 0;
  int64_t step = 1;
  const float *gradScale = nullptr; // the clip coefficient each gradient element is multiplied by, or null
                                    // (zrt_adamw's is on the device; a chunk's, its host copy)
};

/// Runs the update of one chunk on the calling thread's OpenMP team. No CUDA call: it runs inside
/// a CUDA host function.
void runHostUpdate(const HostUpdateChunk &c);

} // namespace zrt::cuda

#endif // ZRT_CUDA_HOSTOPTIMIZER_H
