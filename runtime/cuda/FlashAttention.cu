// Causal attention on tensor cores for bf16 (FlashAttention-2's tiling, written with WMMA):
// queries and keys in tiles of 64, S = Q K^T and the products with V, dO, Q and K as 16x16x16 bf16
// matrix multiplies with f32 accumulation, the softmax online over key tiles, so no T x T matrix
// ever exists (contexts of 8192 need only the tiles in shared memory). Grouped-query attention reads
// key/value head h / (H / G). Head sizes 16 to 128 in steps of 16; other shapes and f32 run the
// one-thread-per-query kernels of RowKernels.cu.
//
// Backward: the forward recomputed for O and each row's log-sum-exp, Delta = rowsum(dO * O), then
// one kernel per key tile for dK and dV (summed over the group's query heads and the query tiles at
// or after it) and one per query tile for dQ: every gradient element is written by one block, in a
// fixed order, so the results are deterministic (no atomics).
//
// zc's variants (AttentionScores): the scale and soft-cap apply to each score as it leaves the
// tensor cores (the backward multiplies dP by the cap's slope); a sliding window skips the key
// tiles before the window of a query tile's first row and the query tiles past the window of a
// key tile's last key, so the work grows as T x W.
#include <cuda_bf16.h>
#include <mma.h>

#include <climits>
#include <type_traits>

#include "core/Error.h"
#include "cuda/AttentionScores.h"
#include "cuda/CudaCheck.h"
#include "cuda/FlashAttention.h"
#include "cuda/Scratch.h"

