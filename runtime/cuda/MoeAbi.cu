// The Mixture-of-Experts entry points of zrt_abi.def for the CUDA backend (cuda/Moe.h): the
// routing's integers checked on the host as the CPU backend's (runtime/cpu/MoeAbi.cpp) checks
// them, the kernels on the compute stream, and the routing statistics and the balancing bias's
// loads kept on the device (a step graph replays the routing: the host reads them only when
// train.bin takes them, after the step); the load-balancing loss pooled over the context ranks by
// one all-reduce. Expert parallelism's exchanges: ExpertParallel.cu.
#include "zrt/zrt.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/Error.h"
#include "core/MoeRouteChecks.h"
#include "cuda/CudaCheck.h"
#include "cuda/Moe.h"
#include "cuda/RuntimeState.h"
#include "zrt/MoeLayout.h"

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::abi;

namespace {

/// The device's routing statistics and, by bias parameter name, each bias's loads [E]. Allocated
/// by the first routing that needs them, in the eager first step (nothing allocates in a capture).
struct MoeDeviceState {
  MoeDeviceStats *stats = nullptr;
  std::map<std::string, std::pair<long long *, int64_t>> loads;
};
MoeDeviceState &moeState() {
  static MoeDeviceState state;
  return state;
}

MoeDeviceStats *deviceStats() {
  MoeDeviceState &m = moeState();
  if (!m.stats) {
    ZRT_CUDA_CHECK(cudaMalloc(&m.stats, sizeof(MoeDeviceStats)));
    ZRT_CUDA_CHECK(cudaMemset(m.stats, 0, sizeof(MoeDeviceStats)));
  }
  return m.stats;
}

long long *deviceLoads(const char *biasParam, int64_t experts) {
  auto &[loads, count] = moeState().loads[biasParam];
  if (!loads) {
    ZRT_CUDA_CHECK(cudaMalloc(&loads, experts * sizeof(long long)));
    ZRT_CUDA_CHECK(cudaMemset(loads, 0, experts * sizeof(long long)));
    count = experts;
  }
  if (count != experts)
    fatal("zrt_moe_route", "bias '%s' chooses among %lld experts here and %lld elsewhere", biasParam,
          static_cast<long long>(experts), static_cast<long long>(count));
  return loads;
}

/// The host reads what the device counted: after the work queued so far.
template <class V> void takeFromDevice(V *device, V *host, int64_t count) {
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute()));
  ZRT_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(V), cudaMemcpyDeviceToHost));
  ZRT_CUDA_CHECK(cudaMemset(device, 0, count * sizeof(V)));
}

int *badRow(const char *call) { return current(call).errors + 3; }

MoeRouteArgs routeArgs(const char *call, int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid,
                       int32_t normalize, double scale) {
  MoeRouteArgs a;
  a.tokens = tokens, a.experts = experts, a.topK = topK;
  a.sigmoid = sigmoid != 0, a.renormalize = normalize != 0, a.scale = scale;
  checkRouting(call, tokens, experts, topK);
  return a;
}

/// The balancing loss's pool over the context ranks (cpu/MoeLossAbi.cpp's ContextPool): one f32
/// all-reduce of the statistics on the context axis, after checking it is the compiled one.
MoeContextPool contextPool(const char *call, int64_t contextRanks) {
  if (contextRanks < 1)
    fatal(call, "%lld context ranks", static_cast<long long>(contextRanks));
  if (contextRanks == 1)
    return {};
  if (zrt_mesh_size(ZRT_AXIS_CONTEXT) != contextRanks)
    fatal(call, "compiled for %lld context ranks, the mesh's context groups have %d",
          static_cast<long long>(contextRanks), zrt_mesh_size(ZRT_AXIS_CONTEXT));
  return {contextRanks, [](float *stats, int64_t count) {
            runBlocking(args(Collective::AllReduce, ZRT_DTYPE_F32, stats, stats, count, 0, 0, -1, ZRT_AXIS_CONTEXT));
          }};
}

} // namespace

