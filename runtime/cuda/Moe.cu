// The routing, dispatch, combine and shared-expert gate of a Mixture-of-Experts layer on the
// CUDA backend (Moe.h): the CPU backend's runtime/cpu/Moe.h on the device. The routing's choice
// runs a thread per token (a token's k best of E in registers); its layout a block per expert,
// each placing that expert's choices in priority order by a block-wide prefix count, so no
// atomics decide an order and a routing gives the same rows on every run. The grouped product is
// GroupedMatmul.cu's, the routers' losses MoeLoss.cu's.
#include <cuda_bf16.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Moe.h"
#include "cuda/MoeCommon.cuh"
#include "cuda/RowReduce.cuh"
#include "cuda/Scratch.h"

namespace zrt::cuda {
namespace {

using namespace moe;

/// The k best of n candidates `allowed` by key (descending, ties to the lower index) into out[k];
/// returns how many. cpu/Moe.h's topKOf, the keys kept beside the indices.
template <class Key, class Allowed>
__device__ int64_t topKOf(int64_t n, int64_t k, Key key, Allowed allowed, int32_t *out, float *outKey) {
  int64_t have = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (!allowed(e))
      continue;
    const float ke = key(e);
    int64_t at = have;
    while (at > 0 && outKey[at - 1] < ke)
      --at;
    if (at >= k)
      continue;
    for (int64_t i = have < k - 1 ? have : k - 1; i > at; --i)
      out[i] = out[i - 1], outKey[i] = outKey[i - 1];
    out[at] = static_cast<int32_t>(e);
    outKey[at] = ke;
    have = have + 1 < k ? have + 1 : k;
  }
  return have;
}

/// Each token's k experts (score plus bias; DeepSeek-V3's group limit), descending.
template <class T> __global__ void chooseExperts(const T *logits, const T *bias, int32_t *expert, MoeRouteArgs a) {
  ZRT_FOR_EACH(t, a.tokens) {
    const T *l = logits + t * a.experts;
    TokenScores s;
    s.of(l, a.experts, a.sigmoid);
    auto key = [&](int64_t e) { return s(float(l[e])) + (bias ? float(bias[e]) : 0.0f); };
    auto every = [](int64_t) { return true; };
    int32_t chosen[kMoeMaxTopK];
    float chosenKey[kMoeMaxTopK];
    if (a.groups <= 1) {
      topKOf(a.experts, a.topK, key, every, chosen, chosenKey);
    } else {
      const int64_t perGroup = a.experts / a.groups;
      float groupScore[kMoeMaxGroups];
      for (int64_t g = 0; g < a.groups; ++g) {
        int32_t two[2];
        float twoKey[2];
        const int64_t n = topKOf(perGroup, 2, [&](int64_t i) { return key(g * perGroup + i); }, every, two, twoKey);
        groupScore[g] = 0;
        for (int64_t i = 0; i < n; ++i)
          groupScore[g] += twoKey[i];
      }
      int32_t best[kMoeMaxGroups];
      float bestKey[kMoeMaxGroups];
      const int64_t kept = topKOf(a.groups, a.topkGroups, [&](int64_t g) { return groupScore[g]; }, every, best,
                                  bestKey);
      auto inKeptGroup = [&](int64_t e) {
        for (int64_t i = 0; i < kept; ++i)
          if (best[i] == e / perGroup)
            return true;
        return false;
      };
      topKOf(a.experts, a.topK, key, inKeptGroup, chosen, chosenKey);
    }
    for (int64_t j = 0; j < a.topK; ++j)
      expert[t * a.topK + j] = chosen[j];
  }
}

/// Block e: each choice of expert e its place among e's choices in priority order (every first
/// choice in token order, then every second, ...) into place[i], and e's count into count[e].
__global__ void placeChoices(const int32_t *expert, int32_t *place, int32_t *count, int64_t tokens, int64_t topK) {
  __shared__ int scan[2][kScanThreads];
  const int32_t e = static_cast<int32_t>(blockIdx.x);
  const int64_t choices = tokens * topK;
  int base = 0;
  for (int64_t chunk = 0; chunk < choices; chunk += kScanThreads) {
    const int64_t p = chunk + threadIdx.x;             // the priority order's p-th choice:
    const int64_t i = p < choices ? (p % tokens) * topK + p / tokens : 0; // token p % T's (p / T)-th
    const bool mine = p < choices && expert[i] == e;
    int in = 0;
    scan[0][threadIdx.x] = mine;
    __syncthreads();
    for (int step = 1; step < kScanThreads; step *= 2) { // inclusive prefix count (Hillis-Steele)
      const int v = scan[in][threadIdx.x] + (threadIdx.x >= step ? scan[in][threadIdx.x - step] : 0);
      scan[1 - in][threadIdx.x] = v;
      in = 1 - in;
      __syncthreads();
    }
    if (mine)
      place[i] = base + scan[in][threadIdx.x] - 1;
    base += scan[in][kScanThreads - 1];
    __syncthreads(); // every thread read the total before the next chunk overwrites it
  }
  if (threadIdx.x == 0)
    count[e] = base;
}

/// One thread: the counts (in offsets[1..E]) to offsets, at most `capacity` an expert; the
/// statistics and loads.
__global__ void finishOffsets(int32_t *offsets, int64_t experts, int64_t choices, int64_t capacity,
                              MoeDeviceStats *stats, long long *loads) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  long long fewest = LLONG_MAX, most = 0;
  offsets[0] = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int32_t demand = offsets[e + 1];
    if (loads)
      loads[e] += demand;
    const int32_t kept = capacity > 0 && demand > capacity ? static_cast<int32_t>(capacity) : demand;
    fewest = kept < fewest ? kept : fewest;
    most = kept > most ? kept : most;
    offsets[e + 1] = offsets[e] + kept;
  }
  if (!stats)
    return;
  stats->fewest = stats->routings ? (fewest < stats->fewest ? fewest : stats->fewest) : fewest;
  stats->most = stats->routings ? (most > stats->most ? most : stats->most) : most;
  ++stats->routings;
  stats->experts += experts;
  stats->rows += offsets[experts];
  stats->dropped += choices - offsets[experts];
}

