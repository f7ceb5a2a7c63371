// Optimizer updates on fp32 master weights, matching PyTorch's AdamW and SGD(momentum)
// step for step; the gradient may be bf16 and a bf16 copy of the weights may be written out.
#ifndef ZRT_CPU_OPTIMIZER_H
#define ZRT_CPU_OPTIMIZER_H

#include <cmath>
#include <cstdint>

#include "cpu/Parallel.h"

namespace zrt::cpu {

struct AdamWConfig {
  double lr, beta1, beta2, eps, weightDecay;
  int64_t step; // 1 for the first update
};

/// torch.optim.AdamW: p *= 1 - lr*wd; m, v moments; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
template <class G>
void adamw(float *param, const G *grad, float *m, float *v, bf16 *paramBf16, int64_t n,
           const AdamWConfig &cfg) {
  const double bias1 = 1.0 - std::pow(cfg.beta1, static_cast<double>(cfg.step));
  const double bias2 = 1.0 - std::pow(cfg.beta2, static_cast<double>(cfg.step));
  const float decay = static_cast<float>(1.0 - cfg.lr * cfg.weightDecay);
  const float stepSize = static_cast<float>(cfg.lr / bias1);
  const float invSqrtBias2 = static_cast<float>(1.0 / std::sqrt(bias2));
  const float b1 = static_cast<float>(cfg.beta1), b2 = static_cast<float>(cfg.beta2);
  const float eps = static_cast<float>(cfg.eps);
  parallelFor(n, kElementGrain, [&](int64_t i) {
    float g = static_cast<float>(grad[i]);
    float p = param[i] * decay;
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    v[i] = b2 * v[i] + (1.0f - b2) * g * g;
    p -= stepSize * m[i] / (std::sqrt(v[i]) * invSqrtBias2 + eps);
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
    float g = static_cast<float>(grad[i]) + wd * param[i];
    buf[i] = mu * buf[i] + g;
    param[i] -= lrF * buf[i];
    if (paramBf16)
      paramBf16[i] = bf16(param[i]);
  });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_OPTIMIZER_H
