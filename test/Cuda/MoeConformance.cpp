// The CUDA conformance suite's Mixture-of-Experts kernels (ConformanceSupport.h): the routing (its
// choices, rows and offsets exactly; softmax and sigmoid scores, DeepSeek-V3's bias and group
// limit, a capacity that drops), dispatch, combine, the shared expert's gate, the grouped
// product over experts with no rows, one row and several tiles of rows, and the routers' losses,
// each against the CPU backend; the device's routing statistics and loads against the routing's
// own counts; and a corrupt routing, which must raise the flag and write nothing.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ConformanceSupport.h"
#include "cpu/MoeChecks.h"
#include "cuda/Moe.h"
#include "zrt/MoeLayout.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace conformance {
namespace {

std::vector<float> asFloats(const std::vector<int32_t> &v) { return std::vector<float>(v.begin(), v.end()); }
std::vector<int32_t> ints(const std::vector<unsigned char> &b) {
  std::vector<int32_t> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

/// Router logits whose E values in a row are distinct and well apart (a shuffled ladder, 0.25
/// apart, plus a small offset), so the k best are the same whatever rounding the two backends'
/// exponentials take: the test is of the choice and its layout, not of near-ties.
Tensor routerLogits(int32_t dtype, int64_t tokens, int64_t experts, std::mt19937 &rng) {
  Tensor t{dtype, std::vector<float>(tokens * experts)};
  std::vector<int> ladder(experts);
  std::uniform_real_distribution<float> offset(-0.5f, 0.5f);
  for (int64_t r = 0; r < tokens; ++r) {
    std::iota(ladder.begin(), ladder.end(), 0);
    std::shuffle(ladder.begin(), ladder.end(), rng);
    const float o = offset(rng);
    for (int64_t e = 0; e < experts; ++e) {
      const float v = o + 0.25f * static_cast<float>(ladder[e] - experts / 2);
      t.values[r * experts + e] = dtype == 1 ? float(zrt::bf16(v)) : v;
    }
  }
  return t;
}

struct RouteCase {
  const char *name;
  int64_t tokens, experts, topK;
  bool sigmoid, normalize, bias;
  double scale, capacityFactor;
  int64_t groups, topkGroups;
};

/// A scalar in device memory (the losses' d loss).
struct DeviceScalar : DeviceBuffer {
  explicit DeviceScalar(float v) : DeviceBuffer(std::vector<unsigned char>(4)) {
    cudaMemcpy(ptr, &v, 4, cudaMemcpyHostToDevice);
  }
};

void routeCase(std::mt19937 &rng, int32_t dt, const RouteCase &c) {
  const std::string tag = std::string(c.name) + " " + name(dt);
  const double tol = dt == 1 ? 2e-2 : 1e-5;
  const int64_t T = c.tokens, E = c.experts, K = c.topK, C = 70, choices = T * K;
  const int64_t rows = zrt::moeDispatchedRows(T, E, K, c.capacityFactor);
  const size_t eb = dt == 1 ? 2 : 4;
  Tensor logits = routerLogits(dt, T, E, rng), bias = random(dt, E, rng, 0.1f);
  auto lb = logits.bytes(), bb = bias.bytes();
  DeviceBuffer dLogits(lb), dBias(bb), weight(choices * eb), expert(choices * 4), row(choices * 4),
      offsets((E + 1) * 4), stats(sizeof(zrt::cuda::MoeDeviceStats)), loads(E * 8);
  std::vector<unsigned char> cWeight(choices * eb), cExpert(choices * 4), cRow(choices * 4), cOffsets((E + 1) * 4);
  zrt_moe_route(dt, lb.data(), c.bias ? bb.data() : nullptr, cWeight.data(), cExpert.data(), cRow.data(),
                cOffsets.data(), T, E, K, c.sigmoid, c.normalize, c.scale, c.capacityFactor, c.groups, c.topkGroups,
                0, nullptr);
  zrt::cuda::MoeRouteArgs a;
  a.tokens = T, a.experts = E, a.topK = K, a.sigmoid = c.sigmoid, a.renormalize = c.normalize, a.scale = c.scale;
  a.capacity = zrt::moeCapacity(T, E, K, c.capacityFactor), a.groups = c.groups, a.topkGroups = c.topkGroups;
  auto *devStats = static_cast<zrt::cuda::MoeDeviceStats *>(stats.ptr);
  auto *devLoads = static_cast<long long *>(loads.ptr);
  // Routed twice: the statistics and loads add up over routings.
  for (int twice = 0; twice < 2; ++twice)
    zrt::cuda::moeRoute(dt, dLogits.ptr, c.bias ? dBias.ptr : nullptr, weight.ptr, static_cast<int32_t *>(expert.ptr),
                        static_cast<int32_t *>(row.ptr), static_cast<int32_t *>(offsets.ptr), a, devStats, devLoads,
                        nullptr);
  const std::vector<int32_t> wantExpert = ints(cExpert), wantRow = ints(cRow), wantOffsets = ints(cOffsets);
  compare("moe_route experts " + tag, asFloats(ints(expert.host())), asFloats(wantExpert), 0);
  compare("moe_route rows " + tag, asFloats(ints(row.host())), asFloats(wantRow), 0);
  compare("moe_route offsets " + tag, asFloats(ints(offsets.host())), asFloats(wantOffsets), 0);
  compare("moe_route weights " + tag, decode(weight.host(), dt), decode(cWeight, dt), tol);

  // The statistics: two routings of these offsets, and each expert's choices twice.
  zrt::cuda::MoeDeviceStats got;
  std::memcpy(&got, stats.host().data(), sizeof got);
  int32_t fewest = wantOffsets[1], most = wantOffsets[1];
  for (int64_t e = 0; e < E; ++e)
    fewest = std::min(fewest, wantOffsets[e + 1] - wantOffsets[e]), most = std::max(most, wantOffsets[e + 1] - wantOffsets[e]);
  compare("moe_route statistics " + tag,
          {float(got.routings), float(got.experts), float(got.fewest), float(got.most), float(got.rows),
           float(got.dropped)},
          {2.0f, float(2 * E), float(fewest), float(most), float(2 * wantOffsets[E]),
           float(2 * (choices - wantOffsets[E]))},
          0);
  std::vector<float> wantLoads(E, 0.0f), gotLoads(E);
  for (int32_t e : wantExpert)
    wantLoads[e] += 2;
  std::vector<unsigned char> lh = loads.host();
  for (int64_t e = 0; e < E; ++e) {
    long long v;
    std::memcpy(&v, lh.data() + 8 * e, 8);
    gotLoads[e] = float(v);
  }
  compare("moe_route loads " + tag, gotLoads, wantLoads, 0);

  // The routing's gradient, from the CPU's routing on both sides.
  DeviceBuffer wantExpertDev(cExpert), wantRowDev(cRow), wantOffsetsDev(cOffsets);
  const auto *ex = static_cast<const int32_t *>(wantExpertDev.ptr), *rw = static_cast<const int32_t *>(wantRowDev.ptr);
  const auto *off = static_cast<const int32_t *>(wantOffsetsDev.ptr);
  Tensor dweight = random(dt, choices, rng);
  auto dwb = dweight.bytes();
  DeviceBuffer dDweight(dwb), dlogits(lb.size());
  std::vector<unsigned char> cDlogits(lb.size());
  zrt_moe_route_grad(dt, dwb.data(), lb.data(), cExpert.data(), cRow.data(), cDlogits.data(), T, E, K, c.sigmoid,
                     c.normalize, c.scale);
  zrt::cuda::moeRouteGrad(dt, dDweight.ptr, dLogits.ptr, ex, rw, dlogits.ptr, a, nullptr);
  compare("moe_route_grad " + tag, decode(dlogits.host(), dt), decode(cDlogits, dt), tol);

  // Dispatch and combine over the routing, and their gradients.
  DeviceBuffer bad(4);
  int *flag = static_cast<int *>(bad.ptr);
  Tensor x = random(dt, T * C, rng), ys = random(dt, rows * C, rng), dy = random(dt, T * C, rng);
  auto xb = x.bytes(), ysb = ys.bytes(), dyb = dy.bytes();
  DeviceBuffer dx(xb), dys(ysb), ddy(dyb), dW(cWeight), out(rows * C * eb), outT(T * C * eb), outK(choices * eb);
  std::vector<unsigned char> cOut(rows * C * eb), cOutT(T * C * eb), cOutK(choices * eb);
  // Rows past the kept ones (capacity) start dirty: the kernels must zero them.
  cudaMemset(out.ptr, 0x7f, rows * C * eb);
  zrt_moe_dispatch(dt, xb.data(), cRow.data(), cOut.data(), T, K, C, rows);
  zrt::cuda::moeDispatch(dt, dx.ptr, rw, out.ptr, T, K, C, rows, flag, nullptr);
  compare("moe_dispatch " + tag, decode(out.host(), dt), decode(cOut, dt), 0);
  zrt_moe_dispatch_grad(dt, ysb.data(), cRow.data(), cOutT.data(), T, K, C, rows);
  zrt::cuda::moeDispatchGrad(dt, dys.ptr, rw, outT.ptr, T, K, C, rows, flag, nullptr);
  compare("moe_dispatch_grad " + tag, decode(outT.host(), dt), decode(cOutT, dt), tol);
  zrt_moe_combine(dt, ysb.data(), cWeight.data(), cRow.data(), cOutT.data(), T, K, C, rows);
  zrt::cuda::moeCombine(dt, dys.ptr, dW.ptr, rw, outT.ptr, T, K, C, rows, flag, nullptr);
  compare("moe_combine " + tag, decode(outT.host(), dt), decode(cOutT, dt), tol);
  cudaMemset(out.ptr, 0x7f, rows * C * eb);
  zrt_moe_combine_grad(dt, dyb.data(), ysb.data(), cWeight.data(), cRow.data(), cOut.data(), cOutK.data(), T, K, C,
                       rows);
  zrt::cuda::moeCombineGrad(dt, ddy.ptr, dys.ptr, dW.ptr, rw, out.ptr, outK.ptr, T, K, C, rows, flag, nullptr);
  compare("moe_combine_grad dys " + tag, decode(out.host(), dt), decode(cOut, dt), tol);
  compare("moe_combine_grad dweight " + tag, decode(outK.host(), dt), decode(cOutK, dt), tol * 10);

  // The routers' losses over this routing's choices.
  DeviceBuffer loss(4);
  float cLoss = 0;
  const double coef = 0.02;
  auto lossOf = [&] {
    float v;
    std::memcpy(&v, loss.host().data(), 4);
    return v;
  };
  zrt_moe_aux_loss(dt, lb.data(), cExpert.data(), &cLoss, T, E, K, c.sigmoid, coef, 1);
  zrt::cuda::moeAuxLoss(dt, dLogits.ptr, ex, static_cast<float *>(loss.ptr), T, E, K, c.sigmoid, coef, nullptr);
  compare("moe_aux_loss " + tag, {lossOf()}, {cLoss}, 1e-5);
  const float seed = 0.7f;
  DeviceScalar dSeed(seed);
  zrt_moe_aux_loss_grad(dt, &seed, lb.data(), cExpert.data(), cDlogits.data(), T, E, K, c.sigmoid, coef, 1);
  zrt::cuda::moeAuxLossGrad(dt, static_cast<const float *>(dSeed.ptr), dLogits.ptr, ex, dlogits.ptr, T, E, K,
                            c.sigmoid, coef, nullptr);
  compare("moe_aux_loss_grad " + tag, decode(dlogits.host(), dt), decode(cDlogits, dt), tol);
  if (dt == 0) {
    // Pooled over context parts (the context-parallel loss): a stand-in pool where the other
    // part's statistics are 0.5 of this one's, through f32 as the context all-reduce moves them,
    // against the CPU backend's loss with the same pool.
    const int64_t parts = 2;
    zrt::cuda::MoeContextPool pool{parts, [](float *stats, int64_t count) {
                                     std::vector<float> h(count);
                                     cudaMemcpy(h.data(), stats, count * 4, cudaMemcpyDeviceToHost);
                                     for (float &v : h)
                                       v += 0.5f * v;
                                     cudaMemcpy(stats, h.data(), count * 4, cudaMemcpyHostToDevice);
                                   }};
    auto cpuPool = [](double *chose, double *mean, int64_t experts) {
      for (int64_t e = 0; e < experts; ++e) {
        const float c = static_cast<float>(chose[e]), m = static_cast<float>(mean[e]);
        chose[e] = c + 0.5f * c, mean[e] = m + 0.5f * m;
      }
    };
    const zrt::cpu::MoeRouting r = zrt::cpu::routingOf(T, E, K, c.sigmoid, 0, 1.0);
    const auto *hostLogits = reinterpret_cast<const float *>(lb.data());
    const auto *hostExpert = reinterpret_cast<const int32_t *>(cExpert.data());
    const float want = static_cast<float>(
        zrt::cpu::moeAuxLoss(hostLogits, hostExpert, r, coef, 0.0, static_cast<float *>(nullptr), cpuPool, parts));
    zrt::cuda::moeAuxLoss(dt, dLogits.ptr, ex, static_cast<float *>(loss.ptr), T, E, K, c.sigmoid, coef, nullptr,
                          pool);
    compare("moe_aux_loss pooled over 2 context parts " + tag, {lossOf()}, {want}, 1e-5);
    std::vector<float> wantGrad(T * E);
    zrt::cpu::moeAuxLoss(hostLogits, hostExpert, r, coef, double(seed), wantGrad.data(), cpuPool, parts);
    zrt::cuda::moeAuxLossGrad(dt, static_cast<const float *>(dSeed.ptr), dLogits.ptr, ex, dlogits.ptr, T, E, K,
                              c.sigmoid, coef, nullptr, pool);
    compare("moe_aux_loss_grad pooled over 2 context parts " + tag, decode(dlogits.host(), dt), wantGrad, tol);
  }
  zrt_moe_z_loss(dt, lb.data(), &cLoss, T, E, coef);
  zrt::cuda::moeZLoss(dt, dLogits.ptr, static_cast<float *>(loss.ptr), T, E, coef, nullptr);
  compare("moe_z_loss " + tag, {lossOf()}, {cLoss}, 1e-5);
  zrt_moe_z_loss_grad(dt, &seed, lb.data(), cDlogits.data(), T, E, coef);
  zrt::cuda::moeZLossGrad(dt, static_cast<const float *>(dSeed.ptr), dLogits.ptr, dlogits.ptr, T, E, coef, nullptr);
  compare("moe_z_loss_grad " + tag, decode(dlogits.host(), dt), decode(cDlogits, dt), tol);
  compare("moe kernels raised no flag " + tag, {float(flagOf(bad))}, {0.0f}, 0);
  (void)off;
}

/// The grouped product and its gradient at offsets the test sets: an expert without rows, one
/// with one row, one over three tiles of 64, rows past the last expert's (capacity mode) that
/// must come out zero; both weight layouts.
void groupedProduct(std::mt19937 &rng, int32_t dt) {
  const double tol = dt == 1 ? 2e-2 : 1e-4;
  const int64_t E = 6, K = 70, N = 90, rows = 260;
  const std::vector<int32_t> offsets = {0, 0, 1, 150, 151, 200, 250};
  const size_t eb = dt == 1 ? 2 : 4;
  Tensor xs = random(dt, rows * K, rng), w = random(dt, E * K * N, rng), dout = random(dt, rows * N, rng);
  auto xb = xs.bytes(), wb = w.bytes(), db = dout.bytes(), ob = raw(offsets);
  DeviceBuffer dxs(xb), dw(wb), ddout(db), doff(ob), out(rows * N * eb), gx(rows * K * eb), gw(E * K * N * eb),
      bad(4);
  std::vector<unsigned char> cOut(rows * N * eb), cGx(rows * K * eb), cGw(E * K * N * eb);
  const auto *off = static_cast<const int32_t *>(doff.ptr);
  int *flag = static_cast<int *>(bad.ptr);
  for (int32_t t : {0, 1}) {
    const std::string tag = std::string(t ? " transposed " : " ") + name(dt);
    cudaMemset(out.ptr, 0x7f, rows * N * eb);
    cudaMemset(gx.ptr, 0x7f, rows * K * eb);
    cudaMemset(gw.ptr, 0x7f, E * K * N * eb);
    zrt_grouped_matmul(dt, xb.data(), wb.data(), ob.data(), cOut.data(), rows, E, K, N, t);
    zrt::cuda::groupedMatmul(dt, dxs.ptr, dw.ptr, off, out.ptr, rows, E, K, N, t, flag, nullptr);
    compare("grouped_matmul" + tag, decode(out.host(), dt), decode(cOut, dt), tol);
    zrt_grouped_matmul_grad(dt, db.data(), xb.data(), wb.data(), ob.data(), cGx.data(), cGw.data(), rows, E, K, N, t);
    zrt::cuda::groupedMatmulGrad(dt, ddout.ptr, dxs.ptr, dw.ptr, off, gx.ptr, gw.ptr, rows, E, K, N, t, flag, nullptr);
    compare("grouped_matmul_grad dxs" + tag, decode(gx.host(), dt), decode(cGx, dt), tol);
    compare("grouped_matmul_grad dw" + tag, decode(gw.host(), dt), decode(cGw, dt), tol * 2);
  }
  compare(std::string("grouped_matmul raised no flag ") + name(dt), {float(flagOf(bad))}, {0.0f}, 0);
}

/// A routing's row past the dispatched rows, offsets past them, and offsets that decrease: the
/// flag is raised and no row outside the tensor is written (a guard past its end stays intact).
void corruptRouting() {
  const int64_t T = 4, K = 2, C = 8, rows = 8, E = 2, guard = 16;
  std::vector<int32_t> row = {0, 1, 2, 3, 4, 5, 6, 8}; // the last choice one past the rows
  auto rb = raw(row);
  Tensor x{0, std::vector<float>(T * C, 1.0f)};
  DeviceBuffer dx(x.bytes()), drow(rb), xs((rows * C + guard) * 4), bad(4);
  zrt::cuda::moeDispatch(0, dx.ptr, static_cast<const int32_t *>(drow.ptr), xs.ptr, T, K, C, rows,
                         static_cast<int *>(bad.ptr), nullptr);
  std::vector<float> got = decode(xs.host(), 0);
  compare("moe_dispatch: a row past the rows raises the flag", {float(flagOf(bad))}, {1.0f}, 0);
  compare("moe_dispatch: and writes nothing past the rows",
          std::vector<float>(got.begin() + rows * C, got.end()), std::vector<float>(guard, 0.0f), 0);
  for (const std::vector<int32_t> &offsets : {std::vector<int32_t>{0, 5, 9}, std::vector<int32_t>{0, 6, 3}}) {
    auto ob = raw(offsets);
    DeviceBuffer doff(ob), w(E * C * C * 4), out((rows * C + guard) * 4), flag(4);
    zrt::cuda::groupedMatmul(0, xs.ptr, w.ptr, static_cast<const int32_t *>(doff.ptr), out.ptr, rows, E, C, C, false,
                             static_cast<int *>(flag.ptr), nullptr);
    got = decode(out.host(), 0);
    compare("grouped_matmul: offsets " + std::to_string(offsets[1]) + ", " + std::to_string(offsets[2]) +
                " of 8 rows raise the flag",
            {float(flagOf(flag))}, {1.0f}, 0);
    compare("grouped_matmul: and write nothing past the rows", std::vector<float>(got.begin() + rows * C, got.end()),
            std::vector<float>(guard, 0.0f), 0);
  }
}

} // namespace

void moe(std::mt19937 &rng) {
  std::printf("Mixture-of-Experts kernels\n");
  const RouteCase cases[] = {
      // Mixtral: softmax, top-2 renormalized, dropless.
      {"mixtral", 203, 8, 2, false, true, false, 1.0, 0.0, 1, 1},
      // Qwen2-MoE / OLMoE without renormalizing, a capacity that drops (GShard's order).
      {"capacity", 203, 8, 2, false, false, false, 1.0, 1.0, 1, 1},
      // DeepSeek-V3: sigmoid scores, the balancing bias, 4 groups keeping 2, top-4, scale 2.5.
      {"deepseek", 130, 16, 4, true, true, true, 2.5, 0.0, 4, 2},
      // A single token over more threads than tokens, and one expert chosen.
      {"top-1", 1, 4, 1, false, true, false, 1.0, 0.0, 1, 1},
  };
  for (int32_t dt : {0, 1}) {
    for (const RouteCase &c : cases)
      routeCase(rng, dt, c);
    groupedProduct(rng, dt);
    Tensor shared = random(dt, 37 * 300, rng), gate = random(dt, 37, rng), dy = random(dt, 37 * 300, rng);
    auto sb = shared.bytes(), gb = gate.bytes(), db = dy.bytes();
    DeviceBuffer ds(sb), dg(gb), ddy(db), out(sb.size()), out2(gb.size());
    std::vector<unsigned char> cOut(sb.size()), cOut2(gb.size());
    const double tol = dt == 1 ? 2e-2 : 1e-5;
    zrt_moe_shared_gate(dt, sb.data(), gb.data(), cOut.data(), 37, 300);
    zrt::cuda::moeSharedGate(dt, ds.ptr, dg.ptr, out.ptr, 37, 300, nullptr);
    compare(std::string("moe_shared_gate ") + name(dt), decode(out.host(), dt), decode(cOut, dt), tol);
    zrt_moe_shared_gate_grad(dt, db.data(), sb.data(), gb.data(), cOut.data(), cOut2.data(), 37, 300);
    zrt::cuda::moeSharedGateGrad(dt, ddy.ptr, ds.ptr, dg.ptr, out.ptr, out2.ptr, 37, 300, nullptr);
    compare(std::string("moe_shared_gate_grad dshared ") + name(dt), decode(out.host(), dt), decode(cOut, dt), tol);
    compare(std::string("moe_shared_gate_grad dgate ") + name(dt), decode(out2.host(), dt), decode(cOut2, dt),
            tol * 10);
  }
  corruptRouting();
}

} // namespace conformance
