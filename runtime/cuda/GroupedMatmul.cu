// The grouped product of a Mixture-of-Experts layer on the CUDA backend (Moe.h): each expert's
// rows of the dispatched tensor times that expert's weight, the experts' row counts read from the
// routing's offsets on the device (one launch for every expert, no host round trip), and its
// gradients. bf16 on tensor cores (WMMA 16x16x16, f32 accumulation: the products of bf16 values are
// exact in f32, as the SIMT path's); f32 as SIMT FMAs (tensor cores would round it to TF32).
#include <cuda_bf16.h>
#include <mma.h>

#include <type_traits>

#include "cuda/CudaCheck.h"
#include "cuda/Dispatch.h"
#include "cuda/Moe.h"
#include "cuda/MoeCommon.cuh"

namespace zrt::cuda {
namespace {

using namespace moe;

// The grouped product: 64 x 64 output tiles, 256 threads of 4 x 4 outputs each (rows ty + 16 i,
// columns tx + 16 j: neighbouring threads, neighbouring columns), 16-deep slices through shared
// memory, f32 accumulation.
constexpr int kTile = 64, kSlice = 16, kTileThreads = 256;

/// One slice's products into this thread's 4 x 4 outputs: acc[y][x] += l[s][ty + 16 y] r[s][tx + 16 x].
__device__ inline void accumulateSlice(float (&acc)[4][4], const float (&l)[kSlice][kTile],
                                       const float (&r)[kSlice][kTile], int ty, int tx) {
  for (int s = 0; s < kSlice; ++s)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        acc[y][x] += l[s][ty + 16 * y] * r[s][tx + 16 * x];
}

/// Which expert's rows the block's tile of rows is: the tile-th of the experts' tiles in order
/// (each expert's rows in whole tiles, its last one partial). Thread 0 walks the offsets, checking
/// them; every thread gets the answer (expert -1: no tile, or bad offsets).
struct RowTile {
  int32_t expert, first, end;
};
__device__ RowTile findRowTile(const int32_t *offsets, int64_t experts, int64_t rows, int64_t tile, int *bad) {
  __shared__ RowTile found;
  if (threadIdx.x == 0) {
    found = RowTile{-1, 0, 0};
    if (offsets[0] != 0 || offsets[experts] > rows)
      *bad = 1;
    else
      for (int64_t e = 0; e < experts; ++e) {
        const int32_t count = offsets[e + 1] - offsets[e];
        if (count < 0) {
          *bad = 1;
          break;
        }
        const int64_t tiles = (count + kTile - 1) / kTile;
        if (tile < tiles) {
          found = RowTile{static_cast<int32_t>(e), static_cast<int32_t>(offsets[e] + tile * kTile), offsets[e + 1]};
          break;
        }
        tile -= tiles;
      }
  }
  __syncthreads();
  return found;
}

/// out[r, col] = sum_i a[r, i] B_e(i, col) over inner i < inner for an expert's rows r, where
/// B_e(i, col) = w[e][col * inner + i] (bT) or w[e][i * cols + col].
template <class T>
__global__ void rowsTimesExpert(const T *a, const T *w, const int32_t *offsets, T *out, int64_t rows, int64_t experts,
                                int64_t inner, int64_t cols, bool bT, int *bad) {
  const RowTile tile = findRowTile(offsets, experts, rows, blockIdx.x, bad);
  if (tile.expert < 0)
    return;
  __shared__ float as[kSlice][kTile], bs[kSlice][kTile];
  const T *we = w + static_cast<int64_t>(tile.expert) * inner * cols;
  const int64_t col0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int64_t i0 = 0; i0 < inner; i0 += kSlice) {
    for (int idx = threadIdx.x; idx < kSlice * kTile; idx += kTileThreads) {
      const int s = idx % kSlice, m = idx / kSlice; // a: along the row (its inner index) first
      const int64_t r = tile.first + m, i = i0 + s;
      as[s][m] = r < tile.end && i < inner ? float(a[r * inner + i]) : 0.0f;
      const int n = idx % kTile, s2 = idx / kTile; // B: along the output columns first
      const int64_t col = col0 + n, i2 = i0 + s2;
      bs[s2][n] = col < cols && i2 < inner ? float(bT ? we[col * inner + i2] : we[i2 * cols + col]) : 0.0f;
    }
    __syncthreads();
    accumulateSlice(acc, as, bs, ty, tx);
    __syncthreads();
  }
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int64_t r = tile.first + ty + 16 * y, col = col0 + tx + 16 * x;
      if (r < tile.end && col < cols)
        out[r * cols + col] = T(acc[y][x]);
    }
}

