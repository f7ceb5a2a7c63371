// The Mixture-of-Experts entry points of zrt_abi.def for the CPU backend (runtime/cpu/Moe.h), but
// the routers' losses (MoeLossAbi.cpp: under context parallelism they reduce over the mesh, and
// train.bin's own code, which links the routing statistics from here, must not pull that in):
// check the dtype and the routing's integers, then call the typed kernel. A row or an offset
// outside the dispatched rows (a corrupt routing) stops the process naming the call, before
// any kernel writes through it.
#include "zrt/zrt.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/Error.h"
#include "core/Trace.h"
#include "cpu/Dispatch.h"
#include "cpu/Moe.h"
#include "cpu/MoeChecks.h"

using namespace zrt;
using namespace zrt::cpu;

namespace {

/// Each of the tokens x top_k choices goes to a row in [0, rows), or -1 (dropped), and the
/// dispatched tensor has at most a row per choice.
void checkRows(const char *call, const void *row, int64_t tokens, int64_t topK, int64_t rows) {
  checkDispatchedRows(call, tokens, topK, rows);
  const auto *r = static_cast<const int32_t *>(row);
  for (int64_t i = 0; i < tokens * topK; ++i)
    if (r[i] < -1 || r[i] >= rows)
      fatal(call, "choice %lld goes to row %d, outside the %lld dispatched rows", static_cast<long long>(i), r[i],
            static_cast<long long>(rows));
}

/// offsets [experts + 1] run from 0 to at most rows without decreasing.
void checkOffsets(const char *call, const void *offsets, int64_t experts, int64_t rows) {
  const auto *o = static_cast<const int32_t *>(offsets);
  if (o[0] != 0 || o[experts] > rows)
    fatal(call, "the experts' offsets run from %d to %d: they must run from 0 to at most the %lld rows", o[0],
          o[experts], static_cast<long long>(rows));
  for (int64_t e = 0; e < experts; ++e)
    if (o[e + 1] < o[e])
      fatal(call, "expert %lld's rows end (%d) before they start (%d)", static_cast<long long>(e), o[e + 1], o[e]);
}

/// What the routings since the last zrt_moe_take_stats did (zrt_abi.def).
struct RoutingStats {
  std::mutex lock;
  int64_t routings = 0, experts = 0, fewest = 0, most = 0, rows = 0, dropped = 0;
};
RoutingStats &routingStats() {
  static RoutingStats stats;
  return stats;
}

/// The choices each expert got from the counted routings that chose by a bias parameter, by its
/// name, since the last zrt_moe_take_load of it (the aux-loss-free balancing's loads).
struct ExpertLoads {
  std::mutex lock;
  std::map<std::string, std::vector<int64_t>> byParam;
};
ExpertLoads &expertLoads() {
  static ExpertLoads loads;
  return loads;
}

void recordLoad(const char *biasParam, const int32_t *expert, int64_t choices, int64_t experts) {
  ExpertLoads &l = expertLoads();
  std::lock_guard<std::mutex> hold(l.lock);
  std::vector<int64_t> &load = l.byParam[biasParam];
  if (load.empty())
    load.assign(static_cast<size_t>(experts), 0);
  if (static_cast<int64_t>(load.size()) != experts)
    fatal("zrt_moe_route", "bias '%s' chooses among %lld experts here and %zu elsewhere", biasParam,
          static_cast<long long>(experts), load.size());
  for (int64_t i = 0; i < choices; ++i)
    ++load[static_cast<size_t>(expert[i])];
}

void recordRouting(const int32_t *offsets, int64_t experts, int64_t dropped) {
  int64_t fewest = offsets[1] - offsets[0], most = fewest;
  for (int64_t e = 1; e < experts; ++e) {
    fewest = std::min<int64_t>(fewest, offsets[e + 1] - offsets[e]);
    most = std::max<int64_t>(most, offsets[e + 1] - offsets[e]);
  }
  RoutingStats &s = routingStats();
  std::lock_guard<std::mutex> hold(s.lock);
  s.fewest = s.routings ? std::min(s.fewest, fewest) : fewest;
  s.most = s.routings ? std::max(s.most, most) : most;
  ++s.routings;
  s.experts += experts;
  s.rows += offsets[experts];
  s.dropped += dropped;
}

} // namespace

