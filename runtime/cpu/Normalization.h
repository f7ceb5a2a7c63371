// Row-wise softmax, layernorm and RMSNorm over the last axis, forward and backward; f32 (or f64) math.
#ifndef ZRT_CPU_NORMALIZATION_H
#define ZRT_CPU_NORMALIZATION_H

#include <algorithm>
#include <cmath>
#include <cstdint>

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

/// sum = a + b, y = layernorm(sum): each row normalized while its sum is in cache; the same
/// bits as zrt_add then zrt_layernorm.
template <class T>
void addLayernorm(const T *a, const T *b, const T *gamma, const T *beta, T *sum, T *y, int64_t rows, int64_t cols,
                  double eps) {
  parallelFor(rows, 64, [&](int64_t r) {
    const T *ar = a + r * cols, *br = b + r * cols;
    T *sr = sum + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      sr[c] = T(static_cast<Acc<T>>(ar[c]) + static_cast<Acc<T>>(br[c]));
    math::layernormRow<Acc<T>>(sr, gamma, beta, y + r * cols, cols, eps);
  });
}

/// layernormGrad; with `residual`, dx = residual + the layernorm's input gradient (rounded as
/// zrt_add of the two would round it).
template <class T>
void layernormGrad(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, T *dbeta,
                   int64_t rows, int64_t cols, double eps, const T *residual = nullptr) {
  using A = Acc<T>;
  Scratch<A> means(rows), rstds(rows);
  parallelFor(rows, 64, [&](int64_t r) {
    T *dxr = dx + r * cols;
    math::layernormGradRow<A>(dy + r * cols, x + r * cols, gamma, dxr, cols, eps, means[r], rstds[r]);
    if (residual)
      for (int64_t c = 0; c < cols; ++c)
        dxr[c] = T(static_cast<A>(residual[r * cols + c]) + static_cast<A>(dxr[c]));
  });
  // dgamma and dbeta sum over rows. Column by column (the CUDA backend's order) walks the
  // matrices at a stride of a row, one cache line per value: 3 ms for 2048 x 384 on 2 cores.
  // Here fixed chunks of rows sum into per-chunk rows of partials, vectorized over columns,
  // then the chunks add up in order: the same bits whatever the thread count, and for at
  // most kRowChunk rows the same bits as the column loop.
  constexpr int64_t kRowChunk = 64;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  Scratch<A> partial(2 * chunks * cols); // zeroed
  parallelFor(chunks, 1, [&](int64_t k) {
    A *pg = partial.data() + 2 * k * cols, *pb = pg + cols;
    for (int64_t r = k * kRowChunk; r < std::min(rows, (k + 1) * kRowChunk); ++r) {
      const T *dyr = dy + r * cols, *xr = x + r * cols;
      const A mean = means[r], rstd = rstds[r];
      for (int64_t c = 0; c < cols; ++c) {
        const A g = static_cast<A>(dyr[c]);
        pg[c] += g * (static_cast<A>(xr[c]) - mean) * rstd;
        pb[c] += g;
      }
    }
  });
  parallelFor(cols, 256, [&](int64_t c) {
    A dg = 0, db = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      dg += partial[2 * k * cols + c];
      db += partial[(2 * k + 1) * cols + c];
    }
    dgamma[c] = T(dg);
    dbeta[c] = T(db);
  });
}

template <class T>
void rmsnorm(const T *x, const T *gamma, T *y, int64_t rows, int64_t cols, double eps, double gainOffset = 0.0) {
  parallelFor(rows, 64, [&](int64_t r) {
    math::rmsnormRow<Acc<T>>(x + r * cols, gamma, y + r * cols, cols, eps, Acc<T>(gainOffset));
  });
}

/// dx row by row, then dgamma summed over rows as layernormGrad sums its parameter
/// gradients: fixed chunks of rows into partial rows, the chunks added in order (the same
/// bits whatever the thread count).
template <class T>
void rmsnormGrad(const T *dy, const T *x, const T *gamma, T *dx, T *dgamma, int64_t rows, int64_t cols,
                 double eps, double gainOffset = 0.0) {
  using A = Acc<T>;
  Scratch<A> rstds(rows);
  parallelFor(rows, 64, [&](int64_t r) {
    rstds[r] = math::rmsnormGradRow<A>(dy + r * cols, x + r * cols, gamma, dx + r * cols, cols, eps, A(gainOffset));
  });
  constexpr int64_t kRowChunk = 64;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  Scratch<A> partial(chunks * cols); // zeroed
  parallelFor(chunks, 1, [&](int64_t k) {
    A *pg = partial.data() + k * cols;
    for (int64_t r = k * kRowChunk; r < std::min(rows, (k + 1) * kRowChunk); ++r) {
      const T *dyr = dy + r * cols, *xr = x + r * cols;
      const A rstd = rstds[r];
      for (int64_t c = 0; c < cols; ++c)
        pg[c] += static_cast<A>(dyr[c]) * static_cast<A>(xr[c]) * rstd;
    }
  });
  parallelFor(cols, 256, [&](int64_t c) {
    A dg = 0;
    for (int64_t k = 0; k < chunks; ++k)
      dg += partial[k * cols + c];
    dgamma[c] = T(dg);
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_NORMALIZATION_H
