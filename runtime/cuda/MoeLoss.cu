// The routers' losses of a Mixture-of-Experts layer on the CUDA backend (Moe.h): Switch
// Transformer's load-balancing loss (its per-expert statistics summed in double in a fixed tree,
// as the CPU backend's) and ST-MoE's router z-loss, with their gradients. One rank's tokens: the
// loss pooled over context ranks is the CPU backend's only (zcc refuses it for --target cuda).
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

/// coef E sum_e f_e P_e from the statistics, one thread.
__global__ void auxLossTotal(const double *stats, float *loss, int64_t tokens, int64_t experts, int64_t topK,
                             double coef) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  const double choices = double(tokens) * double(topK);
  double sum = 0;
  for (int64_t e = 0; e < experts; ++e)
    sum += stats[e] / choices * stats[experts + e] / double(tokens);
  *loss = static_cast<float>(sum * coef * double(experts));
}

/// d logits: d loss / d score[t, e] = dloss coef E f_e / T for every token, through its scores.
template <class T>
__global__ void auxLossGradTokens(const float *dloss, const T *logits, const float *norm, const double *stats,
                                  T *dlogits, int64_t tokens, int64_t experts, int64_t topK, bool sigmoid,
                                  double coef) {
  const double choices = double(tokens) * double(topK);
  auto dsOf = [&](int64_t e) {
    return static_cast<float>(double(*dloss) * coef * double(experts) * stats[e] / choices / double(tokens));
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

void moeAuxLoss(int32_t dtype, const void *logits, const int32_t *expert, float *loss, int64_t tokens,
                int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s) {
  float *scratch = scratchFloats(2 * tokens + 4 * experts + 2);
  float *norm = scratch;
  double *stats = reinterpret_cast<double *>(scratch + 2 * tokens); // 8-byte aligned: an even count
  ZRT_CUDA_TYPED("zrt_moe_aux_loss", dtype, ({
    if (!sigmoid)
      tokenNormalizers<<<blocks(tokens), kThreads, 0, s>>>(static_cast<const T *>(logits), norm, tokens, experts);
    expertBalance<<<tiles("zrt_moe_aux_loss", experts, 1), kScanThreads, 0, s>>>(
        static_cast<const T *>(logits), expert, norm, stats, tokens, experts, topK, sigmoid);
    auxLossTotal<<<1, 1, 0, s>>>(stats, loss, tokens, experts, topK, coef);
  }));
}

void moeAuxLossGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *expert, void *dlogits,
                    int64_t tokens, int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s) {
  float *scratch = scratchFloats(2 * tokens + 4 * experts + 2);
  float *norm = scratch;
  double *stats = reinterpret_cast<double *>(scratch + 2 * tokens);
  ZRT_CUDA_TYPED("zrt_moe_aux_loss_grad", dtype, ({
    if (!sigmoid)
      tokenNormalizers<<<blocks(tokens), kThreads, 0, s>>>(static_cast<const T *>(logits), norm, tokens, experts);
    expertBalance<<<tiles("zrt_moe_aux_loss_grad", experts, 1), kScanThreads, 0, s>>>(
        static_cast<const T *>(logits), expert, norm, stats, tokens, experts, topK, sigmoid);
    auxLossGradTokens<<<blocks(tokens), kThreads, 0, s>>>(dloss, static_cast<const T *>(logits), norm, stats,
                                                          static_cast<T *>(dlogits), tokens, experts, topK, sigmoid,
                                                          coef);
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
