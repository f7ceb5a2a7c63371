// Row-wise softmax and layernorm over the last axis, forward and backward; f32 (or f64) math.
#ifndef ZRT_CPU_NORMALIZATION_H
#define ZRT_CPU_NORMALIZATION_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// logsumexp of one row as (max, log sum exp(x - max)), kept apart so that
/// callers subtract logits from the max before adding the small log term:
/// max + log(sum) rounds away the loss when logits are large.
using math::LogSumExp;
template <class T, class A = Acc<T>> inline LogSumExp<A> rowLogSumExp(const T *row, int64_t classes) {
  return math::rowLogSumExp<A>(row, classes);
}

template <class T> void softmax(const T *x, T *y, int64_t rows, int64_t cols) {
  parallelFor(rows, 64, [&](int64_t r) { math::softmaxRow<Acc<T>>(x + r * cols, y + r * cols, cols); });
}

template <class T>
void softmaxGrad(const T *dy, const T *y, T *dx, int64_t rows, int64_t cols) {
  parallelFor(rows, 64,
              [&](int64_t r) { math::softmaxGradRow<Acc<T>>(dy + r * cols, y + r * cols, dx + r * cols, cols); });
}

template <class T>
void layernorm(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t cols,
               double eps) {
  parallelFor(rows, 64,
              [&](int64_t r) { math::layernormRow<Acc<T>>(x + r * cols, gamma, beta, y + r * cols, cols, eps); });
}

template <class T>
void layernormGrad(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, T *dbeta,
                   int64_t rows, int64_t cols, double eps) {
  using A = Acc<T>;
  std::vector<A> means(rows), rstds(rows);
  parallelFor(rows, 64, [&](int64_t r) {
    math::layernormGradRow<A>(dy + r * cols, x + r * cols, gamma, dx + r * cols, cols, eps, means[r], rstds[r]);
  });
  parallelFor(cols, 16, [&](int64_t c) {
    math::layernormParamGradColumn<A>(dy, x, means.data(), rstds.data(), rows, cols, c, dgamma, dbeta);
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_NORMALIZATION_H