/// Each token's rows (its places moved to its experts' offsets; -1 past the capacity) and the
/// weights of its kept choices, renormalized over them and scaled.
template <class T>
__global__ void finishChoices(const T *logits, const int32_t *expert, const int32_t *offsets, int32_t *row, T *weight,
                              MoeRouteArgs a) {
  ZRT_FOR_EACH(t, a.tokens) {
    const T *l = logits + t * a.experts;
    TokenScores s;
    s.of(l, a.experts, a.sigmoid);
    float sum = 0;
    for (int64_t j = 0; j < a.topK; ++j) {
      const int64_t i = t * a.topK + j;
      const bool kept = a.capacity == 0 || row[i] < a.capacity;
      row[i] = kept ? row[i] + offsets[expert[i]] : -1;
      if (kept)
        sum += s(float(l[expert[i]]));
    }
    for (int64_t j = 0; j < a.topK; ++j) {
      const int64_t i = t * a.topK + j;
      float w = row[i] >= 0 ? s(float(l[expert[i]])) : 0.0f;
      if (a.renormalize && sum > 0.0f)
        w /= sum;
      weight[i] = T(w * static_cast<float>(a.scale));
    }
  }
}

template <class T>
__global__ void routeGradTokens(const T *dweight, const T *logits, const int32_t *expert, const int32_t *row,
                                T *dlogits, MoeRouteArgs a) {
  ZRT_FOR_EACH(t, a.tokens) {
    const T *l = logits + t * a.experts;
    TokenScores s;
    s.of(l, a.experts, a.sigmoid);
    const int32_t *chosen = expert + t * a.topK, *rows = row + t * a.topK;
    const T *dw = dweight + t * a.topK;
    float sum = 0, dot = 0;
    for (int64_t j = 0; j < a.topK; ++j)
      if (rows[j] >= 0) {
        const float sj = s(float(l[chosen[j]]));
        sum += sj;
        dot += float(dw[j]) * sj;
      }
    // d score of each kept choice (w_j = c s_j / S), then through the softmax or the sigmoids.
    const float c = static_cast<float>(a.scale);
    float ds[kMoeMaxTopK], inner = 0;
    for (int64_t j = 0; j < a.topK; ++j) {
      const float g = float(dw[j]);
      ds[j] = rows[j] < 0 ? 0.0f : a.renormalize ? c * (g / sum - dot / (sum * sum)) : c * g;
      inner += ds[j] * s(float(l[chosen[j]]));
    }
    for (int64_t e = 0; e < a.experts; ++e) {
      float dse = 0;
      for (int64_t j = 0; j < a.topK; ++j)
        if (chosen[j] == e)
          dse = ds[j];
      const float se = s(float(l[e]));
      dlogits[t * a.experts + e] = T(a.sigmoid ? dse * se * (1.0f - se) : se * (dse - inner));
    }
  }
}

