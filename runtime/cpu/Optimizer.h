// Optimizer updates on fp32 master weights, matching PyTorch's AdamW and SGD(momentum)
// step for step; the gradient may be bf16 and a bf16 copy of the weights may be written out.
#ifndef ZRT_CPU_OPTIMIZER_H
#define ZRT_CPU_OPTIMIZER_H

#include <cmath>
#include <algorithm>
#include <cstdint>

#include "cpu/Elementwise.h"
#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

struct AdamWConfig {
  double lr, beta1, beta2, eps, weightDecay;
  int64_t step; // 1 for the first update
};

/// torch.optim.AdamW: p *= 1 - lr*wd; m, v moments; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
/// `gradScale` multiplies each gradient element as it is read (the clip coefficient; 1: none).
template <class G>
void adamw(float *param, const G *grad, float *m, float *v, bf16 *paramBf16, int64_t n,
           const AdamWConfig &cfg, float gradScale = 1.0f) {
  const math::AdamWStep s = math::adamwStep(cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay, cfg.step);
  // Element i reads and writes only index i: `omp simd` in each chunk (Elementwise.h).
  forEachChunk(n, [&](int64_t first, int64_t end) {
#pragma omp simd
    for (int64_t i = first; i < end; ++i)
      param[i] = math::adamwElement(param[i], static_cast<float>(grad[i]) * gradScale, m[i], v[i], s);
    if (paramBf16)
      for (int64_t i = first; i < end; ++i)
        paramBf16[i] = bf16(param[i]);
  });
}

/// torch.optim.SGD(momentum, weight_decay, dampening=0, nesterov=False):
/// g += wd * p; buf = momentum * buf + g (buf starts at 0); p -= lr * buf.
template <class G>
void sgdMomentum(float *param, const G *grad, float *buf, bf16 *paramBf16, int64_t n, double lr,
                 double momentum, double weightDecay, float gradScale = 1.0f) {
  const float lrF = static_cast<float>(lr), mu = static_cast<float>(momentum);
  const float wd = static_cast<float>(weightDecay);
  forEachChunk(n, [&](int64_t first, int64_t end) {
#pragma omp simd
    for (int64_t i = first; i < end; ++i)
      param[i] = math::sgdElement(param[i], static_cast<float>(grad[i]) * gradScale, buf[i], lrF, mu, wd);
    if (paramBf16)
      for (int64_t i = first; i < end; ++i)
        paramBf16[i] = bf16(param[i]);
  });
}

/// The sum of squares of `n` elements, accumulated in f64 in a fixed order (the same on every
/// run and thread count: blocks of kElementGrain, summed in order).
template <class G>
double sumOfSquares(const G *x, int64_t n) {
  const int64_t blocks = (n + kElementGrain - 1) / kElementGrain;
  Scratch<double> partial(blocks); // zeroed
  parallelFor(blocks, 1, [&](int64_t b) {
    // Eight sums, element i into sum i % 8, added in a fixed order at the end: one chain waited
    // on the f64 add's latency (0.8 G elements/s, 13 ms of a 450 ms bf16 step); the order is
    // the same on every ISA level and thread count, so is the norm.
    constexpr int kLanes = 8;
    double sum[kLanes] = {};
    const int64_t first = b * kElementGrain, end = std::min(n, first + kElementGrain);
    int64_t i = first;
    for (; i + kLanes <= end; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const double v = static_cast<float>(x[i + l]);
        sum[l] += v * v;
      }
    for (; i < end; ++i) {
      const double v = static_cast<float>(x[i]);
      sum[(i - first) % kLanes] += v * v;
    }
    double blockSum = 0;
    for (double s : sum)
      blockSum += s;
    partial[b] = blockSum;
  });
  double total = 0;
  for (int64_t b = 0; b < blocks; ++b)
    total += partial[b];
  return total;
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_OPTIMIZER_H
