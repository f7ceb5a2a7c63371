#include "cuda/SdpaProblem.h"

#include <cmath>
#include <cstdio>

namespace zrt::cuda {

SdpaProblem SdpaProblem::of(int32_t dtype, int64_t batch, int64_t time, int64_t channels, int64_t heads,
                            int64_t kvHeads, const AttentionVariant &variant) {
  SdpaProblem p;
  p.dtype = dtype;
  p.batch = batch;
  p.time = time;
  p.heads = heads;
  p.kvHeads = kvHeads > 0 ? kvHeads : heads;
  p.headDim = heads > 0 ? channels / heads : 0;
  p.scale = static_cast<float>(variant.scale > 0.0 ? variant.scale : 1.0 / std::sqrt(static_cast<double>(p.headDim)));
  p.leftBound = variant.window > 0 ? variant.window : 0;
  const int64_t D = p.headDim;
  // [batch, time, heads x D] read as [batch, heads, time, D]: a head is D channels into a row.
  p.q = {{batch, heads, time, D}, {time * heads * D, D, heads * D, 1}};
  p.kv = {{batch, p.kvHeads, time, D}, {time * p.kvHeads * D, D, p.kvHeads * D, 1}};
  p.stats = {{batch, heads, time, 1}, {heads * time, time, 1, 1}};
  return p;
}

std::string SdpaProblem::key() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "dt%d b%lld t%lld h%lld kv%lld d%lld scale%a left%lld", dtype,
                static_cast<long long>(batch), static_cast<long long>(time), static_cast<long long>(heads),
                static_cast<long long>(kvHeads), static_cast<long long>(headDim), static_cast<double>(scale),
                static_cast<long long>(leftBound));
  return buf;
}

std::string cudnnAttentionRefusal(const SdpaProblem &p, const AttentionVariant &variant, const CudnnSupport &support) {
  if (support.version == 0)
    return "libcudnn.so.9 was not found (LD_LIBRARY_PATH, or PyTorch's nvidia/cudnn/lib)";
  if (support.version < 90000)
    return "cuDNN " + std::to_string(support.version) + " is older than 9.0";
  if (support.smMajor < 8)
    return "the device is older than sm_80 (Ampere)";
  if (p.dtype != 1)
    return "f32 (cuDNN's fused attention takes bf16 and fp16)";
  if (variant.capped())
    return "soft-capped scores (cuDNN's score modifier cannot be combined with the causal band)";
  if (p.headDim % 8 != 0 || p.headDim > (support.smMajor >= 9 ? 256 : 128))
    return "head size " + std::to_string(p.headDim) + " (cuDNN takes multiples of 8 up to " +
           (support.smMajor >= 9 ? "256" : "128") + " on this device)";
  if (p.kvHeads <= 0 || p.heads % p.kvHeads != 0)
    return "query heads not a multiple of the key/value heads";
  return "";
}

} // namespace zrt::cuda
