// One causal attention op as cuDNN's fused scaled-dot-product-attention graph sees it
// (cudnn-frontend's sdpa / sdpa_backward): dims and strides of every tensor in cuDNN's
// [batch, heads, sequence, head dim] order over zcc's own layouts ([batch, time, heads x D]
// for q, the output and their gradients; [batch, time, kvHeads x D] for k, v and theirs), so
// no transpose runs; the scale, the causal band and a sliding window as cuDNN's diagonal band;
// the key its graphs are cached under; and why cuDNN cannot take an op, when it cannot.
//
// Host code without cuDNN: CudnnAttention.cpp builds the graphs from it on a GPU, and the
// CUDA-on-CPU stand-in (test/CudaOnCpu/CpuSdpa.cpp) computes attention from the same dims and
// strides, so a wrong stride, group or band here fails the conformance suite without a GPU.
#ifndef ZRT_CUDA_SDPA_PROBLEM_H
#define ZRT_CUDA_SDPA_PROBLEM_H

#include <array>
#include <cstdint>
#include <string>

#include "zrt/AttentionVariant.h"

namespace zrt::cuda {

/// A strided view in cuDNN's [batch, heads, sequence, head dim] order (elements, not bytes).
struct SdpaTensor {
  std::array<int64_t, 4> dim{}, stride{};
  /// The element offset of [b, h, s, d].
  int64_t at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return b * stride[0] + h * stride[1] + s * stride[2] + d * stride[3];
  }
};

struct SdpaProblem {
  int32_t dtype = 1; // the ABI's: 1 bf16 (what cuDNN's fused attention takes here)
  int64_t batch = 0, time = 0, heads = 0, kvHeads = 0, headDim = 0;
  float scale = 0;       // the scores' factor: the variant's, or 1 / sqrt(D)
  int64_t leftBound = 0; // cuDNN's diagonal band left bound: key j is seen by query i when
                         // j <= i (right bound 0) and j > i - leftBound; 0: no left bound
  /// q, o, dO, dQ share `q`'s layout; k, v, dK, dV `kv`'s; the softmax statistics (cuDNN's
  /// Stats: each row's log-sum-exp of its scaled, masked scores, f32) are [batch, heads, time, 1].
  SdpaTensor q, kv, stats;

  /// The op of zrt_causal_attention's arguments (kvHeads 0: as many as heads).
  static SdpaProblem of(int32_t dtype, int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                        const AttentionVariant &variant);
  /// Everything a built graph depends on: the cache key of its forward and backward graphs.
  std::string key() const;
  /// The kv head query head h reads (grouped-query attention).
  int64_t kvHeadOf(int64_t h) const { return h / (heads / kvHeads); }
  /// Whether query position i sees key position j (the causal band and the window).
  bool sees(int64_t i, int64_t j) const { return j <= i && (leftBound == 0 || j > i - leftBound); }
  int64_t statsCount() const { return batch * heads * time; }
};

/// What the device and the library offer: the compute capability's major number and cuDNN's
/// version as cudnnGetVersion() gives it (9.10.0: 91000; 0 when libcudnn could not be loaded).
struct CudnnSupport {
  int smMajor = 0;
  int64_t version = 0;
};

/// Why cuDNN's fused attention does not take this op here, in words for the start-up line and
/// --report; empty when it does. `variant` supplies what the problem does not carry (a soft-cap:
/// cuDNN's graphs have no tanh on the scores, so Gemma 2's capped layers stay on zcc's kernels).
std::string cudnnAttentionRefusal(const SdpaProblem &p, const AttentionVariant &variant, const CudnnSupport &support);

} // namespace zrt::cuda

#endif // ZRT_CUDA_SDPA_PROBLEM_H