namespace zrt::cuda {
namespace {

using namespace nvcuda;
using bf16 = __nv_bfloat16;

constexpr int kTile = 64;   // queries and keys per tile
constexpr int kWarps = 4;   // each warp: 16 rows of the tile
constexpr int kBlock = kWarps * 32;

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragBRow = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

/// Where head h of batch b starts in the queries (rows of C = H x D) and in the keys and values
/// (rows of Ckv = G x D).
struct Heads {
  int64_t T, C, Ckv;
  int H, G, D;
  __device__ int64_t query(int64_t b, int h) const { return b * T * C + int64_t(h) * D; }
  __device__ int64_t keyValue(int64_t b, int g) const { return b * T * Ckv + int64_t(g) * D; }
};

/// rows [row0, row0 + 64) of a head (rows `ld` apart, from `base`) into a 64 x D shared tile;
/// rows past T are zeros.
template <int D>
__device__ void loadTile(bf16 *tile, const bf16 *src, int64_t base, int64_t ld, int64_t row0, int64_t T) {
  for (int i = threadIdx.x; i < kTile * D; i += kBlock) {
    const int r = i / D, d = i % D;
    const int64_t t = row0 + r;
    tile[i] = t < T ? src[base + t * ld + d] : __float2bfloat16(0.0f);
  }
}

/// out (16 x 64, f32, row-major, ld 64) = a (16 x D rows of a tile) times the transpose of
/// b (64 x D tile): the scores of 16 rows against 64.
template <int D> __device__ void rowsTimesTileT(float *out, const bf16 *a, const bf16 *b) {
  for (int n = 0; n < kTile / 16; ++n) {
    FragC c;
    wmma::fill_fragment(c, 0.0f);
    for (int kk = 0; kk < D / 16; ++kk) {
      FragA fa;
      FragBCol fb;
      wmma::load_matrix_sync(fa, a + kk * 16, D);
      wmma::load_matrix_sync(fb, b + n * 16 * D + kk * 16, D);
      wmma::mma_sync(c, fa, fb, c);
    }
    wmma::store_matrix_sync(out + n * 16, c, kTile, wmma::mem_row_major);
  }
}

/// acc (D/16 fragments: 16 x D in registers) += p (16 x 64 bf16, ld 64) times tile (64 x D).
template <int D> __device__ void accumulateInFragments(FragC (&acc)[D / 16], const bf16 *p, const bf16 *tile) {
  for (int n = 0; n < D / 16; ++n)
    for (int kk = 0; kk < kTile / 16; ++kk) {
      FragA fa;
      FragBRow fb;
      wmma::load_matrix_sync(fa, p + kk * 16, kTile);
      wmma::load_matrix_sync(fb, tile + kk * 16 * D + n * 16, D);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
}

/// acc (16 x D, f32 in shared, ld D) += p (16 x 64 bf16, ld 64) times tile (64 x D).
template <int D> __device__ void accumulateRowsTimesTile(float *acc, const bf16 *p, const bf16 *tile) {
  FragC c[D / 16];
  for (int n = 0; n < D / 16; ++n)
    wmma::load_matrix_sync(c[n], acc + n * 16, D, wmma::mem_row_major);
  accumulateInFragments<D>(c, p, tile);
  for (int n = 0; n < D / 16; ++n)
    wmma::store_matrix_sync(acc + n * 16, c[n], D, wmma::mem_row_major);
}

/// The warp's 16 x D fragments to rows row0.. of a head (rows `ld` apart from `base`; rows at or
/// past T skipped), staged 16 x 16 at a time through `stage` (256 floats of the warp's own).
template <int D>
__device__ void storeRows(FragC (&acc)[D / 16], float *stage, bf16 *dst, int64_t base, int64_t ld, int64_t row0,
                          int64_t T) {
  const int lane = threadIdx.x % 32;
  for (int n = 0; n < D / 16; ++n) {
    wmma::store_matrix_sync(stage, acc[n], 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
      const int64_t t = row0 + e / 16;
      if (t < T)
        dst[base + t * ld + n * 16 + e % 16] = __float2bfloat16(stage[e]);
    }
    __syncwarp();
  }
}

template <int D> struct ForwardShared {
  static constexpr size_t bytes() {
    return 3 * kTile * D * sizeof(bf16)                 // Q, K, V tiles
           + kWarps * 16 * kTile * (sizeof(float) + sizeof(bf16)) // each warp's scores and probabilities
           + kWarps * 16 * D * sizeof(float)            // each warp's output rows
           + 2 * kTile * sizeof(float);                 // running max and sum per query row
  }
};

/// Block (query tile, head, batch): O = softmax(Q K^T / sqrt(D), causal) V for 64 query rows;
/// lse (optional) = the rows' log-sum-exp of the scaled scores.
template <int D>
__global__ void __launch_bounds__(kBlock) flashForward(const bf16 *q, const bf16 *k, const bf16 *v, bf16 *out,
                                                       float *lse, Heads L, AttentionScores score) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16 *Qs = reinterpret_cast<bf16 *>(smem), *Ks = Qs + kTile * D, *Vs = Ks + kTile * D;
  float *S = reinterpret_cast<float *>(Vs + kTile * D);
  bf16 *P = reinterpret_cast<bf16 *>(S + kWarps * 16 * kTile);
  float *O = reinterpret_cast<float *>(P + kWarps * 16 * kTile);
  float *rowMax = O + kWarps * 16 * D, *rowSum = rowMax + kTile;

  const int tile = blockIdx.x, h = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t b = blockIdx.z, q0 = int64_t(tile) * kTile;
  const int64_t qBase = L.query(b, h), kvBase = L.keyValue(b, h / (L.H / L.G));
  loadTile<D>(Qs, q, qBase, L.C, q0, L.T);
  for (int i = threadIdx.x; i < kWarps * 16 * D; i += kBlock)
    O[i] = 0.0f;
  for (int i = threadIdx.x; i < kTile; i += kBlock) {
    rowMax[i] = -INFINITY;
    rowSum[i] = 0.0f;
  }
  float *Sw = S + warp * 16 * kTile, *Ow = O + warp * 16 * D;
  bf16 *Pw = P + warp * 16 * kTile;
  // causal: key tiles up to the diagonal, from the one the tile's first query's window starts in
  for (int j = static_cast<int>(score.firstKey(q0) / kTile); j <= tile; ++j) {
    const int64_t s0 = int64_t(j) * kTile;
    __syncthreads(); // every warp is done with the previous K and V tiles
    loadTile<D>(Ks, k, kvBase, L.Ckv, s0, L.T);
    loadTile<D>(Vs, v, kvBase, L.Ckv, s0, L.T);
    __syncthreads();
    rowsTimesTileT<D>(Sw, Qs + warp * 16 * D, Ks);
    __syncwarp();
    if (lane < 16) { // one lane per query row: online softmax over this key tile
      const int row = warp * 16 + lane;
      const int64_t t = q0 + row;
      float *s = Sw + lane * kTile;
      float mOld = rowMax[row], mNew = mOld;
      for (int c = 0; c < kTile; ++c) {
        const int64_t key = s0 + c;
        const float x = (key <= t && key >= score.firstKey(t) && t < L.T) ? score(s[c]) : -INFINITY;
        s[c] = x;
        mNew = fmaxf(mNew, x);
      }
      const float alpha = mNew == -INFINITY ? 1.0f : __expf(mOld - mNew);
      float sum = 0.0f;
      for (int c = 0; c < kTile; ++c) {
        const float p = s[c] == -INFINITY ? 0.0f : __expf(s[c] - mNew);
        const bf16 pb = __float2bfloat16(p);
        Pw[lane * kTile + c] = pb;
        sum += __bfloat162float(pb); // the sum of what multiplies V
      }
      rowMax[row] = mNew;
      rowSum[row] = rowSum[row] * alpha + sum;
      for (int d = 0; d < D; ++d)
        Ow[lane * D + d] *= alpha;
    }
    __syncwarp();
    accumulateRowsTimesTile<D>(Ow, Pw, Vs);
    __syncwarp();
  }
  // The warp's 16 rows out, coalesced: consecutive lanes, consecutive channels.
  for (int i = lane; i < 16 * D; i += 32) {
    const int r = i / D, d = i % D, row = warp * 16 + r;
    const int64_t t = q0 + row;
    if (t < L.T)
      out[qBase + t * L.C + d] = __float2bfloat16(Ow[r * D + d] / rowSum[row]);
  }
  if (lse && lane < 16) {
    const int row = warp * 16 + lane;
    const int64_t t = q0 + row;
    if (t < L.T)
      lse[(b * L.H + h) * L.T + t] = rowMax[row] + __logf(rowSum[row]);
  }
}

/// Delta[b, h, t] = sum over the head's channels of dO * O (one warp per row).
__global__ void rowDots(const bf16 *dout, const bf16 *o, float *delta, Heads L, int64_t rows) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows)
    return;
  const int64_t t = row % L.T, bh = row / L.T, b = bh / L.H;
  const int h = static_cast<int>(bh % L.H);
  const int64_t base = L.query(b, h) + t * L.C;
  float sum = 0.0f;
  for (int d = lane; d < L.D; d += 32)
    sum += __bfloat162float(dout[base + d]) * __bfloat162float(o[base + d]);
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0)
    delta[row] = sum;
}

