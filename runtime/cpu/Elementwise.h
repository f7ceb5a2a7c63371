// Elementwise CPU kernels, forward and backward, for f32, bf16 (f32 math) and f64 (tests).
#ifndef ZRT_CPU_ELEMENTWISE_H
#define ZRT_CPU_ELEMENTWISE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Elementwise loops run in chunks: threads split the chunks, and each chunk's
/// plain inner loop is what the compiler vectorizes.
constexpr int64_t kChunk = 4096;

template <class T, class Op>
void binary(const T *a, const T *b, T *out, int64_t n, Op op) {
  int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, kElementGrain / kChunk, [&](int64_t c) {
    int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i)
      out[i] = T(op(static_cast<Acc<T>>(a[i]), static_cast<Acc<T>>(b[i])));
  });
}

template <class T, class Op>
void unary(const T *x, T *out, int64_t n, Op op) {
  int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, kElementGrain / kChunk, [&](int64_t c) {
    int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i)
      out[i] = T(op(static_cast<Acc<T>>(x[i])));
  });
}

template <class T> void add(const T *a, const T *b, T *out, int64_t n) {
  binary(a, b, out, n, [](auto x, auto y) { return x + y; });
}
template <class T> void sub(const T *a, const T *b, T *out, int64_t n) {
  binary(a, b, out, n, [](auto x, auto y) { return x - y; });
}
template <class T> void mul(const T *a, const T *b, T *out, int64_t n) {
  binary(a, b, out, n, [](auto x, auto y) { return x * y; });
}
template <class T> void scale(const T *x, T *out, int64_t n, double factor) {
  Acc<T> f = static_cast<Acc<T>>(factor);
  unary(x, out, n, [f](auto v) { return v * f; });
}
template <class Src, class Dst> void cast(const Src *src, Dst *dst, int64_t n) {
  parallelFor(n, kElementGrain, [&](int64_t i) { dst[i] = Dst(static_cast<float>(src[i])); });
}

/// out[r, c] = x[r, c] + bias[c].
template <class T>
void biasAdd(const T *x, const T *bias, T *out, int64_t rows, int64_t cols) {
  parallelFor(rows, kElementGrain / (cols + 1) + 1, [&](int64_t r) {
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = T(static_cast<Acc<T>>(x[r * cols + c]) + static_cast<Acc<T>>(bias[c]));
  });
}

template <class T> void relu(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return v > 0 ? v : decltype(v)(0); });
}
template <class T> void reluGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return v > 0 ? g : decltype(g)(0); });
}

/// exp for f32 in plain arithmetic (Cephes' range reduction and polynomial,
/// about 1 ulp), so elementwise loops vectorize; glibc's expf is a call.
inline float vexp(float x) {
  x = std::min(88.3762626647949f, std::max(-87.3365447504019f, x));
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
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
inline double vexp(double x) { return std::exp(x); }

/// tanh(u) = 1 - 2 / (exp(2u) + 1): exact limits at +-inf, absolute error ~1e-7.
template <class A> inline A vtanh(A u) { return A(1) - A(2) / (vexp(A(2) * u) + A(1)); }
inline double vtanh(double u) { return std::tanh(u); }

/// GELU, tanh form (GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class A> inline A geluValue(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  return A(0.5) * x * (A(1) + vtanh(s * (x + c * x * x * x)));
}
template <class A> inline A geluDerivative(A x) {
  const A s = A(0.7978845608028654), c = A(0.044715);
  A t = vtanh(s * (x + c * x * x * x));
  return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * s * (A(1) + A(3) * c * x * x);
}
template <class T> void gelu(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return geluValue(v); });
}
template <class T> void geluGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return g * geluDerivative(v); });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ELEMENTWISE_H
