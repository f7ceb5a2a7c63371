// The widened bf16 product (cpu/WidenedMatmul.h): tiles of A and B widened to f32, oneDNN's
// f32 GEMM (runtime-dispatched JIT, so it runs at whatever vector width the CPU has) summing
// over K tiles into an f32 tile of C, that tile rounded to bf16 once its K loop ends; the
// copies are the ISA level's (cpu/Bf16Rows.h).
#include "cpu/WidenedMatmul.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <omp.h>

#include "core/Error.h"
#include "cpu/IsaKernels.h"
#include "cpu/Sgemm.h"

namespace zrt::cpu {
namespace {

/// Grow-only f32 buffer: one per tile role and calling thread, so the steady state allocates
/// nothing and concurrent callers never share one.
class TileBuffer {
public:
  float *get(int64_t elements) {
    if (elements > capacity_) {
      data_.reset(new float[elements]);
      capacity_ = elements;
    }
    return data_.get();
  }

private:
  std::unique_ptr<float[]> data_;
  int64_t capacity_ = 0;
};

/// Thread t's share [lo, hi) of `extent`: equal panels, in whole 16-value vectors.
std::pair<int64_t, int64_t> panelOf(int64_t extent, int t, int threads) {
  int64_t size = (extent + threads - 1) / threads;
  size = (size + 15) / 16 * 16;
  const int64_t lo = std::min(extent, t * size);
  return {lo, std::min(extent, lo + size)};
}

/// One 2-D product C (m x n, row stride n) = op(A) op(B), A stored m x k (k x m when
/// transA), B k x n (n x k when transB), all dense.
///
/// Each thread owns a panel of C's tile: rows when the tile is taller than wide (the thread
/// widens its rows of A; all threads read the B tile, which they widen together first),
/// columns otherwise. A thread widens, multiplies (oneDNN's GEMM runs single-threaded inside
/// the team) and rounds its own panel, so no tile crosses cores between the passes, and a K
/// step wakes the team once. (Widening in one pass and running a threaded GEMM after it cost
/// 30-40% over the f32 GEMM at the GPT example's shapes; panels cost 10-15%.)
void widenedGemm(const bf16 *a, const bf16 *b, bf16 *c, int64_t m, int64_t n, int64_t k,
                 bool transA, bool transB, const WidenTiles &tiles) {
  thread_local TileBuffer aBuffer, bBuffer, cBuffer;
  const IsaKernels &isa = isaKernels();
  const int64_t tm = std::min(m, tiles.m), tn = std::min(n, tiles.n), tk = std::min(k, tiles.k);
  float *aTile = aBuffer.get(tm * std::max<int64_t>(tk, 1));
  float *bTile = bBuffer.get(std::max<int64_t>(tk, 1) * tn);
  float *cTile = cBuffer.get(tm * tn);
  for (int64_t i0 = 0; i0 < m; i0 += tm) {
    const int64_t mc = std::min(tm, m - i0);
    for (int64_t j0 = 0; j0 < n; j0 += tn) {
      const int64_t nc = std::min(tn, n - j0);
      const bool rowPanels = mc >= nc;
      if (k == 0) {
        std::memset(cTile, 0, sizeof(float) * mc * nc);
        isa.roundRows(cTile, nc, mc, nc, c + i0 * n + j0, n);
      }
      for (int64_t p0 = 0; p0 < k; p0 += tk) {
        const int64_t kc = std::min(tk, k - p0);
        const float beta = p0 == 0 ? 0.0f : 1.0f;
        const bool last = p0 + kc >= k;
#pragma omp parallel if (2.0 * mc * nc * kc >= tiles.minParallelFlops)
        {
          const int t = omp_get_thread_num(), threads = omp_get_num_threads();
          // The operand every thread reads, widened together: each thread a slice of its rows.
          if (rowPanels) {
            auto [lo, hi] = panelOf(transB ? nc : kc, t, threads);
            if (transB)
              isa.widenRows(b + (j0 + lo) * k + p0, k, hi - lo, kc, bTile + lo * kc, kc);
            else
              isa.widenRows(b + (p0 + lo) * n + j0, n, hi - lo, nc, bTile + lo * nc, nc);
          } else {
            auto [lo, hi] = panelOf(transA ? kc : mc, t, threads);
            if (transA)
              isa.widenRows(a + (p0 + lo) * m + i0, m, hi - lo, mc, aTile + lo * mc, mc);
            else
              isa.widenRows(a + (i0 + lo) * k + p0, k, hi - lo, kc, aTile + lo * kc, kc);
          }
#pragma omp barrier
          auto [lo, hi] = panelOf(rowPanels ? mc : nc, t, threads);
          const int64_t width = hi - lo;
          if (width > 0 && rowPanels) {
            // Rows [lo, hi) of C: this thread's rows of A (its columns, when A is stored
            // transposed), dense in its own stretch of the A tile.
            float *aPanel = aTile + lo * kc;
            if (transA)
              isa.widenRows(a + p0 * m + i0 + lo, m, kc, width, aPanel, width);
            else
              isa.widenRows(a + (i0 + lo) * k + p0, k, width, kc, aPanel, kc);
            float *cPanel = cTile + lo * nc;
            sgemm("zrt_matmul", transA, transB, width, nc, kc, aPanel, transA ? width : kc, bTile,
                  transB ? kc : nc, beta, cPanel, nc);
            if (last)
              isa.roundRows(cPanel, nc, width, nc, c + (i0 + lo) * n + j0, n);
          } else if (width > 0) {
            // Columns [lo, hi) of C: this thread's columns of B (its rows, when B is stored
            // transposed), dense in its own stretch of the B tile.
            float *bPanel = bTile + lo * kc;
            if (transB)
              isa.widenRows(b + (j0 + lo) * k + p0, k, width, kc, bPanel, kc);
            else
              isa.widenRows(b + p0 * n + j0 + lo, n, kc, width, bPanel, width);
            float *cPanel = cTile + lo;
            sgemm("zrt_matmul", transA, transB, mc, width, kc, aTile, transA ? mc : kc, bPanel,
                  transB ? kc : width, beta, cPanel, nc);
            if (last)
              isa.roundRows(cPanel, nc, mc, width, c + i0 * n + j0 + lo, n);
          }
        }
      }
    }
  }
}

} // namespace

void widenedMatmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &s,
                   const WidenTiles &tiles) {
  if (s.batch <= 0 || s.m <= 0 || s.n <= 0)
    return;
  if (tiles.m <= 0 || tiles.n <= 0 || tiles.k <= 0)
    fatal("zrt_matmul", "widened bf16 matmul: tile sizes must be positive");
  // A shared B and an untransposed A: the batch is more rows of one product.
  if (s.bShared && !s.transA) {
    widenedGemm(a, b, c, s.batch * s.m, s.n, s.k, false, s.transB, tiles);
    return;
  }
  for (int64_t i = 0; i < s.batch; ++i)
    widenedGemm(a + i * s.m * s.k, b + (s.bShared ? 0 : i * s.k * s.n), c + i * s.m * s.n, s.m,
                s.n, s.k, s.transA, s.transB, tiles);
}

} // namespace zrt::cpu
