// Mean softmax cross-entropy and mean squared error, forward and backward. Losses are one
// f32 (f64 in the test instances); per-row work is parallel, the final sum is in row order.
#ifndef ZRT_CPU_LOSS_H
#define ZRT_CPU_LOSS_H

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/Error.h"
#include "cpu/Normalization.h"
#include "cpu/Parallel.h"

namespace zrt::cpu {

template <class T> using LossOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

inline void checkLabels(const char *call, const int32_t *labels, int64_t rows, int64_t classes) {
  for (int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || labels[r] >= classes)
      fatal(call, "label %" PRId32 " at position %" PRId64 " is outside [0, %" PRId64 ")",
            labels[r], r, classes);
}

template <class T>
void crossEntropy(const T *logits, const int32_t *labels, LossOf<T> *loss, int64_t rows,
                  int64_t classes) {
  using A = Acc<T>;
  checkLabels("zrt_cross_entropy", labels, rows, classes);
  std::vector<A> perRow(rows);
  parallelFor(rows, 16,
              [&](int64_t r) { perRow[r] = math::crossEntropyRow<A>(logits + r * classes, labels[r], classes); });
  double sum = 0;
  for (A v : perRow)
    sum += v;
  *loss = static_cast<LossOf<T>>(sum / static_cast<double>(rows));
}

/// dlogits = dloss / rows * (softmax(logits) - onehot(label)).
template <class T>
void crossEntropyGrad(const LossOf<T> *dloss, const T *logits, const int32_t *labels, T *dlogits,
                      int64_t rows, int64_t classes) {
  using A = Acc<T>;
  checkLabels("zrt_cross_entropy_grad", labels, rows, classes);
  const A g = static_cast<A>(*dloss) / A(rows);
  parallelFor(rows, 16, [&](int64_t r) {
    math::crossEntropyGradRow<A>(logits + r * classes, labels[r], dlogits + r * classes, classes, g);
  });
}

template <class T>
void mse(const T *pred, const T *target, LossOf<T> *loss, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(pred[i]) - static_cast<double>(target[i]);
    sum += d * d;
  }
  *loss = static_cast<LossOf<T>>(sum / static_cast<double>(n));
}

template <class T>
void mseGrad(const LossOf<T> *dloss, const T *pred, const T *target, T *dpred, int64_t n) {
  using A = Acc<T>;
  const A g = A(2) * static_cast<A>(*dloss) / A(n);
  parallelFor(n, kElementGrain, [&](int64_t i) {
    dpred[i] = T(g * (static_cast<A>(pred[i]) - static_cast<A>(target[i])));
  });
}

} // namespace zrt::cpu

#endif // ZRT_CPU_LOSS_H