extern "C" {

void zrt_moe_take_stats(void *out) {
  auto *o = static_cast<int64_t *>(out);
  MoeDeviceStats taken{};
  if (moeState().stats)
    takeFromDevice(moeState().stats, &taken, 1);
  o[0] = taken.routings, o[1] = taken.experts, o[2] = taken.fewest, o[3] = taken.most, o[4] = taken.rows,
  o[5] = taken.dropped;
}

void zrt_moe_take_load(const void *biasParam, void *out, int64_t experts) {
  auto *o = static_cast<float *>(out);
  std::fill(o, o + experts, 0.0f);
  auto it = moeState().loads.find(static_cast<const char *>(biasParam));
  if (it == moeState().loads.end())
    return;
  if (it->second.second != experts)
    fatal("zrt_moe_take_load", "bias '%s' has %lld experts' loads, asked for %lld",
          static_cast<const char *>(biasParam), static_cast<long long>(it->second.second),
          static_cast<long long>(experts));
  std::vector<long long> loads(static_cast<size_t>(experts));
  takeFromDevice(it->second.first, loads.data(), experts);
  for (int64_t e = 0; e < experts; ++e)
    o[e] = static_cast<float>(loads[static_cast<size_t>(e)]);
}

void zrt_moe_route(int32_t dtype, const void *logits, const void *bias, void *weight, void *expert, void *row,
                   void *offsets, int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid, int32_t normalize,
                   double scale, double capacityFactor, int64_t groups, int64_t topkGroups, int32_t counted,
                   const void *biasParam) {
  GpuScope trace("zrt_moe_route", compute());
  MoeRouteArgs a = routeArgs("zrt_moe_route", tokens, experts, topK, sigmoid, normalize, scale);
  checkRouteOptions("zrt_moe_route", experts, topK, capacityFactor, groups, topkGroups);
  a.capacity = moeCapacity(tokens, experts, topK, capacityFactor);
  a.groups = groups, a.topkGroups = topkGroups;
  MoeDeviceStats *stats = counted ? deviceStats() : nullptr;
  long long *loads = counted && biasParam ? deviceLoads(static_cast<const char *>(biasParam), experts) : nullptr;
  moeRoute(dtype, logits, bias, weight, static_cast<int32_t *>(expert), static_cast<int32_t *>(row),
           static_cast<int32_t *>(offsets), a, stats, loads, compute());
}

void zrt_moe_route_grad(int32_t dtype, const void *dweight, const void *logits, const void *expert, const void *row,
                        void *dlogits, int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid,
                        int32_t normalize, double scale) {
  GpuScope trace("zrt_moe_route_grad", compute());
  const MoeRouteArgs a = routeArgs("zrt_moe_route_grad", tokens, experts, topK, sigmoid, normalize, scale);
  moeRouteGrad(dtype, dweight, logits, static_cast<const int32_t *>(expert), static_cast<const int32_t *>(row),
               dlogits, a, compute());
}

void zrt_moe_dispatch(int32_t dtype, const void *x, const void *row, void *xs, int64_t tokens, int64_t topK,
                      int64_t cols, int64_t rows) {
  GpuScope trace("zrt_moe_dispatch", compute());
  checkDispatchedRows("zrt_moe_dispatch", tokens, topK, rows);
  moeDispatch(dtype, x, static_cast<const int32_t *>(row), xs, tokens, topK, cols, rows, badRow("zrt_moe_dispatch"),
              compute());
}

void zrt_moe_dispatch_grad(int32_t dtype, const void *dxs, const void *row, void *dx, int64_t tokens, int64_t topK,
                           int64_t cols, int64_t rows) {
  GpuScope trace("zrt_moe_dispatch_grad", compute());
  checkDispatchedRows("zrt_moe_dispatch_grad", tokens, topK, rows);
  moeDispatchGrad(dtype, dxs, static_cast<const int32_t *>(row), dx, tokens, topK, cols, rows,
                  badRow("zrt_moe_dispatch_grad"), compute());
}

void zrt_moe_combine(int32_t dtype, const void *ys, const void *weight, const void *row, void *y, int64_t tokens,
                     int64_t topK, int64_t cols, int64_t rows) {
  GpuScope trace("zrt_moe_combine", compute());
  checkDispatchedRows("zrt_moe_combine", tokens, topK, rows);
  moeCombine(dtype, ys, weight, static_cast<const int32_t *>(row), y, tokens, topK, cols, rows,
             badRow("zrt_moe_combine"), compute());
}

void zrt_moe_combine_grad(int32_t dtype, const void *dy, const void *ys, const void *weight, const void *row,
                          void *dys, void *dweight, int64_t tokens, int64_t topK, int64_t cols, int64_t rows) {
  GpuScope trace("zrt_moe_combine_grad", compute());
  checkDispatchedRows("zrt_moe_combine_grad", tokens, topK, rows);
  moeCombineGrad(dtype, dy, ys, weight, static_cast<const int32_t *>(row), dys, dweight, tokens, topK, cols, rows,
                 badRow("zrt_moe_combine_grad"), compute());
}

void zrt_moe_shared_gate(int32_t dtype, const void *shared, const void *gate, void *o, int64_t tokens, int64_t cols) {
  GpuScope trace("zrt_moe_shared_gate", compute());
  moeSharedGate(dtype, shared, gate, o, tokens, cols, compute());
}

void zrt_moe_shared_gate_grad(int32_t dtype, const void *dy, const void *shared, const void *gate, void *dshared,
                              void *dgate, int64_t tokens, int64_t cols) {
  GpuScope trace("zrt_moe_shared_gate_grad", compute());
  moeSharedGateGrad(dtype, dy, shared, gate, dshared, dgate, tokens, cols, compute());
}

void zrt_grouped_matmul(int32_t dtype, const void *xs, const void *w, const void *offsets, void *o, int64_t rows,
                        int64_t experts, int64_t k, int64_t n, int32_t transposeRhs) {
  GpuScope trace("zrt_grouped_matmul", compute());
  groupedMatmul(dtype, xs, w, static_cast<const int32_t *>(offsets), o, rows, experts, k, n, transposeRhs != 0,
                badRow("zrt_grouped_matmul"), compute());
}

void zrt_grouped_matmul_grad(int32_t dtype, const void *dout, const void *xs, const void *w, const void *offsets,
                             void *dxs, void *dw, int64_t rows, int64_t experts, int64_t k, int64_t n,
                             int32_t transposeRhs) {
  GpuScope trace("zrt_grouped_matmul_grad", compute());
  groupedMatmulGrad(dtype, dout, xs, w, static_cast<const int32_t *>(offsets), dxs, dw, rows, experts, k, n,
                    transposeRhs != 0, badRow("zrt_grouped_matmul_grad"), compute());
}

void zrt_moe_aux_loss(int32_t dtype, const void *logits, const void *expert, void *loss, int64_t tokens,
                      int64_t experts, int64_t topK, int32_t sigmoid, double coef, int64_t contextRanks) {
  GpuScope trace("zrt_moe_aux_loss", compute());
  checkRouting("zrt_moe_aux_loss", tokens, experts, topK);
  moeAuxLoss(dtype, logits, static_cast<const int32_t *>(expert), static_cast<float *>(loss), tokens, experts, topK,
             sigmoid != 0, coef, compute(), contextPool("zrt_moe_aux_loss", contextRanks));
}

void zrt_moe_aux_loss_grad(int32_t dtype, const void *dloss, const void *logits, const void *expert, void *dlogits,
                           int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid, double coef,
                           int64_t contextRanks) {
  GpuScope trace("zrt_moe_aux_loss_grad", compute());
  checkRouting("zrt_moe_aux_loss_grad", tokens, experts, topK);
  moeAuxLossGrad(dtype, static_cast<const float *>(dloss), logits, static_cast<const int32_t *>(expert), dlogits,
                 tokens, experts, topK, sigmoid != 0, coef, compute(), contextPool("zrt_moe_aux_loss_grad", contextRanks));
}

void zrt_moe_z_loss(int32_t dtype, const void *logits, void *loss, int64_t tokens, int64_t experts, double coef) {
  GpuScope trace("zrt_moe_z_loss", compute());
  moeZLoss(dtype, logits, static_cast<float *>(loss), tokens, experts, coef, compute());
}

void zrt_moe_z_loss_grad(int32_t dtype, const void *dloss, const void *logits, void *dlogits, int64_t tokens,
                         int64_t experts, double coef) {
  GpuScope trace("zrt_moe_z_loss_grad", compute());
  moeZLossGrad(dtype, static_cast<const float *>(dloss), logits, dlogits, tokens, experts, coef, compute());
}

} // extern "C"
