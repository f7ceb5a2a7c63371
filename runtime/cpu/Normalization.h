// Row-wise softmax and layernorm over the last axis, forward and backward; f32 (or f64) math.
#ifndef ZRT_CPU_NORMALIZATION_H
#define ZRT_CPU_NORMALIZATION_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/Parallel.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// logsumexp of one row as (max, log sum exp(x - max)), kept apart so that
/// callers subtract logits from the max before adding the small log term:
/// max + log(sum) rounds away the loss when logits are large.
template <class A> struct LogSumExp {
  A max, logSum;
};
template <class T, class A = Acc<T>> inline LogSumExp<A> rowLogSumExp(const T *row, int64_t classes) {
  A maxValue = static_cast<A>(row[0]);
  for (int64_t c = 1; c < classes; ++c)
    maxValue = std::max(maxValue, static_cast<A>(row[c]));
  A sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(static_cast<A>(row[c]) - maxValue);
  return {maxValue, std::log(sum)};
}

/// Numerically stable: subtracts the row maximum before exponentiating.
template <class T> void softmax(const T *x, T *y, int64_t rows, int64_t cols) {
  using A = Acc<T>;
  parallelFor(rows, 64, [&](int64_t r) {
    const T *xr = x + r * cols;
    LogSumExp<A> lse = rowLogSumExp(xr, cols);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = T(std::exp((static_cast<A>(xr[c]) - lse.max) - lse.logSum));
  });
}

/// dx = y * (dy - sum(dy * y)).
template <class T>
void softmaxGrad(const T *dy, const T *y, T *dx, int64_t rows, int64_t cols) {
  using A = Acc<T>;
  parallelFor(rows, 64, [&](int64_t r) {
    const T *dyr = dy + r * cols, *yr = y + r * cols;
    A dot = 0;
    for (int64_t c = 0; c < cols; ++c)
      dot += static_cast<A>(dyr[c]) * static_cast<A>(yr[c]);
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] = T(static_cast<A>(yr[c]) * (static_cast<A>(dyr[c]) - dot));
  });
}

/// Mean and reciprocal standard deviation (biased variance) of one row,
/// two-pass for accuracy.
template <class T, class A = Acc<T>>
inline void rowMoments(const T *xr, int64_t cols, double eps, A &mean, A &rstd) {
  A sum = 0;
  for (int64_t c = 0; c < cols; ++c)
    sum += static_cast<A>(xr[c]);
  mean = sum / A(cols);
  A var = 0;
  for (int64_t c = 0; c < cols; ++c) {
    A d = static_cast<A>(xr[c]) - mean;
    var += d * d;
  }
  var /= A(cols);
  rstd = A(1) / std::sqrt(var + A(eps));
}

template <class T>
void layernorm(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t cols,
               double eps) {
  using A = Acc<T>;
  parallelFor(rows, 64, [&](int64_t r) {
    const T *xr = x + r * cols;
    A mean, rstd;
    rowMoments(xr, cols, eps, mean, rstd);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = T((static_cast<A>(xr[c]) - mean) * rstd * static_cast<A>(gamma[c]) +
                          static_cast<A>(beta[c]));
  });
}

/// Recomputes each row's moments (cheaper than keeping them between forward and
/// backward at the sizes zcc targets), then
///   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * gamma,
///   dgamma = sum_rows dy * xhat, dbeta = sum_rows dy.
template <class T>
void layernormGrad(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, T *dbeta,
                   int64_t rows, int64_t cols, double eps) {
  using A = Acc<T>;
  std::vector<A> means(rows), rstds(rows);
  parallelFor(rows, 64, [&](int64_t r) {
    const T *xr = x + r * cols, *dyr = dy + r * cols;
    rowMoments(xr, cols, eps, means[r], rstds[r]);
    A meanDxhat = 0, meanDxhatXhat = 0;
    for (int64_t c = 0; c < cols; ++c) {
      A xhat = (static_cast<A>(xr[c]) - means[r]) * rstds[r];
      A dxhat = static_cast<A>(dyr[c]) * static_cast<A>(gamma[c]);
      meanDxhat += dxhat;
      meanDxhatXhat += dxhat * xhat;
    }
    meanDxhat /= A(cols);
    meanDxhatXhat /= A(cols);
    for (int64_t c = 0; c < cols; ++c) {
      A xhat = (static_cast<A>(xr[c]) - means[r]) * rstds[r];
      A dxhat = static_cast<A>(dyr[c]) * static_cast<A>(gamma[c]);
      dx[r * cols + c] = T(rstds[r] * (dxhat - meanDxhat - xhat * meanDxhatXhat));
    }
  });
  // Column sums: each column is independent, rows are walked in order so the
  // result does not depend on the thread count.
  parallelFor(cols, 16, [&](int64_t c) {
    A dg = 0, db = 0;
    for (int64_t r = 0; r < rows; ++r) {
      A g = static_cast<A>(dy[r * cols + c]);
      dg += g * (static_cast<A>(x[r * cols + c]) - means[r]) * rstds[r];
      db += g;
    }
    dgamma[c] = T(dg);
    dbeta[c] = T(db);
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_NORMALIZATION_H