/// The backward kernels' shared memory: four 64 x D tiles (the block's own two, loaded once, and
/// the two it loops over), each warp's 16 x 64 scores and dP (f32) and P and dS (bf16), and the
/// query tile's lse and Delta.
template <int D> struct BackwardShared {
  bf16 *own0, *own1, *loop0, *loop1;
  float *scores, *dp, *lse, *delta;
  bf16 *p, *ds;
  static constexpr size_t bytes() {
    return 4 * kTile * D * sizeof(bf16) + kWarps * 16 * kTile * (2 * sizeof(float) + 2 * sizeof(bf16)) +
           2 * kTile * sizeof(float);
  }
  __device__ explicit BackwardShared(unsigned char *smem) {
    own0 = reinterpret_cast<bf16 *>(smem);
    own1 = own0 + kTile * D;
    loop0 = own1 + kTile * D;
    loop1 = loop0 + kTile * D;
    scores = reinterpret_cast<float *>(loop1 + kTile * D);
    dp = scores + kWarps * 16 * kTile;
    p = reinterpret_cast<bf16 *>(dp + kWarps * 16 * kTile);
    ds = p + kWarps * 16 * kTile;
    lse = reinterpret_cast<float *>(ds + kWarps * 16 * kTile);
    delta = lse + kTile;
  }
  /// lse and Delta of query rows t0.. of the head whose statistics start at statBase.
  __device__ void loadStats(const float *lseAll, const float *deltaAll, int64_t statBase, int64_t t0, int64_t T) {
    for (int r = threadIdx.x; r < kTile; r += kBlock) {
      const int64_t t = t0 + r;
      lse[r] = t < T ? lseAll[statBase + t] : 0.0f;
      delta[r] = t < T ? deltaAll[statBase + t] : 0.0f;
    }
  }
};

