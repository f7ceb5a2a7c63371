// What zc.causal_attention computes beyond causal softmax(q k^T / sqrt(D)) v, as the ABI passes
// it (zrt_causal_attention's scale, softcap, window; 0 for an absent one): a scale other than
// 1/sqrt(D) (Gemma 2's query_pre_attn_scalar), soft-capped scores C tanh(s / C) (Gemma 2's
// attn_logit_softcapping) and a sliding window of W keys (Mistral's, Gemma 2's sliding_window).
// Shared by the CPU and CUDA kernels and their tests, so the two read the window alike.
#ifndef ZRT_ATTENTIONVARIANT_H
#define ZRT_ATTENTIONVARIANT_H

#include <cstdint>

#include "zrt/bf16.h"

namespace zrt {

/// The first key position query position t sees under a window of `window` keys (0: every
/// earlier position); it sees keys windowFirstKey(t, window) .. t.
ZRT_HD int64_t windowFirstKey(int64_t t, int64_t window) { return window > 0 && t >= window ? t - window + 1 : 0; }

struct AttentionVariant {
  double scale = 0.0;   // 0: 1 / sqrt(head size)
  double softcap = 0.0; // 0: no cap
  int64_t window = 0;   // 0: every earlier position

  /// The first key position query position t sees (it sees keys firstKey(t) .. t).
  int64_t firstKey(int64_t t) const { return windowFirstKey(t, window); }
  bool capped() const { return softcap > 0.0; }
};

} // namespace zrt

#endif // ZRT_ATTENTIONVARIANT_H
