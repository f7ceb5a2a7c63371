// A score of causal attention on the CUDA kernels: the raw q.k scaled and, with a cap, soft-capped
// (C tanh(scale q.k / C)); its slope for the backward; and the keys a query's window reaches.
// Built on the host from the ABI's AttentionVariant and passed to the kernels by value.
#ifndef ZRT_CUDA_ATTENTIONSCORES_H
#define ZRT_CUDA_ATTENTIONSCORES_H

#include <cmath>
#include <cstdint>

#include "zrt/AttentionVariant.h"

namespace zrt::cuda {

struct AttentionScores {
  float scale; // 1/sqrt(D) unless the variant gives one
  float cap;   // 0: no cap
  int64_t window;

  static AttentionScores of(const AttentionVariant &variant, int64_t headSize) {
    return AttentionScores{variant.scale > 0.0 ? static_cast<float>(variant.scale)
                                               : 1.0f / std::sqrt(static_cast<float>(headSize)),
                           static_cast<float>(variant.softcap), variant.window};
  }
  /// The score of a raw dot product q.k.
  __device__ float operator()(float raw) const {
    const float z = raw * scale;
    return cap > 0.0f ? cap * tanhf(z / cap) : z;
  }
  /// d score / d raw at a score: scale, times 1 - tanh^2 through the cap (tanh = score / cap).
  __device__ float slope(float score) const {
    if (cap <= 0.0f)
      return scale;
    const float u = score / cap;
    return scale * (1.0f - u * u);
  }
  /// The first key query t sees (it sees firstKey(t) .. t).
  __host__ __device__ int64_t firstKey(int64_t t) const { return windowFirstKey(t, window); }
  /// The last query that sees key s (queries s .. lastQuery(s), below T; T - 1 for a key at or
  /// past the end).
  __host__ __device__ int64_t lastQuery(int64_t s, int64_t T) const {
    return window > 0 && s + window - 1 < T - 1 ? s + window - 1 : T - 1;
  }
};

} // namespace zrt::cuda

#endif // ZRT_CUDA_ATTENTIONSCORES_H