/// Block (key tile, key/value head, batch): dK and dV of 64 keys, summed over the group's query
/// heads and every query tile at or after the key tile. Each warp owns 16 keys:
/// S^T = K_w Q^T, P^T = exp(S^T / sqrt(D) - lse), dP^T = V_w dO^T, dS^T = P^T (dP^T - Delta) / sqrt(D),
/// dV_w += P^T dO, dK_w += dS^T Q.
template <int D>
__global__ void __launch_bounds__(kBlock) flashBackwardKeys(const bf16 *dout, const bf16 *q, const bf16 *k,
                                                            const bf16 *v, const float *lse, const float *delta,
                                                            bf16 *dk, bf16 *dv, Heads L, AttentionScores score) {
  extern __shared__ __align__(128) unsigned char smem[];
  BackwardShared<D> sh(smem);
  bf16 *Ks = sh.own0, *Vs = sh.own1, *Qs = sh.loop0, *dOs = sh.loop1;
  float *St = sh.scores, *dPt = sh.dp, *lseTile = sh.lse, *deltaTile = sh.delta;
  bf16 *Pt = sh.p, *dSt = sh.ds;

  const int tile = blockIdx.x, g = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t b = blockIdx.z, s0 = int64_t(tile) * kTile, kvBase = L.keyValue(b, g);
  const int group = L.H / L.G;
  // The query tiles that see a key of this tile: from the diagonal to the window's end of its last key.
  const int lastTile = static_cast<int>(score.lastQuery(s0 + kTile - 1, L.T) / kTile);
  loadTile<D>(Ks, k, kvBase, L.Ckv, s0, L.T);
  loadTile<D>(Vs, v, kvBase, L.Ckv, s0, L.T);
  FragC accK[D / 16], accV[D / 16]; // the warp's 16 keys' dK and dV, in registers
  for (int n = 0; n < D / 16; ++n) {
    wmma::fill_fragment(accK[n], 0.0f);
    wmma::fill_fragment(accV[n], 0.0f);
  }
  float *Sw = St + warp * 16 * kTile, *dPw = dPt + warp * 16 * kTile;
  bf16 *Pw = Pt + warp * 16 * kTile, *dSw = dSt + warp * 16 * kTile;
  for (int h = g * group; h < (g + 1) * group; ++h) {
    const int64_t qBase = L.query(b, h), statBase = (b * L.H + h) * L.T;
    for (int i = tile; i <= lastTile; ++i) {
      const int64_t t0 = int64_t(i) * kTile;
      __syncthreads(); // every warp is done with the previous query tile
      loadTile<D>(Qs, q, qBase, L.C, t0, L.T);
      loadTile<D>(dOs, dout, qBase, L.C, t0, L.T);
      sh.loadStats(lse, delta, statBase, t0, L.T);
      __syncthreads();
      rowsTimesTileT<D>(Sw, Ks + warp * 16 * D, Qs);  // 16 keys x 64 queries
      rowsTimesTileT<D>(dPw, Vs + warp * 16 * D, dOs);
      __syncwarp();
      for (int e = lane; e < 16 * kTile; e += 32) {
        const int r = e / kTile, c = e % kTile;
        const int64_t key = s0 + warp * 16 + r, t = t0 + c;
        const bool live = key <= t && key >= score.firstKey(t) && t < L.T && key < L.T;
        const float x = live ? score(Sw[e]) : 0.0f;
        const float p = live ? __expf(x - lseTile[c]) : 0.0f;
        const float ds = live ? p * (dPw[e] - deltaTile[c]) * score.slope(x) : 0.0f;
        Pw[e] = __float2bfloat16(p);
        dSw[e] = __float2bfloat16(ds);
      }
      __syncwarp();
      accumulateInFragments<D>(accV, Pw, dOs);
      accumulateInFragments<D>(accK, dSw, Qs);
      __syncwarp();
    }
  }
  storeRows<D>(accK, Sw, dk, kvBase, L.Ckv, s0 + warp * 16, L.T);
  storeRows<D>(accV, Sw, dv, kvBase, L.Ckv, s0 + warp * 16, L.T);
}

