// The grouped product of a Mixture-of-Experts layer on the CUDA backend (Moe.h): each expert's
// rows of the dispatched tensor times that expert's weight, the experts' row counts read from the
// routing's offsets on the device (one launch for every expert, no host round trip), and its
// gradients. SIMT FMAs with f32 accumulation, not tensor cores yet.
#include <cuda_bf16.h>

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

/// Block (x, y, e): out[e][i, j] = sum over expert e's rows r of p[r, i] q[r, j], for the weight's
/// gradient (p [rows, pw], q [rows, qw], out [E, pw, qw]); zero where no row reached e.
template <class T>
__global__ void expertRowsProduct(const T *p, const T *q, const int32_t *offsets, T *out, int64_t rows,
                                  int64_t experts, int64_t pw, int64_t qw, int *bad) {
  const int64_t e = blockIdx.z;
  __shared__ int32_t first, end;
  if (threadIdx.x == 0) {
    first = offsets[e], end = offsets[e + 1];
    if (first < 0 || end < first || end > rows) {
      *bad = 1;
      first = end = 0;
    }
  }
  __syncthreads();
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

/// Tiles of rows a grouped product's grid holds: every expert's rows in whole tiles.
int64_t rowTiles(int64_t rows, int64_t experts) { return (rows + kTile - 1) / kTile + experts; }
int64_t tilesOf(int64_t n) { return n > 0 ? (n + kTile - 1) / kTile : 1; }

} // namespace

void groupedMatmul(int32_t dtype, const void *xs, const void *w, const int32_t *offsets, void *out, int64_t rows,
                   int64_t experts, int64_t k, int64_t n, bool transposeRhs, int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_grouped_matmul", dtype, ({
    rowsTimesExpert<<<tiles("zrt_grouped_matmul", rowTiles(rows, experts), tilesOf(n)), kTileThreads, 0, s>>>(
        static_cast<const T *>(xs), static_cast<const T *>(w), offsets, static_cast<T *>(out), rows, experts, k, n,
        transposeRhs, bad);
    zeroRowsPast<<<blocks(rows * n), kThreads, 0, s>>>(static_cast<T *>(out), offsets + experts, rows, n);
  }));
}

void groupedMatmulGrad(int32_t dtype, const void *dout, const void *xs, const void *w, const int32_t *offsets,
                       void *dxs, void *dw, int64_t rows, int64_t experts, int64_t k, int64_t n, bool transposeRhs,
                       int *bad, cudaStream_t s) {
  ZRT_CUDA_TYPED("zrt_grouped_matmul_grad", dtype, ({
    if (dxs) { // dout [rows, n] times W[e] read back: inner n, k columns
      rowsTimesExpert<<<tiles("zrt_grouped_matmul_grad", rowTiles(rows, experts), tilesOf(k)), kTileThreads, 0, s>>>(
          static_cast<const T *>(dout), static_cast<const T *>(w), offsets, static_cast<T *>(dxs), rows, experts, n,
          k, !transposeRhs, bad);
      zeroRowsPast<<<blocks(rows * k), kThreads, 0, s>>>(static_cast<T *>(dxs), offsets + experts, rows, k);
    }
    if (dw) { // dW[e] = xs^T dout ([k, n]) or, transposed, dout^T xs ([n, k])
      const T *p = static_cast<const T *>(transposeRhs ? dout : xs), *q = static_cast<const T *>(transposeRhs ? xs : dout);
      const int64_t pw = transposeRhs ? n : k, qw = transposeRhs ? k : n;
      expertRowsProduct<<<tiles("zrt_grouped_matmul_grad", tilesOf(pw), tilesOf(qw), experts), kTileThreads, 0, s>>>(
          p, q, offsets, static_cast<T *>(dw), rows, experts, pw, qw, bad);
    }
  }));
}

} // namespace zrt::cuda
