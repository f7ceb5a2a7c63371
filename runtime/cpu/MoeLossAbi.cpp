// The routers' losses of zrt_abi.def for the CPU backend (runtime/cpu/Moe.h): the load-balancing
// loss (pooled over the context ranks under context parallelism: its one collective) and the
// router z-loss, with their gradients.
#include "zrt/zrt.h"

#include <vector>

#include "core/Error.h"
#include "core/Trace.h"
#include "cpu/Dispatch.h"
#include "cpu/Moe.h"
#include "cpu/MoeChecks.h"

using namespace zrt;
using namespace zrt::cpu;

namespace zrt::cpu {
void meshAllReduce(int32_t axis, float *buffer, int64_t count); // Runtime.cpp
} // namespace zrt::cpu

namespace {

/// Under context parallelism (contextRanks > 1), the load-balancing loss's pool: the choices'
/// counts and score sums [2E] summed over the context axis (one all-reduce, in f32: counts stay
/// exact below 2^24 choices a layer), after checking the axis is the compiled one.
struct ContextPool {
  const char *call;
  int64_t ranks;
  void operator()(double *chose, double *mean, int64_t experts) const {
    if (zrt_mesh_size(ZRT_AXIS_CONTEXT) != ranks)
      fatal(call, "compiled for %lld context ranks, the mesh's context groups have %d", static_cast<long long>(ranks),
            zrt_mesh_size(ZRT_AXIS_CONTEXT));
    std::vector<float> stats(2 * experts);
    for (int64_t e = 0; e < experts; ++e)
      stats[e] = static_cast<float>(chose[e]), stats[experts + e] = static_cast<float>(mean[e]);
    meshAllReduce(ZRT_AXIS_CONTEXT, stats.data(), 2 * experts);
    for (int64_t e = 0; e < experts; ++e)
      chose[e] = stats[e], mean[e] = stats[experts + e];
  }
};

/// The load-balancing loss (and, with `dlogits`, its gradient), pooled over the context ranks
/// where there are several.
template <class T>
double auxLoss(const char *call, const T *logits, const int32_t *expert, const MoeRouting &r, double coef,
               double dloss, T *dlogits, int64_t contextRanks) {
  if (contextRanks < 1)
    fatal(call, "%lld context ranks", static_cast<long long>(contextRanks));
  if (contextRanks == 1)
    return moeAuxLoss(logits, expert, r, coef, dloss, dlogits);
  return moeAuxLoss(logits, expert, r, coef, dloss, dlogits, ContextPool{call, contextRanks}, contextRanks);
}

} // namespace

extern "C" {

void zrt_moe_aux_loss(int32_t dtype, const void *logits, const void *expert, void *loss, int64_t tokens,
                      int64_t experts, int64_t topK, int32_t sigmoid, double coef, int64_t contextRanks) {
  TraceScope trace("zrt_moe_aux_loss", TraceTrack::Compute);
  checkRouting("zrt_moe_aux_loss", tokens, experts, topK);
  checkExperts("zrt_moe_aux_loss", expert, tokens * topK, experts);
  const MoeRouting r = routingOf(tokens, experts, topK, sigmoid, 0, 1.0);
  ZRT_TYPED("zrt_moe_aux_loss", dtype,
            *static_cast<float *>(loss) = static_cast<float>(auxLoss("zrt_moe_aux_loss", in<T>(logits),
                                                                     in<int32_t>(expert), r, coef, 0.0,
                                                                     static_cast<T *>(nullptr), contextRanks)));
}

void zrt_moe_aux_loss_grad(int32_t dtype, const void *dloss, const void *logits, const void *expert, void *dlogits,
                           int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid, double coef,
                           int64_t contextRanks) {
  TraceScope trace("zrt_moe_aux_loss_grad", TraceTrack::Compute);
  checkRouting("zrt_moe_aux_loss_grad", tokens, experts, topK);
  checkExperts("zrt_moe_aux_loss_grad", expert, tokens * topK, experts);
  const MoeRouting r = routingOf(tokens, experts, topK, sigmoid, 0, 1.0);
  const double seed = *static_cast<const float *>(dloss);
  ZRT_TYPED("zrt_moe_aux_loss_grad", dtype,
            auxLoss("zrt_moe_aux_loss_grad", in<T>(logits), in<int32_t>(expert), r, coef, seed, out<T>(dlogits),
                    contextRanks));
}

void zrt_moe_z_loss(int32_t dtype, const void *logits, void *loss, int64_t tokens, int64_t experts, double coef) {
  TraceScope trace("zrt_moe_z_loss", TraceTrack::Compute);
  ZRT_TYPED("zrt_moe_z_loss", dtype,
            *static_cast<float *>(loss) = static_cast<float>(
                moeZLoss(in<T>(logits), tokens, experts, coef, 0.0, static_cast<T *>(nullptr))));
}

void zrt_moe_z_loss_grad(int32_t dtype, const void *dloss, const void *logits, void *dlogits, int64_t tokens,
                         int64_t experts, double coef) {
  TraceScope trace("zrt_moe_z_loss_grad", TraceTrack::Compute);
  const double seed = *static_cast<const float *>(dloss);
  ZRT_TYPED("zrt_moe_z_loss_grad", dtype, moeZLoss(in<T>(logits), tokens, experts, coef, seed, out<T>(dlogits)));
}

} // extern "C"