/// A choice's row, or -1 where it is dropped or outside [0, rows) (then `*bad` is set).
__device__ int64_t rowOfChoice(const int32_t *row, int64_t i, int64_t rows, int *bad) {
  const int32_t r = row[i];
  if (r < -1 || r >= rows) {
    *bad = 1;
    return -1;
  }
  return r;
}

/// `*kept` = how many of the choices have a row.
__global__ void countKept(const int32_t *row, int64_t choices, int *kept) {
  int mine = 0;
  for (int64_t i = threadIdx.x; i < choices; i += kScanThreads)
    mine += row[i] >= 0;
  mine = blockTreeSum(mine);
  if (threadIdx.x == 0)
    *kept = mine;
}

template <class T>
__global__ void dispatchRows(const T *x, const int32_t *row, T *xs, int64_t topK, int64_t cols, int64_t choices,
                             int64_t rows, int *bad) {
  ZRT_FOR_EACH(idx, choices * cols) {
    const int64_t i = idx / cols, c = idx % cols, r = rowOfChoice(row, i, rows, bad);
    if (r >= 0)
      xs[r * cols + c] = x[(i / topK) * cols + c];
  }
}

/// y[t, c] = sum_j weight[t, j] ys[row[t, j], c] over the kept choices, in j order (no weight:
/// the dispatch's gradient, each kept row's sum).
template <class T>
__global__ void gatherRows(const T *ys, const T *weight, const int32_t *row, T *y, int64_t tokens, int64_t topK,
                           int64_t cols, int64_t rows, int *bad) {
  ZRT_FOR_EACH(idx, tokens * cols) {
    const int64_t t = idx / cols, c = idx % cols;
    float sum = 0;
    for (int64_t j = 0; j < topK; ++j)
      if (const int64_t r = rowOfChoice(row, t * topK + j, rows, bad); r >= 0)
        sum += (weight ? float(weight[t * topK + j]) : 1.0f) * float(ys[r * cols + c]);
    y[idx] = T(sum);
  }
}

/// Block i (kRowThreads): choice i's dys row = weight dy[t] and dweight = <dy[t], ys[row]>.
template <class T>
__global__ void combineGradChoices(const T *dy, const T *ys, const T *weight, const int32_t *row, T *dys, T *dweight,
                                   int64_t topK, int64_t cols, int64_t rows, int *bad) {
  const int64_t i = blockIdx.x;
  __shared__ int64_t r;
  if (threadIdx.x == 0)
    r = rowOfChoice(row, i, rows, bad);
  __syncthreads();
  if (r < 0) {
    if (threadIdx.x == 0)
      dweight[i] = T(0.0f);
    return;
  }
  const T *g = dy + (i / topK) * cols, *y = ys + r * cols;
  const float w = float(weight[i]);
  float dot = 0;
  ZRT_ROW_COLUMNS(c, cols) {
    dys[r * cols + c] = T(w * float(g[c]));
    dot += float(g[c]) * float(y[c]);
  }
  dot = blockSum(dot);
  if (threadIdx.x == 0)
    dweight[i] = T(dot);
}