/// Expert e's rows [first, end) from the offsets, checked by thread 0 (none, and the flag set,
/// where they are out of order or past the rows); every thread gets them.
struct RowRange {
  int32_t first, end;
};
__device__ RowRange expertRowRange(const int32_t *offsets, int64_t e, int64_t rows, int *bad) {
  __shared__ RowRange range;
  if (threadIdx.x == 0) {
    range = RowRange{offsets[e], offsets[e + 1]};
    if (range.first < 0 || range.end < range.first || range.end > rows) {
      *bad = 1;
      range = RowRange{0, 0};
    }
  }
  __syncthreads();
  return range;
}

/// Block (x, y, e): out[e][i, j] = sum over expert e's rows r of p[r, i] q[r, j], for the weight's
/// gradient (p [rows, pw], q [rows, qw], out [E, pw, qw]); zero where no row reached e.
template <class T>
__global__ void expertRowsProduct(const T *p, const T *q, const int32_t *offsets, T *out, int64_t rows,
                                  int64_t experts, int64_t pw, int64_t qw, int *bad) {
  const int64_t e = blockIdx.z;
  const auto [first, end] = expertRowRange(offsets, e, rows, bad);
  __shared__ float ps[kSlice][kTile], qs[kSlice][kTile];
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTile, j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int64_t r0 = first; r0 < end; r0 += kSlice) {
    for (int idx = threadIdx.x; idx < kSlice * kTile; idx += kTileThreads) {
      const int c = idx % kTile, s = idx / kTile; // along each row's columns: coalesced
      const int64_t r = r0 + s;
      ps[s][c] = r < end && i0 + c < pw ? float(p[r * pw + i0 + c]) : 0.0f;
      qs[s][c] = r < end && j0 + c < qw ? float(q[r * qw + j0 + c]) : 0.0f;
    }
    __syncthreads();
    accumulateSlice(acc, ps, qs, ty, tx);
    __syncthreads();
  }
  T *oe = out + e * pw * qw;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int64_t i = i0 + ty + 16 * y, j = j0 + tx + 16 * x;
      if (i < pw && j < qw)
        oe[i * qw + j] = T(acc[y][x]);
    }
}

// The tensor-core kernels (bf16): the same 64 x 64 output tiles and tile order, 8 warps of two
// 16 x 16 fragments each (fragment row w / 2, columns 2 (w % 2) and 2 (w % 2) + 1), 32-deep slices
// of bf16 in shared memory (rows padded by 8: WMMA's leading dimension is a multiple of 8, and the
// padding spreads the rows over the banks), the f32 accumulators staged through shared memory to
// the bounds-checked store.
using namespace nvcuda;
using bf16 = __nv_bfloat16;
constexpr int kTcSlice = 32, kTcPad = 8, kTileLd = kTile + kTcPad, kSliceLd = kTcSlice + kTcPad, kStageLd = kTile + 4;
using TcFragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

/// The warp's two fragments' accumulators into the block's stage [64][kStageLd] (then a barrier).
__device__ inline void stageAccumulators(float *stage, const TcFragC (&acc)[2], int fm, int fn0) {
  for (int f = 0; f < 2; ++f)
    wmma::store_matrix_sync(stage + fm * 16 * kStageLd + (fn0 + f) * 16, acc[f], kStageLd, wmma::mem_row_major);
  __syncthreads();
}

/// One slice's products into the warp's two accumulators: its 16-row fragment of the left
/// operand at `a` (`Layout` as stored: row-major, k along a row of `ld`; col-major, k down the
/// rows of `ld`; `kStride` elements between one k and the next), the right operand's slice at `b`
/// ([32 k][kTileLd], row-major), fragment columns fn0 and fn0 + 1.
template <class Layout>
__device__ inline void accumulateTcSlice(TcFragC (&acc)[2], const bf16 *a, int kStride, int ld, const bf16 *b,
                                         int fn0) {
  for (int kk = 0; kk < kTcSlice; kk += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, Layout> fa;
    wmma::load_matrix_sync(fa, a + kk * kStride, ld);
    for (int f = 0; f < 2; ++f) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> fb;
      wmma::load_matrix_sync(fb, b + kk * kTileLd + (fn0 + f) * 16, kTileLd);
      wmma::mma_sync(acc[f], fa, fb, acc[f]);
    }
  }
}

