#include "cuda/AttentionPath.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "core/Error.h"
#include "cuda/CudnnAttention.h"
#include "cuda/LocalRank.h"

namespace zrt::cuda {
namespace {

std::mutex mutex;
bool chosen = false;
AttentionPath path = AttentionPath::Auto;
std::set<std::string> announced;

AttentionPath fromEnvironment() {
  const char *value = std::getenv("ZRT_ATTENTION");
  if (!value || !*value || !std::strcmp(value, "auto"))
    return AttentionPath::Auto;
  if (!std::strcmp(value, "cudnn"))
    return AttentionPath::Cudnn;
  if (!std::strcmp(value, "own"))
    return AttentionPath::Own;
  fatal("zrt_causal_attention", "ZRT_ATTENTION=%s: expected auto, cudnn or own", value);
}

} // namespace

AttentionPath attentionPath() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!chosen) {
    path = fromEnvironment();
    chosen = true;
  }
  return path;
}

void setAttentionPath(AttentionPath p) {
  std::lock_guard<std::mutex> lock(mutex);
  path = p;
  chosen = true;
}

bool useCudnnAttention(const SdpaProblem &p, const AttentionVariant &variant) {
  const AttentionPath requested = attentionPath();
  if (requested == AttentionPath::Own)
    return false;
  const CudnnSupport support = cudnnSupport();
  const std::string refusal = cudnnAttentionRefusal(p, variant, support);
  if (requested == AttentionPath::Cudnn && !refusal.empty())
    fatal("zrt_causal_attention", "ZRT_ATTENTION=cudnn, but cuDNN cannot run attention [%s]: %s", p.key().c_str(),
          refusal.c_str());
  std::lock_guard<std::mutex> lock(mutex);
  if (localRank() == 0 && announced.insert(p.key() + (variant.capped() ? " capped" : "")).second) {
    if (refusal.empty())
      std::printf("zrt: attention [%s]: cuDNN %lld.%lld fused attention (sm_%d0)\n", p.key().c_str(),
                  static_cast<long long>(support.version / 10000), static_cast<long long>(support.version / 100 % 100),
                  support.smMajor);
    else
      std::printf("zrt: attention [%s]: zcc's kernels; cuDNN: %s\n", p.key().c_str(), refusal.c_str());
    std::fflush(stdout);
  }
  return refusal.empty();
}

} // namespace zrt::cuda
