// See HostOptimizer.h. The same element updates as the GPU kernels and the CPU backend
// (zrt/KernelMath.h's adamwElement and sgdElement), vectorized by the compiler over OpenMP's
// static chunks: AdamW reads and writes 16 bytes of state per element and is bound by host memory
// bandwidth, as DeepSpeed's CPU Adam is.
#include "cuda/HostOptimizer.h"

#include "cpu/Optimizer.h"
#include "zrt/zrt.h"

namespace zrt::cuda {

namespace {

template <class G>
void run(const HostUpdateChunk &c) {
  const G *grad = static_cast<const G *>(c.grad);
  bf16 *low = static_cast<bf16 *>(c.paramBf16);
  const float scale = c.gradScale ? *c.gradScale : 1.0f;
  if (c.adamw)
    cpu::adamw(c.param, grad, c.m, c.v, low, c.n, {c.lr, c.beta1, c.beta2, c.eps, c.weightDecay, c.step}, scale);
  else
    cpu::sgdMomentum(c.param, grad, c.m, low, c.n, c.lr, c.momentum, c.weightDecay, scale);
}

} // namespace

void runHostUpdate(const HostUpdateChunk &c) {
  if (c.gradDtype == ZRT_DTYPE_BF16)
    run<bf16>(c);
  else
    run<float>(c);
}

} // namespace zrt::cuda
