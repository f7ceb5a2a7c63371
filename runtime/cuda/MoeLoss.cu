// The routers' losses of a Mixture-of-Experts layer on the CUDA backend (Moe.h): Switch
// Transformer's load-balancing loss (its per-expert statistics summed in double in a fixed tree,
// as the CPU backend's) and ST-MoE's router z-loss, with their gradients. Under context parallelism
// the balancing loss is the whole sequences': the statistics pooled over the context ranks in f32,
// as the CPU backend pools them (MoeContextPool).
#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Moe.h"
#include "cuda/MoeCommon.cuh"
#include "cuda/Scratch.h"

namespace zrt::cuda {
namespace {

using namespace moe;

/// Each token's softmax max and sum (norm [2T]); nothing for sigmoid scores.
template <class T> __global__ void tokenNormalizers(const T *logits, float *norm, int64_t tokens, int64_t experts) {
  ZRT_FOR_EACH(t, tokens) {
    TokenScores s;
    s.of(logits + t * experts, experts, false);
    norm[2 * t] = s.top, norm[2 * t + 1] = s.sum;
  }
}

__device__ TokenScores scoresOf(const float *norm, int64_t t, bool sigmoid) {
  TokenScores s;
  s.sigmoid = sigmoid;
  if (!sigmoid)
    s.top = norm[2 * t], s.sum = norm[2 * t + 1];
  return s;
}

/// Block e: stats[e] = the choices of expert e, stats[E + e] = its scores' sum over the tokens.
template <class T>
__global__ void expertBalance(const T *logits, const int32_t *expert, const float *norm, double *stats, int64_t tokens,
                              int64_t experts, int64_t topK, bool sigmoid) {
  const int64_t e = blockIdx.x;
  double chose = 0, mean = 0;
  for (int64_t i = threadIdx.x; i < tokens * topK; i += kScanThreads)
    chose += expert[i] == e;
  for (int64_t t = threadIdx.x; t < tokens; t += kScanThreads)
    mean += double(scoresOf(norm, t, sigmoid)(float(logits[t * experts + e])));
  chose = blockTreeSum(chose);
  mean = blockTreeSum(mean);
  if (threadIdx.x == 0)
    stats[e] = chose, stats[experts + e] = mean;
}

/// The statistics through f32 and back, around the context pool's sum (the CPU backend pools them
/// in f32: counts stay exact below 2^24 choices a layer).
__global__ void statsToFloat(const double *stats, float *pooled, int64_t count) {
  ZRT_FOR_EACH(i, count) pooled[i] = static_cast<float>(stats[i]);
}
__global__ void statsFromFloat(const float *pooled, double *stats, int64_t count) {
  ZRT_FOR_EACH(i, count) stats[i] = pooled[i];
}

/// coef E sum_e f_e P_e from the statistics, one thread. `tokens`: the whole sequences' (this
/// rank's times the context parts).
__global__ void auxLossTotal(const double *stats, float *loss, double tokens, int64_t experts, int64_t topK,
                             double coef) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  const double choices = tokens * double(topK);
  double sum = 0;
  for (int64_t e = 0; e < experts; ++e)
    sum += stats[e] / choices * stats[experts + e] / tokens;
  *loss = static_cast<float>(sum * coef * double(experts));
}

/// d logits: d loss / d score[t, e] = dloss coef E f_e / T for every token, through its scores
/// (T the whole sequences' tokens; times the parts: each part's objective holds the whole loss).
template <class T>
__global__ void auxLossGradTokens(const float *dloss, const T *logits, const float *norm, const double *stats,
                                  T *dlogits, int64_t tokens, int64_t experts, int64_t topK, bool sigmoid,
                                  double coef, int64_t parts) {
  const double pooled = double(tokens) * double(parts), choices = pooled * double(topK);
  auto dsOf = [&](int64_t e) {
    return static_cast<float>(double(*dloss) * coef * double(experts) * stats[e] / choices / pooled *
                              double(parts));
  };
  ZRT_FOR_EACH(t, tokens) {
    const T *l = logits + t * experts;
    const TokenScores s = scoresOf(norm, t, sigmoid);
    float inner = 0;
    if (!sigmoid)
      for (int64_t e = 0; e < experts; ++e)
        inner += dsOf(e) * s(float(l[e]));
    for (int64_t e = 0; e < experts; ++e) {
      const float se = s(float(l[e])), ds = dsOf(e);
      dlogits[t * experts + e] = T(sigmoid ? ds * se * (1.0f - se) : se * (ds - inner));
    }
  }
}

template <class T> __device__ float logSumExp(const T *l, int64_t experts) {
  TokenScores s;
  s.of(l, experts, false);
  return s.top + logf(s.sum);
}

/// One block: coef times the mean over the tokens of logsumexp(logits)^2.
template <class T> __global__ void zLossTotal(const T *logits, float *loss, int64_t tokens, int64_t experts, double coef) {
  double sum = 0;
  for (int64_t t = threadIdx.x; t < tokens; t += kScanThreads) {
    const double z = logSumExp(logits + t * experts, experts);
    sum += z * z;
  }
  sum = blockTreeSum(sum);
  if (threadIdx.x == 0)
    *loss = static_cast<float>(coef * sum / double(tokens > 0 ? tokens : 1));
}

template <class T>
__global__ void zLossGradTokens(const float *dloss, const T *logits, T *dlogits, int64_t tokens, int64_t experts,
                                double coef) {
  ZRT_FOR_EACH(t, tokens) {
    const T *l = logits + t * experts;
    const float z = logSumExp(l, experts);
    const float g = static_cast<float>(double(*dloss) * 2.0 * coef / double(tokens)) * z;
    for (int64_t e = 0; e < experts; ++e)
      dlogits[t * experts + e] = T(g * expf(float(l[e]) - z));
  }
}

} // namespace