/// rowsTimesExpert for bf16 on tensor cores.
__global__ void rowsTimesExpertTc(const bf16 *a, const bf16 *w, const int32_t *offsets, bf16 *out, int64_t rows,
                                  int64_t experts, int64_t inner, int64_t cols, bool bT, int *bad) {
  const RowTile tile = findRowTile(offsets, experts, rows, blockIdx.x, bad);
  if (tile.expert < 0)
    return;
  __shared__ bf16 as[kTile * kSliceLd], bs[kTcSlice * kTileLd];
  __shared__ float stage[kTile * kStageLd];
  const bf16 *we = w + static_cast<int64_t>(tile.expert) * inner * cols;
  const int64_t col0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int warp = threadIdx.x / 32, fm = warp / 2, fn0 = 2 * (warp % 2);
  TcFragC acc[2];
  for (TcFragC &c : acc)
    wmma::fill_fragment(c, 0.0f);
  const bf16 zero = __float2bfloat16(0.0f);
  for (int64_t i0 = 0; i0 < inner; i0 += kTcSlice) {
    for (int idx = threadIdx.x; idx < kTile * kTcSlice; idx += kTileThreads) {
      const int m = idx / kTcSlice, sa = idx % kTcSlice; // a [64 rows][32 inner]: along the row
      const int64_t r = tile.first + m, i = i0 + sa;
      as[m * kSliceLd + sa] = r < tile.end && i < inner ? a[r * inner + i] : zero;
      const int sb = idx / kTile, n = idx % kTile; // B [32 inner][64 columns]: along the columns
      const int64_t col = col0 + n, ib = i0 + sb;
      bs[sb * kTileLd + n] = col < cols && ib < inner ? (bT ? we[col * inner + ib] : we[ib * cols + col]) : zero;
    }
    __syncthreads();
    accumulateTcSlice<wmma::row_major>(acc, as + fm * 16 * kSliceLd, 1, kSliceLd, bs, fn0);
    __syncthreads();
  }
  stageAccumulators(stage, acc, fm, fn0);
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
    const int m = idx / kTile, n = idx % kTile;
    const int64_t r = tile.first + m, col = col0 + n;
    if (r < tile.end && col < cols)
      out[r * cols + col] = __float2bfloat16(stage[m * kStageLd + n]);
  }
}

/// expertRowsProduct for bf16 on tensor cores: p's slice [32 rows][64 i] is the product's left
/// operand (i x r) in column-major order, q's [32 rows][64 j] its right one in row-major order.
__global__ void expertRowsProductTc(const bf16 *p, const bf16 *q, const int32_t *offsets, bf16 *out, int64_t rows,
                                    int64_t experts, int64_t pw, int64_t qw, int *bad) {
  const int64_t e = blockIdx.z;
  const auto [first, end] = expertRowRange(offsets, e, rows, bad);
  __shared__ bf16 ps[kTcSlice * kTileLd], qs[kTcSlice * kTileLd];
  __shared__ float stage[kTile * kStageLd];
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTile, j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int warp = threadIdx.x / 32, fm = warp / 2, fn0 = 2 * (warp % 2);
  TcFragC acc[2];
  for (TcFragC &c : acc)
    wmma::fill_fragment(c, 0.0f);
  const bf16 zero = __float2bfloat16(0.0f);
  for (int64_t r0 = first; r0 < end; r0 += kTcSlice) {
    for (int idx = threadIdx.x; idx < kTcSlice * kTile; idx += kTileThreads) {
      const int s = idx / kTile, c = idx % kTile; // along each row's columns: coalesced
      const int64_t r = r0 + s;
      ps[s * kTileLd + c] = r < end && i0 + c < pw ? p[r * pw + i0 + c] : zero;
      qs[s * kTileLd + c] = r < end && j0 + c < qw ? q[r * qw + j0 + c] : zero;
    }
    __syncthreads();
    accumulateTcSlice<wmma::col_major>(acc, ps + fm * 16, kTileLd, kTileLd, qs, fn0);
    __syncthreads();
  }
  stageAccumulators(stage, acc, fm, fn0);
  bf16 *oe = out + e * pw * qw;
  for (int idx = threadIdx.x; idx < kTile * kTile; idx += kTileThreads) {
    const int m = idx / kTile, n = idx % kTile;
    const int64_t i = i0 + m, j = j0 + n;
    if (i < pw && j < qw)
      oe[i * qw + j] = __float2bfloat16(stage[m * kStageLd + n]);
  }
}