/// Block (query tile, head, batch): dQ of 64 queries over the key tiles up to the diagonal:
/// dS = P (dO V^T - Delta) / sqrt(D), dQ += dS K.
template <int D>
__global__ void __launch_bounds__(kBlock) flashBackwardQueries(const bf16 *dout, const bf16 *q, const bf16 *k,
                                                               const bf16 *v, const float *lse, const float *delta,
                                                               bf16 *dq, Heads L, AttentionScores score) {
  extern __shared__ __align__(128) unsigned char smem[];
  BackwardShared<D> sh(smem);
  bf16 *Qs = sh.own0, *dOs = sh.own1, *Ks = sh.loop0, *Vs = sh.loop1, *dS = sh.ds;
  float *S = sh.scores, *dP = sh.dp, *lseTile = sh.lse, *deltaTile = sh.delta;

  const int tile = blockIdx.x, h = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t b = blockIdx.z, t0 = int64_t(tile) * kTile;
  const int64_t qBase = L.query(b, h), kvBase = L.keyValue(b, h / (L.H / L.G)), statBase = (b * L.H + h) * L.T;
  loadTile<D>(Qs, q, qBase, L.C, t0, L.T);
  loadTile<D>(dOs, dout, qBase, L.C, t0, L.T);
  sh.loadStats(lse, delta, statBase, t0, L.T);
  FragC accQ[D / 16]; // the warp's 16 queries' dQ, in registers
  for (int n = 0; n < D / 16; ++n)
    wmma::fill_fragment(accQ[n], 0.0f);
  float *Sw = S + warp * 16 * kTile, *dPw = dP + warp * 16 * kTile;
  bf16 *dSw = dS + warp * 16 * kTile;
  for (int j = static_cast<int>(score.firstKey(t0) / kTile); j <= tile; ++j) {
    const int64_t s0 = int64_t(j) * kTile;
    __syncthreads();
    loadTile<D>(Ks, k, kvBase, L.Ckv, s0, L.T);
    loadTile<D>(Vs, v, kvBase, L.Ckv, s0, L.T);
    __syncthreads();
    rowsTimesTileT<D>(Sw, Qs + warp * 16 * D, Ks);
    rowsTimesTileT<D>(dPw, dOs + warp * 16 * D, Vs);
    __syncwarp();
    for (int e = lane; e < 16 * kTile; e += 32) {
      const int r = e / kTile, c = e % kTile, row = warp * 16 + r;
      const int64_t t = t0 + row, key = s0 + c;
      const bool live = key <= t && key >= score.firstKey(t) && t < L.T;
      const float x = live ? score(Sw[e]) : 0.0f;
      const float p = live ? __expf(x - lseTile[row]) : 0.0f;
      dSw[e] = __float2bfloat16(live ? p * (dPw[e] - deltaTile[row]) * score.slope(x) : 0.0f);
    }
    __syncwarp();
    accumulateInFragments<D>(accQ, dSw, Ks);
    __syncwarp();
  }
  storeRows<D>(accQ, Sw, dq, qBase, L.C, t0 + warp * 16, L.T);
}

Heads headsOf(int64_t time, int64_t channels, int64_t H, int64_t G) {
  const int D = static_cast<int>(channels / H);
  return Heads{time, channels, G * D, static_cast<int>(H), static_cast<int>(G), D};
}

dim3 tiles(const char *call, int64_t time, int64_t heads, int64_t batch) {
  const int64_t n = (time + kTile - 1) / kTile;
  if (n > INT32_MAX || heads > 65535 || batch > 65535)
    fatal(call, "%lld tiles x %lld heads x %lld sequences: above the grid's limits", static_cast<long long>(n),
          static_cast<long long>(heads), static_cast<long long>(batch));
  return dim3(static_cast<unsigned>(n), static_cast<unsigned>(heads), static_cast<unsigned>(batch));
}

/// Above 48 KB of dynamic shared memory a kernel must opt in, once.
template <auto Kernel> void allowSharedMemory(size_t bytes) {
  static bool done = false; // one flag per kernel
  if (!done)
    ZRT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  done = true;
}

template <int D>
void forwardFor(const void *q, const void *k, const void *v, void *out, float *lse, const Heads &L, int64_t batch,
                const AttentionScores &score, cudaStream_t s) {
  const size_t bytes = ForwardShared<D>::bytes();
  allowSharedMemory<flashForward<D>>(bytes);
  flashForward<D><<<tiles("zrt_causal_attention", L.T, L.H, batch), kBlock, bytes, s>>>(
      static_cast<const bf16 *>(q), static_cast<const bf16 *>(k), static_cast<const bf16 *>(v),
      static_cast<bf16 *>(out), lse, L, score);
  ZRT_CUDA_CHECK(cudaGetLastError());
}

