// Elementwise CPU kernels, forward and backward, for f32, bf16 (f32 math) and f64 (tests).
#ifndef ZRT_CPU_ELEMENTWISE_H
#define ZRT_CPU_ELEMENTWISE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Elementwise loops run in chunks: threads split the chunks, and each chunk's
/// plain inner loop is what the compiler vectorizes.
///
/// The inner loops say `omp simd`: element i reads only index i of its inputs, so they are
/// safe to vectorize when the output is one of the inputs (backward runs gelu_grad and
/// bias_add in place). Without it the compiler's overlap check sent in-place calls to its
/// scalar loop: gelu_grad in place took 31 ms for 3.1M values, 3.9 ms out of place.
constexpr int64_t kChunk = 4096;

/// Calls body(first, end) for each chunk [first, end) of [0, n), the chunks split over the
/// threads. The body's own loop over the chunk is what vectorizes: one element per call of
/// parallelFor's body the sanitizer build could not bound the arrays and ran scalar (AdamW's
/// update a tenth of a sanitized GPT step).
template <class Body>
void forEachChunk(int64_t n, Body body) {
  parallelFor((n + kChunk - 1) / kChunk, kElementGrain / kChunk,
              [&](int64_t c) { body(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

template <class T, class Op>
void binary(const T *a, const T *b, T *out, int64_t n, Op op) {
  forEachChunk(n, [&](int64_t first, int64_t end) {
#pragma omp simd
    for (int64_t i = first; i < end; ++i)
      out[i] = T(op(static_cast<Acc<T>>(a[i]), static_cast<Acc<T>>(b[i])));
  });
}

template <class T, class Op>
void unary(const T *x, T *out, int64_t n, Op op) {
  forEachChunk(n, [&](int64_t first, int64_t end) {
#pragma omp simd
    for (int64_t i = first; i < end; ++i)
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

/// Pruning (zc.apply_mask): out[i] = x[i] * mask[(i / inner) % dim], a run of `inner` values
/// per mask value (inner 1, dim n: one mask value per value).
template <class T>
void applyMask(const T *x, const float *mask, T *out, int64_t n, int64_t dim, int64_t inner) {
  parallelFor(n / inner, kElementGrain / inner + 1, [&](int64_t run) {
    const float m = mask[run % dim];
#pragma omp simd
    for (int64_t i = run * inner; i < (run + 1) * inner; ++i)
      out[i] = T(static_cast<float>(x[i]) * m);
  });
}

/// out[r, c] = x[r, c] + bias[c].
template <class T>
void biasAdd(const T *x, const T *bias, T *out, int64_t rows, int64_t cols) {
  parallelFor(rows, kElementGrain / (cols + 1) + 1, [&](int64_t r) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = T(static_cast<Acc<T>>(x[r * cols + c]) + static_cast<Acc<T>>(bias[c]));
  });
}

template <class T> void relu(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return math::reluValue(v); });
}
template <class T> void reluGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return math::reluGradValue(g, v); });
}

using math::geluDerivative;
using math::geluValue;
using math::vexp;
using math::vtanh;

template <class T> void gelu(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return geluValue(v); });
}
template <class T> void geluGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return g * geluDerivative(v); });
}
/// The exact (erf) GELU and its gradient: an erf per element, at the generic ISA level.
template <class T> void geluErf(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return math::geluErfValue(v); });
}
template <class T> void geluErfGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return g * math::geluErfDerivative(v); });
}
/// silu(gate) * up with silu's result rounded to T first, as zrt_silu then zrt_mul round it.
template <class T> void swiglu(const T *gate, const T *up, T *out, int64_t n) {
  binary(gate, up, out, n, [](auto g, auto u) { return static_cast<decltype(g)>(T(math::siluValue(g))) * u; });
}
/// dgate = silu'(gate) T(dy up), dup = dy T(silu(gate)): zrt_mul, zrt_silu_grad and zrt_mul's roundings.
template <class T> void swigluGrad(const T *dy, const T *gate, const T *up, T *dgate, T *dup, int64_t n) {
  using A = Acc<T>;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, kElementGrain / kChunk, [&](int64_t c) {
    int64_t end = std::min(n, (c + 1) * kChunk);
#pragma omp simd
    for (int64_t i = c * kChunk; i < end; ++i) {
      const A g = static_cast<A>(gate[i]), d = static_cast<A>(dy[i]);
      const A dyUp = static_cast<A>(T(d * static_cast<A>(up[i])));
      dgate[i] = T(dyUp * math::siluDerivative(g));
      dup[i] = T(d * static_cast<A>(T(math::siluValue(g))));
    }
  });
}
template <class T> void silu(const T *x, T *out, int64_t n) {
  unary(x, out, n, [](auto v) { return math::siluValue(v); });
}
template <class T> void siluGrad(const T *dy, const T *x, T *dx, int64_t n) {
  binary(dy, x, dx, n, [](auto g, auto v) { return g * math::siluDerivative(v); });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ELEMENTWISE_H