/// The grouped product's two kernels for T: tensor cores for bf16, SIMT for f32 (same grids).
template <class T>
void launchRowsTimes(dim3 grid, cudaStream_t s, const T *a, const T *w, const int32_t *offsets, T *out, int64_t rows,
                     int64_t experts, int64_t inner, int64_t cols, bool bT, int *bad) {
  if constexpr (std::is_same_v<T, zrt::bf16>) // the ABI's bf16: CUDA's bits
    rowsTimesExpertTc<<<grid, kTileThreads, 0, s>>>(reinterpret_cast<const bf16 *>(a),
                                                    reinterpret_cast<const bf16 *>(w), offsets,
                                                    reinterpret_cast<bf16 *>(out), rows, experts, inner, cols, bT, bad);
  else
    rowsTimesExpert<T><<<grid, kTileThreads, 0, s>>>(a, w, offsets, out, rows, experts, inner, cols, bT, bad);
}
template <class T>
void launchRowsProduct(dim3 grid, cudaStream_t s, const T *p, const T *q, const int32_t *offsets, T *out, int64_t rows,
                       int64_t experts, int64_t pw, int64_t qw, int *bad) {
  if constexpr (std::is_same_v<T, zrt::bf16>)
    expertRowsProductTc<<<grid, kTileThreads, 0, s>>>(reinterpret_cast<const bf16 *>(p),
                                                      reinterpret_cast<const bf16 *>(q), offsets,
                                                      reinterpret_cast<bf16 *>(out), rows, experts, pw, qw, bad);
  else
    expertRowsProduct<T><<<grid, kTileThreads, 0, s>>>(p, q, offsets, out, rows, experts, pw, qw, bad);
}

/// Tiles of rows a grouped product's grid holds: every expert's rows in whole tiles.
int64_t rowTiles(int64_t rows, int64_t experts) { return (rows + kTile - 1) / kTile + experts; }
int64_t tilesOf(int64_t n) { return n > 0 ? (n + kTile - 1) / kTile : 1; }

} // namespace

void groupedMatmul(int32_t dtype, const void *xs, const void *w, const int32_t *offsets, void *out, int64_t rows,
                   int64_t experts, int64_t k, int64_t n, bool transposeRhs, int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_grouped_matmul", dtype, ({
    launchRowsTimes(tiles("zrt_grouped_matmul", rowTiles(rows, experts), tilesOf(n)), s, static_cast<const T *>(xs),
                    static_cast<const T *>(w), offsets, static_cast<T *>(out), rows, experts, k, n, transposeRhs, bad);
    zeroRowsPast<<<blocks(rows * n), kThreads, 0, s>>>(static_cast<T *>(out), offsets + experts, rows, n);
  }));
}

void groupedMatmulGrad(int32_t dtype, const void *dout, const void *xs, const void *w, const int32_t *offsets,
                       void *dxs, void *dw, int64_t rows, int64_t experts, int64_t k, int64_t n, bool transposeRhs,
                       int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_grouped_matmul_grad", dtype, ({
    if (dxs) { // dout [rows, n] times W[e] read back: inner n, k columns
      launchRowsTimes(tiles("zrt_grouped_matmul_grad", rowTiles(rows, experts), tilesOf(k)), s,
                      static_cast<const T *>(dout), static_cast<const T *>(w), offsets, static_cast<T *>(dxs), rows,
                      experts, n, k, !transposeRhs, bad);
      zeroRowsPast<<<blocks(rows * k), kThreads, 0, s>>>(static_cast<T *>(dxs), offsets + experts, rows, k);
    }
    if (dw) { // dW[e] = xs^T dout ([k, n]) or, transposed, dout^T xs ([n, k])
      const T *p = static_cast<const T *>(transposeRhs ? dout : xs), *q = static_cast<const T *>(transposeRhs ? xs : dout);
      const int64_t pw = transposeRhs ? n : k, qw = transposeRhs ? k : n;
      launchRowsProduct(tiles("zrt_grouped_matmul_grad", tilesOf(pw), tilesOf(qw), experts), s, p, q, offsets,
                        static_cast<T *>(dw), rows, experts, pw, qw, bad);
    }
  }));
}

} // namespace zrt::cuda