extern "C" {

void zrt_moe_take_stats(void *out) {
  RoutingStats &s = routingStats();
  std::lock_guard<std::mutex> hold(s.lock);
  int64_t *o = static_cast<int64_t *>(out);
  o[0] = s.routings, o[1] = s.experts, o[2] = s.fewest, o[3] = s.most, o[4] = s.rows, o[5] = s.dropped;
  s.routings = s.experts = s.fewest = s.most = s.rows = s.dropped = 0;
}

void zrt_moe_take_load(const void *biasParam, void *out, int64_t experts) {
  ExpertLoads &l = expertLoads();
  std::lock_guard<std::mutex> hold(l.lock);
  auto *o = static_cast<float *>(out);
  std::fill(o, o + experts, 0.0f);
  auto it = l.byParam.find(static_cast<const char *>(biasParam));
  if (it == l.byParam.end())
    return;
  if (static_cast<int64_t>(it->second.size()) != experts)
    fatal("zrt_moe_take_load", "bias '%s' has %zu experts' loads, asked for %lld",
          static_cast<const char *>(biasParam), it->second.size(), static_cast<long long>(experts));
  for (int64_t e = 0; e < experts; ++e)
    o[e] = static_cast<float>(it->second[static_cast<size_t>(e)]);
  std::fill(it->second.begin(), it->second.end(), 0);
}

void zrt_moe_route(int32_t dtype, const void *logits, const void *bias, void *weight, void *expert, void *row,
                   void *offsets, int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid, int32_t normalize,
                   double scale, double capacityFactor, int64_t groups, int64_t topkGroups, int32_t counted,
                   const void *biasParam) {
  TraceScope trace("zrt_moe_route", TraceTrack::Compute);
  checkRouting("zrt_moe_route", tokens, experts, topK);
  checkRouteOptions("zrt_moe_route", experts, topK, capacityFactor, groups, topkGroups);
  MoeRouting r = routingOf(tokens, experts, topK, sigmoid, normalize, scale, capacityFactor);
  r.groups = groups;
  r.topkGroups = topkGroups;
  int64_t dropped = 0;
  ZRT_TYPED("zrt_moe_route", dtype,
            dropped = moeRoute(in<T>(logits), in<T>(bias), r, out<int32_t>(expert), out<T>(weight),
                               out<int32_t>(offsets), out<int32_t>(row)));
  if (!counted)
    return;
  recordRouting(static_cast<const int32_t *>(offsets), experts, dropped);
  if (biasParam) // every choice, kept or dropped: the demand on each expert
    recordLoad(static_cast<const char *>(biasParam), static_cast<const int32_t *>(expert), tokens * topK, experts);
}

void zrt_moe_route_grad(int32_t dtype, const void *dweight, const void *logits, const void *expert, const void *row,
                        void *dlogits, int64_t tokens, int64_t experts, int64_t topK, int32_t sigmoid,
                        int32_t normalize, double scale) {
  TraceScope trace("zrt_moe_route_grad", TraceTrack::Compute);
  checkRouting("zrt_moe_route_grad", tokens, experts, topK);
  checkExperts("zrt_moe_route_grad", expert, tokens * topK, experts);
  const MoeRouting r = routingOf(tokens, experts, topK, sigmoid, normalize, scale);
  ZRT_TYPED("zrt_moe_route_grad", dtype,
            moeRouteGrad(in<T>(dweight), in<T>(logits), in<int32_t>(expert), in<int32_t>(row), r, out<T>(dlogits)));
}

void zrt_moe_dispatch(int32_t dtype, const void *x, const void *row, void *xs, int64_t tokens, int64_t topK,
                      int64_t cols, int64_t rows) {
  TraceScope trace("zrt_moe_dispatch", TraceTrack::Compute);
  checkRows("zrt_moe_dispatch", row, tokens, topK, rows);
  ZRT_TYPED("zrt_moe_dispatch", dtype,
            moeDispatch(in<T>(x), in<int32_t>(row), tokens, topK, cols, rows, out<T>(xs)));
}

void zrt_moe_dispatch_grad(int32_t dtype, const void *dxs, const void *row, void *dx, int64_t tokens, int64_t topK,
                           int64_t cols, int64_t rows) {
  TraceScope trace("zrt_moe_dispatch_grad", TraceTrack::Compute);
  checkRows("zrt_moe_dispatch_grad", row, tokens, topK, rows);
  ZRT_TYPED("zrt_moe_dispatch_grad", dtype,
            moeDispatchGrad(in<T>(dxs), in<int32_t>(row), tokens, topK, cols, out<T>(dx)));
}

void zrt_moe_combine(int32_t dtype, const void *ys, const void *weight, const void *row, void *y, int64_t tokens,
                     int64_t topK, int64_t cols, int64_t rows) {
  TraceScope trace("zrt_moe_combine", TraceTrack::Compute);
  checkRows("zrt_moe_combine", row, tokens, topK, rows);
  ZRT_TYPED("zrt_moe_combine", dtype,
            moeCombine(in<T>(ys), in<T>(weight), in<int32_t>(row), tokens, topK, cols, out<T>(y)));
}

void zrt_moe_combine_grad(int32_t dtype, const void *dy, const void *ys, const void *weight, const void *row,
                          void *dys, void *dweight, int64_t tokens, int64_t topK, int64_t cols, int64_t rows) {
  TraceScope trace("zrt_moe_combine_grad", TraceTrack::Compute);
  checkRows("zrt_moe_combine_grad", row, tokens, topK, rows);
  ZRT_TYPED("zrt_moe_combine_grad", dtype,
            moeCombineGrad(in<T>(dy), in<T>(ys), in<T>(weight), in<int32_t>(row), tokens, topK, cols, rows,
                           out<T>(dys), out<T>(dweight)));
}

void zrt_moe_shared_gate(int32_t dtype, const void *shared, const void *gate, void *o, int64_t tokens, int64_t cols) {
  TraceScope trace("zrt_moe_shared_gate", TraceTrack::Compute);
  ZRT_TYPED("zrt_moe_shared_gate", dtype, moeSharedGate(in<T>(shared), in<T>(gate), tokens, cols, out<T>(o)));
}

void zrt_moe_shared_gate_grad(int32_t dtype, const void *dy, const void *shared, const void *gate, void *dshared,
                              void *dgate, int64_t tokens, int64_t cols) {
  TraceScope trace("zrt_moe_shared_gate_grad", TraceTrack::Compute);
  ZRT_TYPED("zrt_moe_shared_gate_grad", dtype,
            moeSharedGateGrad(in<T>(dy), in<T>(shared), in<T>(gate), tokens, cols, out<T>(dshared), out<T>(dgate)));
}

void zrt_grouped_matmul(int32_t dtype, const void *xs, const void *w, const void *offsets, void *o, int64_t rows,
                        int64_t experts, int64_t k, int64_t n, int32_t transposeRhs) {
  TraceScope trace("zrt_grouped_matmul", TraceTrack::Compute);
  checkOffsets("zrt_grouped_matmul", offsets, experts, rows);
  ZRT_TYPED("zrt_grouped_matmul", dtype,
            groupedMatmul(in<T>(xs), in<T>(w), in<int32_t>(offsets), experts, rows, k, n, out<T>(o),
                          transposeRhs != 0));
}

void zrt_grouped_matmul_grad(int32_t dtype, const void *dout, const void *xs, const void *w, const void *offsets,
                             void *dxs, void *dw, int64_t rows, int64_t experts, int64_t k, int64_t n,
                             int32_t transposeRhs) {
  TraceScope trace("zrt_grouped_matmul_grad", TraceTrack::Compute);
  checkOffsets("zrt_grouped_matmul_grad", offsets, experts, rows);
  ZRT_TYPED("zrt_grouped_matmul_grad", dtype,
            groupedMatmulGrad(in<T>(dout), in<T>(xs), in<T>(w), in<int32_t>(offsets), experts, rows, k, n,
                              out<T>(dxs), out<T>(dw), transposeRhs != 0));
}

} // extern "C"