template <class T> __global__ void sharedGateRows(const T *shared, const T *gate, T *y, int64_t tokens, int64_t cols) {
  ZRT_FOR_EACH(i, tokens * cols) {
    const float s = 1.0f / (1.0f + expf(-float(gate[i / cols])));
    y[i] = T(float(shared[i]) * s);
  }
}

template <class T>
__global__ void sharedGateGradRows(const T *dy, const T *shared, const T *gate, T *dshared, T *dgate, int64_t cols) {
  const int64_t t = blockIdx.x;
  const float s = 1.0f / (1.0f + expf(-float(gate[t])));
  float dot = 0;
  ZRT_ROW_COLUMNS(c, cols) {
    const float g = float(dy[t * cols + c]);
    dot += g * float(shared[t * cols + c]);
    dshared[t * cols + c] = T(g * s);
  }
  dot = blockSum(dot);
  if (threadIdx.x == 0)
    dgate[t] = T(dot * s * (1.0f - s));
}

/// The GPU's own limits (the routing's sizes are core/MoeRouteChecks.h's, checked by MoeAbi.cu).
void checkRoute(const char *call, const MoeRouteArgs &a) {
  if (a.topK > kMoeMaxTopK)
    fatal(call, "top_k %lld: at most %lld on the GPU", static_cast<long long>(a.topK),
          static_cast<long long>(kMoeMaxTopK));
  if (a.groups > kMoeMaxGroups)
    fatal(call, "%lld expert groups: at most %lld on the GPU", static_cast<long long>(a.groups),
          static_cast<long long>(kMoeMaxGroups));
  if (a.tokens * a.topK > INT32_MAX)
    fatal(call, "%lld choices: the rows are 32-bit", static_cast<long long>(a.tokens * a.topK));
}

} // namespace

void moeRoute(int32_t dtype, const void *logits, const void *bias, void *weight, int32_t *expert, int32_t *row,
              int32_t *offsets, const MoeRouteArgs &a, MoeDeviceStats *stats, long long *loads, cudaStream_t s) {
  checkRoute("zrt_moe_route", a);
  if (a.tokens == 0) {
    ZRT_CUDA_CHECK(cudaMemsetAsync(offsets, 0, (a.experts + 1) * sizeof(int32_t), s));
    return;
  }
  ZRT_CUDA_TYPED("zrt_moe_route", dtype, ({
    chooseExperts<<<blocks(a.tokens), kThreads, 0, s>>>(static_cast<const T *>(logits), static_cast<const T *>(bias),
                                                         expert, a);
    // The places into row, the counts into offsets[1..E], then both made final.
    placeChoices<<<tiles("zrt_moe_route", a.experts, 1), kScanThreads, 0, s>>>(expert, row, offsets + 1, a.tokens,
                                                                                a.topK);
    finishOffsets<<<1, 1, 0, s>>>(offsets, a.experts, a.tokens * a.topK, a.capacity, stats, loads);
    finishChoices<<<blocks(a.tokens), kThreads, 0, s>>>(static_cast<const T *>(logits), expert, offsets, row,
                                                         static_cast<T *>(weight), a);
  }));
}

void moeRouteGrad(int32_t dtype, const void *dweight, const void *logits, const int32_t *expert, const int32_t *row,
                  void *dlogits, const MoeRouteArgs &a, cudaStream_t s) {
  checkRoute("zrt_moe_route_grad", a);
  if (a.tokens == 0)
    return;
  ZRT_CUDA_TYPED("zrt_moe_route_grad", dtype,
                 (routeGradTokens<<<blocks(a.tokens), kThreads, 0, s>>>(
                     static_cast<const T *>(dweight), static_cast<const T *>(logits), expert, row,
                     static_cast<T *>(dlogits), a)));
}