namespace {

/// Scratch for the balancing loss: each token's normalizers [2T], the statistics [2E] in double
/// (8-byte aligned: an even count of floats before them), and their f32 copy for the pool [2E].
struct AuxScratch {
  float *norm;
  double *stats;
  float *pooled;
};
AuxScratch auxScratch(int64_t tokens, int64_t experts) {
  float *scratch = scratchFloats(2 * tokens + 4 * experts + 2 + 2 * experts);
  return {scratch, reinterpret_cast<double *>(scratch + 2 * tokens), scratch + 2 * tokens + 4 * experts + 2};
}

/// The statistics of this rank's tokens into `a.stats`, pooled over the context parts.
template <class T>
void balanceStats(const char *call, const T *logits, const int32_t *expert, const AuxScratch &a, int64_t tokens,
                  int64_t experts, int64_t topK, bool sigmoid, cudaStream_t s, const MoeContextPool &pool) {
  if (pool.parts < 1 || (pool.parts > 1 && !pool.sum))
    fatal(call, "a context pool of %lld parts without a sum", static_cast<long long>(pool.parts));
  if (!sigmoid)
    tokenNormalizers<<<blocks(tokens), kThreads, 0, s>>>(logits, a.norm, tokens, experts);
  expertBalance<<<tiles(call, experts, 1), kScanThreads, 0, s>>>(logits, expert, a.norm, a.stats, tokens, experts,
                                                                  topK, sigmoid);
  if (pool.parts == 1)
    return;
  statsToFloat<<<blocks(2 * experts), kThreads, 0, s>>>(a.stats, a.pooled, 2 * experts);
  pool.sum(a.pooled, 2 * experts);
  statsFromFloat<<<blocks(2 * experts), kThreads, 0, s>>>(a.pooled, a.stats, 2 * experts);
}

} // namespace

void moeAuxLoss(int32_t dtype, const void *logits, const int32_t *expert, float *loss, int64_t tokens,
                int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s, const MoeContextPool &pool) {
  const AuxScratch a = auxScratch(tokens, experts);
  ZRT_CUDA_TYPED("zrt_moe_aux_loss", dtype, ({
    balanceStats("zrt_moe_aux_loss", static_cast<const T *>(logits), expert, a, tokens, experts, topK, sigmoid, s,
                 pool);
    auxLossTotal<<<1, 1, 0, s>>>(a.stats, loss, double(tokens) * double(pool.parts), experts, topK, coef);
  }));
}

void moeAuxLossGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *expert, void *dlogits,
                    int64_t tokens, int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s,
                    const MoeContextPool &pool) {
  const AuxScratch a = auxScratch(tokens, experts);
  ZRT_CUDA_TYPED("zrt_moe_aux_loss_grad", dtype, ({
    balanceStats("zrt_moe_aux_loss_grad", static_cast<const T *>(logits), expert, a, tokens, experts, topK, sigmoid,
                 s, pool);
    auxLossGradTokens<<<blocks(tokens), kThreads, 0, s>>>(dloss, static_cast<const T *>(logits), a.norm, a.stats,
                                                          static_cast<T *>(dlogits), tokens, experts, topK, sigmoid,
                                                          coef, pool.parts);
  }));
}

void moeZLoss(int32_t dtype, const void *logits, float *loss, int64_t tokens, int64_t experts, double coef,
              cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_moe_z_loss", dtype,
                 (zLossTotal<<<1, kScanThreads, 0, s>>>(static_cast<const T *>(logits), loss, tokens, experts, coef)));
}

void moeZLossGrad(int32_t dtype, const float *dloss, const void *logits, void *dlogits, int64_t tokens,
                  int64_t experts, double coef, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_moe_z_loss_grad", dtype,
                 (zLossGradTokens<<<blocks(tokens), kThreads, 0, s>>>(dloss, static_cast<const T *>(logits),
                                                                    static_cast<T *>(dlogits), tokens, experts, coef)));
}


} // namespace zrt::cuda
