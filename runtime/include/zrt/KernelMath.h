// The per-element math of the kernels, shared by the CPU and CUDA backends (`ZRT_HD`:
// __host__ __device__ under nvcc): the CPU kernels loop over these, the CUDA kernels
// call them per thread, so the CPU test suite checks the math both backends run.
#ifndef ZRT_KERNELMATH_H
#define ZRT_KERNELMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "zrt/bf16.h"

namespace zrt::math {

/// exp for f32 in plain arithmetic (Cephes' range reduction and polynomial, about
/// 1 ulp), so CPU loops vectorize (glibc's expf is a call) and both backends agree.
ZRT_HD float vexp(float x) {
  x = fminf(88.3762626647949f, fmaxf(-87.3365447504019f, x));
  float n = floorf(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}
ZRT_HD double vexp(double x) { return ::exp(x); }

/// tanh(u) = 1 - 2 / (exp(2u) + 1): exact limits at +-inf, absolute error ~1e-7.
ZRT_HD float vtanh(float u) { return 1.0f - 2.0f / (vexp(2.0f * u) + 1.0f); }
ZRT_HD double vtanh(double u) { return ::tanh(u); }

/// GELU, tanh form (GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class A> ZRT_HD A geluValue(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  return A(0.5) * x * (A(1) + vtanh(s * (x + c * x * x * x)));
}
template <class A> ZRT_HD A geluDerivative(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  A t = vtanh(s * (x + c * x * x * x));
  return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * s * (A(1) + A(3) * c * x * x);
}

template <class A> ZRT_HD A reluValue(A x) { return x > A(0) ? x : A(0); }
template <class A> ZRT_HD A reluGradValue(A dy, A x) { return x > A(0) ? dy : A(0); }

/// One AdamW step's constants (torch.optim.AdamW), computed once per tensor on the host.
struct AdamWStep {
  float decay, stepSize, invSqrtBias2, beta1, beta2, eps;
};
inline AdamWStep adamwStep(double lr, double beta1, double beta2, double eps, double weightDecay, int64_t step) {
  const double bias1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  return {static_cast<float>(1.0 - lr * weightDecay), static_cast<float>(lr / bias1),
          static_cast<float>(1.0 / std::sqrt(bias2)), static_cast<float>(beta1), static_cast<float>(beta2),
          static_cast<float>(eps)};
}
/// p *= 1 - lr*wd; m, v moments; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
ZRT_HD float adamwElement(float p, float g, float &m, float &v, const AdamWStep &s) {
  p *= s.decay;
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  return p - s.stepSize * m / (sqrtf(v) * s.invSqrtBias2 + s.eps);
}

/// torch.optim.SGD(momentum, weight_decay, dampening=0, nesterov=False).
ZRT_HD float sgdElement(float p, float g, float &buf, float lr, float momentum, float weightDecay) {
  g += weightDecay * p;
  buf = momentum * buf + g;
  return p - lr * buf;
}

} // namespace zrt::math

#endif // ZRT_KERNELMATH_H
