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
                  int64_t classes, double softcap = 0) {
  using A = Acc<T>;
  checkLabels("zrt_cross_entropy", labels, rows, classes);
  const math::LogitCap<A> cap{A(softcap)};
  std::vector<A> perRow(rows);
  parallelFor(rows, 16, [&](int64_t r) {
    perRow[r] = math::crossEntropyRow<A>(logits + r * classes, labels[r], classes, cap);
  });
  double sum = 0;
  for (A v : perRow)
    sum += v;
  *loss = static_cast<LossOf<T>>(sum / static_cast<double>(rows));
}

/// dlogits = dloss / rows * (softmax(logits) - onehot(label)), of the capped logits times the
/// cap's slope when `softcap` > 0.
template <class T>
void crossEntropyGrad(const LossOf<T> *dloss, const T *logits, const int32_t *labels, T *dlogits,
                      int64_t rows, int64_t classes, double softcap = 0) {
  using A = Acc<T>;
  checkLabels("zrt_cross_entropy_grad", labels, rows, classes);
  const A g = static_cast<A>(*dloss) / A(rows);
  const math::LogitCap<A> cap{A(softcap)};
  parallelFor(rows, 16, [&](int64_t r) {
    math::crossEntropyGradRow<A>(logits + r * classes, labels[r], dlogits + r * classes, classes, g, cap);
  });
}

/// Vocabulary-parallel cross-entropy (Megatron's), in three steps around two collectives
/// over the tensor axis: each row's maximum over this rank's classes; then, given the
/// maximum over all classes, this rank's sum of exp(logit - max) and the label's logit where
/// this rank holds the label (0 elsewhere), both summed over the ranks; then each row's
/// loss or gradient from the sums, with crossEntropyRow's arithmetic. `cap` (the soft-cap)
/// applies to every logit read, as in crossEntropyRow.
template <class T>
void rowMaxima(const T *logits, float *maxima, int64_t rows, int64_t classes, math::LogitCap<float> cap = {}) {
  parallelFor(rows, 16, [&](int64_t r) {
    const T *row = logits + r * classes;
    float m = static_cast<float>(row[0]);
    for (int64_t c = 1; c < classes; ++c)
      m = static_cast<float>(row[c]) > m ? static_cast<float>(row[c]) : m;
    maxima[r] = cap.value(m);
  });
}

/// sums[r] = sum_c exp(logits[r, c] - maxima[r]); labelLogits[r] = logits[r, labels[r] - first]
/// when this rank holds that class, else 0.
template <class T>
void sumExpAndLabelLogit(const T *logits, const int32_t *labels, const float *maxima, float *sums,
                         float *labelLogits, int64_t rows, int64_t classes, int64_t first,
                         math::LogitCap<float> cap = {}) {
  parallelFor(rows, 16, [&](int64_t r) {
    const T *row = logits + r * classes;
    float sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += math::mexp(cap.value(static_cast<float>(row[c])) - maxima[r]);
    sums[r] = sum;
    const int64_t label = static_cast<int64_t>(labels[r]) - first;
    labelLogits[r] = label >= 0 && label < classes ? cap.value(static_cast<float>(row[label])) : 0.0f;
  });
}

inline float vocabParallelLoss(const float *maxima, const float *sums, const float *labelLogits, int64_t rows) {
  double total = 0;
  for (int64_t r = 0; r < rows; ++r)
    total += (maxima[r] - labelLogits[r]) + math::mlog(sums[r]);
  return static_cast<float>(total / static_cast<double>(rows));
}

/// dlogits = dloss / rows * (softmax over all classes - onehot), for this rank's classes.
template <class T>
void vocabParallelGrad(float dloss, const T *logits, const int32_t *labels, const float *maxima, const float *sums,
                       T *dlogits, int64_t rows, int64_t classes, int64_t first, math::LogitCap<float> cap = {}) {
  const float g = dloss / static_cast<float>(rows);
  parallelFor(rows, 16, [&](int64_t r) {
    const float logSum = math::mlog(sums[r]);
    const int64_t label = static_cast<int64_t>(labels[r]) - first;
    for (int64_t c = 0; c < classes; ++c) {
      float slope;
      float p = math::mexp((cap.value(static_cast<float>(logits[r * classes + c]), slope) - maxima[r]) - logSum);
      dlogits[r * classes + c] = T(g * (p - (c == label ? 1.0f : 0.0f)) * slope);
    }
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
