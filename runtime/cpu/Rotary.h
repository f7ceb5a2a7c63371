// Rotary position embedding (Hugging Face Llama's half-split layout) on [B, T, H x D].
#ifndef ZRT_CPU_ROTARY_H
#define ZRT_CPU_ROTARY_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/Parallel.h"
#include "zrt/KernelMath.h"

namespace zrt::cpu {
inline namespace ZRT_ISA {

/// Every head of every position rotated by its angles (`inverse`: by minus them, the
/// gradient). The cosines and sines of the T x R/2 angles are computed once per call, as
/// Hugging Face computes its table once per forward. Token t is at position t, or at
/// positions[t] (context parallelism: a rank's tokens are chunks of the sequence).
/// `rotaryDims` R: only each head's first R channels rotate, as a head of R channels
/// (GPT-NeoX's rotary_pct); the rest pass through. 0: the whole head.
template <class T>
void rotary(const T *x, T *y, int64_t batch, int64_t time, int64_t channels, int64_t heads, double theta,
            bool inverse, const int64_t *positions = nullptr, int64_t rotaryDims = 0) {
  const int64_t headDim = channels / heads, dims = math::rotatedChannels(headDim, rotaryDims), half = dims / 2;
  std::vector<float> cosines(time * half), sines(time * half);
  parallelFor(time, 16, [&](int64_t t) {
    for (int64_t i = 0; i < half; ++i) {
      float angle = math::rotaryAngle(positions ? positions[t] : t, i, dims, theta);
      cosines[t * half + i] = std::cos(angle);
      sines[t * half + i] = std::sin(angle);
    }
  });
  parallelFor(batch * time, 16, [&](int64_t row) {
    const int64_t t = row % time;
    for (int64_t h = 0; h < heads; ++h) {
      const T *xh = x + row * channels + h * headDim;
      T *yh = y + row * channels + h * headDim;
      math::rotaryHead<Acc<T>>(xh, yh, cosines.data() + t * half, sines.data() + t * half, half, inverse);
      if (yh != xh)
        std::copy(xh + dims, xh + headDim, yh + dims);
    }
  });
}

} // namespace ZRT_ISA
} // namespace zrt::cpu

#endif // ZRT_CPU_ROTARY_H