template <int D>
void backwardFor(const void *dout, const void *q, const void *k, const void *v, void *dq, void *dk, void *dv,
                 const Heads &L, int64_t batch, const AttentionScores &score, cudaStream_t s) {
  const int64_t rows = batch * L.H * L.T;
  // Scratch: O (bf16, as the forward writes it), then each row's lse and Delta.
  const int64_t oFloats = (batch * L.T * L.C + 1) / 2;
  float *scratch = scratchFloats(oFloats + 2 * rows);
  void *o = scratch;
  float *lse = scratch + oFloats, *delta = lse + rows;
  forwardFor<D>(q, k, v, o, lse, L, batch, score, s);
  rowDots<<<static_cast<unsigned>((rows * 32 + 255) / 256), 256, 0, s>>>(static_cast<const bf16 *>(dout),
                                                                        static_cast<const bf16 *>(o), delta, L, rows);
  ZRT_CUDA_CHECK(cudaGetLastError());
  const size_t bytes = BackwardShared<D>::bytes();
  allowSharedMemory<flashBackwardKeys<D>>(bytes);
  allowSharedMemory<flashBackwardQueries<D>>(bytes);
  flashBackwardKeys<D><<<tiles("zrt_causal_attention_grad", L.T, L.G, batch), kBlock, bytes, s>>>(
      static_cast<const bf16 *>(dout), static_cast<const bf16 *>(q), static_cast<const bf16 *>(k),
      static_cast<const bf16 *>(v), lse, delta, static_cast<bf16 *>(dk), static_cast<bf16 *>(dv), L, score);
  ZRT_CUDA_CHECK(cudaGetLastError());
  flashBackwardQueries<D><<<tiles("zrt_causal_attention_grad", L.T, L.H, batch), kBlock, bytes, s>>>(
      static_cast<const bf16 *>(dout), static_cast<const bf16 *>(q), static_cast<const bf16 *>(k),
      static_cast<const bf16 *>(v), lse, delta, static_cast<bf16 *>(dq), L, score);
  ZRT_CUDA_CHECK(cudaGetLastError());
}

/// The head sizes with a tensor-core kernel, dispatched to their template.
template <class F> bool withHeadDim(int D, F &&f) {
  switch (D) {
  case 16: f(std::integral_constant<int, 16>{}); return true;
  case 32: f(std::integral_constant<int, 32>{}); return true;
  case 48: f(std::integral_constant<int, 48>{}); return true;
  case 64: f(std::integral_constant<int, 64>{}); return true;
  case 80: f(std::integral_constant<int, 80>{}); return true;
  case 96: f(std::integral_constant<int, 96>{}); return true;
  case 112: f(std::integral_constant<int, 112>{}); return true;
  case 128: f(std::integral_constant<int, 128>{}); return true;
  default: return false;
  }
}

int deviceMajor() {
  static int major = -1;
  if (major < 0) {
    int device = 0;
    ZRT_CUDA_CHECK(cudaGetDevice(&device));
    ZRT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  }
  return major;
}

} // namespace

bool flashAttentionApplies(int32_t dtype, int64_t channels, int64_t heads) {
  if (dtype != 1 || heads <= 0 || channels % heads != 0)
    return false;
  const int64_t D = channels / heads;
  return D % 16 == 0 && D >= 16 && D <= 128 && deviceMajor() >= 8;
}

void flashAttention(const void *q, const void *k, const void *v, void *out, int64_t batch, int64_t time,
                    int64_t channels, int64_t heads, int64_t kvHeads, const AttentionVariant &variant, cudaStream_t s) {
  const Heads L = headsOf(time, channels, heads, kvHeads);
  const AttentionScores score = AttentionScores::of(variant, L.D);
  withHeadDim(L.D, [&](auto d) { forwardFor<decltype(d)::value>(q, k, v, out, nullptr, L, batch, score, s); });
}

void flashAttentionGrad(const void *dout, const void *q, const void *k, const void *v, void *dq, void *dk, void *dv,
                        int64_t batch, int64_t time, int64_t channels, int64_t heads, int64_t kvHeads,
                        const AttentionVariant &variant, cudaStream_t s) {
  const Heads L = headsOf(time, channels, heads, kvHeads);
  const AttentionScores score = AttentionScores::of(variant, L.D);
  withHeadDim(L.D, [&](auto d) { backwardFor<decltype(d)::value>(dout, q, k, v, dq, dk, dv, L, batch, score, s); });
}

} // namespace zrt::cuda