void moeDispatch(int32_t dtype, const void *x, const int32_t *row, void *xs, int64_t tokens, int64_t topK,
                 int64_t cols, int64_t rows, int *bad, cudaStream_t s) {
  int *kept = reinterpret_cast<int *>(scratchFloats(1));
  ZRT_CUDA_TYPED("zrt_moe_dispatch", dtype, ({
    dispatchRows<<<blocks(tokens * topK * cols), kThreads, 0, s>>>(static_cast<const T *>(x), row,
                                                                   static_cast<T *>(xs), topK, cols, tokens * topK,
                                                                   rows, bad);
    countKept<<<1, kScanThreads, 0, s>>>(row, tokens * topK, kept);
    zeroRowsPast<<<blocks(rows * cols), kThreads, 0, s>>>(static_cast<T *>(xs), kept, rows, cols);
  }));
}

void moeDispatchGrad(int32_t dtype, const void *dxs, const int32_t *row, void *dx, int64_t tokens, int64_t topK,
                     int64_t cols, int64_t rows, int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_moe_dispatch_grad", dtype,
                 (gatherRows<<<blocks(tokens * cols), kThreads, 0, s>>>(static_cast<const T *>(dxs),
                                                                       static_cast<const T *>(nullptr), row,
                                                                       static_cast<T *>(dx), tokens, topK, cols,
                                                                       rows, bad)));
}

void moeCombine(int32_t dtype, const void *ys, const void *weight, const int32_t *row, void *y, int64_t tokens,
                int64_t topK, int64_t cols, int64_t rows, int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_moe_combine", dtype,
                 (gatherRows<<<blocks(tokens * cols), kThreads, 0, s>>>(static_cast<const T *>(ys),
                                                                       static_cast<const T *>(weight), row,
                                                                       static_cast<T *>(y), tokens, topK, cols, rows,
                                                                       bad)));
}

void moeCombineGrad(int32_t dtype, const void *dy, const void *ys, const void *weight, const int32_t *row, void *dys,
                    void *dweight, int64_t tokens, int64_t topK, int64_t cols, int64_t rows, int *bad,
                    cudaStream_t s) {
  if (tokens * topK == 0)
    return;
  int *kept = reinterpret_cast<int *>(scratchFloats(1));
  ZRT_CUDA_TYPED("zrt_moe_combine_grad", dtype, ({
    combineGradChoices<<<tiles("zrt_moe_combine_grad", tokens * topK, 1), kRowThreads, 0, s>>>(
        static_cast<const T *>(dy), static_cast<const T *>(ys), static_cast<const T *>(weight), row,
        static_cast<T *>(dys), static_cast<T *>(dweight), topK, cols, rows, bad);
    countKept<<<1, kScanThreads, 0, s>>>(row, tokens * topK, kept);
    zeroRowsPast<<<blocks(rows * cols), kThreads, 0, s>>>(static_cast<T *>(dys), kept, rows, cols);
  }));
}

void moeSharedGate(int32_t dtype, const void *shared, const void *gate, void *y, int64_t tokens, int64_t cols,
                   cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_moe_shared_gate", dtype,
                 (sharedGateRows<<<blocks(tokens * cols), kThreads, 0, s>>>(
                     static_cast<const T *>(shared), static_cast<const T *>(gate), static_cast<T *>(y), tokens, cols)));
}

void moeSharedGateGrad(int32_t dtype, const void *dy, const void *shared, const void *gate, void *dshared,
                       void *dgate, int64_t tokens, int64_t cols, cudaStream_t s) {
  if (tokens == 0)
    return;
  ZRT_CUDA_TYPED("zrt_moe_shared_gate_grad", dtype,
                 (sharedGateGradRows<<<tiles("zrt_moe_shared_gate_grad", tokens, 1), kRowThreads, 0, s>>>(
                     static_cast<const T *>(dy), static_cast<const T *>(shared), static_cast<const T *>(gate),
                     static_cast<T *>(dshared), static_cast<T *>(dgate), cols)));
}

} // namespace zrt::cuda
