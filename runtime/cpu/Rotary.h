// Rotary position embedding (Hugging Face Llama's half-split layout) on [B, T, H x D].
#ifndef ZRT_CPU_ROTARY_H
#define ZRT_CPU_ROTARY_H

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Every head of every position rotated by its angles (`inverse`: by minus them, the
/// gradient). The cosines and sines of the T x D/2 angles are computed once per call, as
/// Hugging Face computes its table once per forward. Token t is at position t, or at
/// positions[t] (context parallelism: a rank's tokens are chunks of the sequence).
template <class T>
void rotary(const T *x, T *y, int64_t batch, int64_t time, int64_t channels, int64_t heads, double theta,
            bool inverse, const int64_t *positions = nullptr) {
  const int64_t headDim = channels / heads, half = headDim / 2;
  std::vector<float> cosines(time * half), sines(time * half);
  parallelFor(time, 16, [&](int64_t t) {
    for (int64_t i = 0; i < half; ++i) {
      float angle = math::rotaryAngle(positions ? positions[t] : t, i, headDim, theta);
      cosines[t * half + i] = std::cos(angle);
      sines[t * half + i] = std::sin(angle);
    }
  });
  parallelFor(batch * time, 16, [&](int64_t row) {
    const int64_t t = row % time;
    for (int64_t h = 0; h < heads; ++h)
      math::rotaryHead<Acc<T>>(x + row * channels + h * headDim, y + row * channels + h * headDim,
                               cosines.data() + t * half, sines.data() + t * half, half, inverse);
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ROTARY_H
