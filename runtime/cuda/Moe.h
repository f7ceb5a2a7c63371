// Mixture-of-Experts kernels of the CUDA backend, on a stream: the same contract as the CPU
// backend's runtime/cpu/Moe.h (the routing, its layout zrt/MoeLayout.h, dispatch, combine, the
// shared expert's gate, the grouped product and the routers' losses), on device memory, without
// the host ever reading the routing: how many rows reach an expert is known only on the device,
// so the whole step stays one CUDA graph.
//
// The grouped product is zcc's own tiled kernel, not cuBLASLt: cuBLASLt's and cuBLAS's grouped
// GEMMs take each group's m from host memory, which would stop the stream on every layer. Each
// block finds its expert and its rows from the offsets on the device (MegaBlocks' and Megatron's
// grouped GEMM do the same), so the grid is the planned bound and the blocks past an expert's
// rows return at once.
#ifndef ZRT_CUDA_MOE_H
#define ZRT_CUDA_MOE_H

#include <cstdint>
#include <functional>
#include <cuda_runtime.h>

namespace zrt::cuda {

/// The most choices a token makes and the most expert groups a group-limited routing has: the
/// routing kernel keeps them in registers (DeepSeek-V3: k 8, 8 groups).
constexpr int64_t kMoeMaxTopK = 16;
constexpr int64_t kMoeMaxGroups = 64;

/// What zrt_moe_route's caller asked for (zrt_abi.def), its sizes and options already checked
/// (core/MoeRouteChecks.h: MoeAbi.cu does); the functions below check only the GPU's own limits.
struct MoeRouteArgs {
  int64_t tokens = 0, experts = 0, topK = 0;
  bool sigmoid = false, renormalize = true;
  double scale = 1.0;
  int64_t capacity = 0; // rows an expert keeps (zrt::moeCapacity); 0: dropless
  int64_t groups = 1, topkGroups = 1;
};

/// The routing statistics on the device since the last read (zrt_moe_take_stats's six values:
/// routings, the experts summed over them, the fewest and most rows an expert got, the kept rows,
/// the dropped choices).
struct MoeDeviceStats {
  long long routings, experts, fewest, most, rows, dropped;
};

/// Each token's k experts, weights, rows and the experts' offsets (cpu/Moe.h's moeRoute: the same
/// choice, ties and priority order). Where given, `stats` counts this routing and `loads` [E]
/// adds each expert's choices (kept or dropped) to it.
void moeRoute(int32_t dtype, const void *logits, const void *bias, void *weight, int32_t *expert, int32_t *row,
              int32_t *offsets, const MoeRouteArgs &a, MoeDeviceStats *stats, long long *loads, cudaStream_t s);
void moeRouteGrad(int32_t dtype, const void *dweight, const void *logits, const int32_t *expert, const int32_t *row,
                  void *dlogits, const MoeRouteArgs &a, cudaStream_t s);

/// Each kernel that follows a routing's rows: one outside [-1, rows) (or offsets that do not run
/// from 0 up to at most the rows) writes nothing through it and sets `*bad` to 1.
void moeDispatch(int32_t dtype, const void *x, const int32_t *row, void *xs, int64_t tokens, int64_t topK,
                 int64_t cols, int64_t rows, int *bad, cudaStream_t s);
void moeDispatchGrad(int32_t dtype, const void *dxs, const int32_t *row, void *dx, int64_t tokens, int64_t topK,
                     int64_t cols, int64_t rows, int *bad, cudaStream_t s);
void moeCombine(int32_t dtype, const void *ys, const void *weight, const int32_t *row, void *y, int64_t tokens,
                int64_t topK, int64_t cols, int64_t rows, int *bad, cudaStream_t s);
void moeCombineGrad(int32_t dtype, const void *dy, const void *ys, const void *weight, const int32_t *row, void *dys,
                    void *dweight, int64_t tokens, int64_t topK, int64_t cols, int64_t rows, int *bad,
                    cudaStream_t s);
void moeSharedGate(int32_t dtype, const void *shared, const void *gate, void *y, int64_t tokens, int64_t cols,
                   cudaStream_t s);
void moeSharedGateGrad(int32_t dtype, const void *dy, const void *shared, const void *gate, void *dshared,
                       void *dgate, int64_t tokens, int64_t cols, cudaStream_t s);

/// out [rows, n] = xs [rows, k] x W[e] ([k, n], or [n, k] with transposeRhs) over each expert's
/// rows; the rows past offsets[experts] zero.
void groupedMatmul(int32_t dtype, const void *xs, const void *w, const int32_t *offsets, void *out, int64_t rows,
                   int64_t experts, int64_t k, int64_t n, bool transposeRhs, int *bad, cudaStream_t s);
/// dxs [rows, k] and dw [E, k, n] (or [E, n, k]); either may be null. An expert no row reached
/// gets a zero dw.
void groupedMatmulGrad(int32_t dtype, const void *dout, const void *xs, const void *w, const int32_t *offsets,
                       void *dxs, void *dw, int64_t rows, int64_t experts, int64_t k, int64_t n, bool transposeRhs,
                       int *bad, cudaStream_t s);

/// Under context parallelism, the load-balancing loss's pool (cpu/Moe.h's moeAuxLoss with a
/// pool): each of `parts` context ranks holds a part of every sequence, and `sum` adds the
/// per-expert statistics (`count` f32 on the device: the choices' counts, then the score sums)
/// over them, in the stream's order (a collective). parts 1: this rank's tokens alone.
struct MoeContextPool {
  int64_t parts = 1;
  std::function<void(float *stats, int64_t count)> sum;
};

/// The load-balancing loss (f32 `*loss`) and its gradient times the f32 `*dloss` (cpu/Moe.h's
/// moeAuxLoss: the whole sequences' loss, pooled over `pool`'s parts), and the router z-loss.
void moeAuxLoss(int32_t dtype, const void *logits, const int32_t *expert, float *loss, int64_t tokens,
                int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s,
                const MoeContextPool &pool = {});
void moeAuxLossGrad(int32_t dtype, const float *dloss, const void *logits, const int32_t *expert, void *dlogits,
                    int64_t tokens, int64_t experts, int64_t topK, bool sigmoid, double coef, cudaStream_t s,
                    const MoeContextPool &pool = {});
void moeZLoss(int32_t dtype, const void *logits, float *loss, int64_t tokens, int64_t experts, double coef,
              cudaStream_t s);
void moeZLossGrad(int32_t dtype, const float *dloss, const void *logits, void *dlogits, int64_t tokens,
                  int64_t experts, double coef, cudaStream_t s);

} // namespace zrt::cuda

#endif // ZRT_CUDA_MOE_H
