// Optimizer updates on fp32 master weights, matching PyTorch's AdamW and SGD(momentum)
// step for step; the gradient may be bf16 and a bf16 copy of the weights may be written out.
#ifndef ZRT_CPU_OPTIMIZER_H
#define ZRT_CPU_OPTIMIZER_H

#include <cmath>
#include <cstdint>

#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {

struct AdamWConfig {
  double lr, beta1, beta2, eps, weightDecay;
  int64_t step; // 1 for the first update
};

/// torch.optim.AdamW: p *= 1 - lr*wd; m, v moments; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
template <class G>
void adamw(float *param, const G *grad, float *m, float *v, bf16 *paramBf16, int64_t n,
           const AdamWConfig &cfg) {
  const math::AdamWStep s = math::adamwStep(cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay, cfg.step);
  parallelFor(n, kElementGrain, [&](int64_t i) {
    float p = math::adamwElement(param[i], static_cast<float>(grad[i]), m[i], v[i], s);
    param[i] = p;
    if (paramBf16)
      paramBf16[i] = bf16(p);
  });
}

/// torch.optim.SGD(momentum, weight_decay, dampening=0, nesterov=False):
/// g += wd * p; buf = momentum * buf + g (buf starts at 0); p -= lr * buf.
template <class G>
void sgdMomentum(float *param, const G *grad, float *buf, bf16 *paramBf16, int64_t n, double lr,
                 double momentum, double weightDecay) {
  const float lrF = static_cast<float>(lr), mu = static_cast<float>(momentum);
  const float wd = static_cast<float>(weightDecay);
  parallelFor(n, kElementGrain, [&](int64_t i) {
    param[i] = math::sgdElement(param[i], static_cast<float>(grad[i]), buf[i], lrF, mu, wd);
    if (paramBf16)
      paramBf16[i] = bf16(param[i]);
  });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_OPTIMIZER_H
