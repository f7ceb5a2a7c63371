// The widened bf16 product (cpu/WidenedMatmul.h): tiles of A and B widened to f32, oneDNN's
// f32 GEMM (runtime-dispatched JIT, so it runs at whatever vector width the CPU has) summing
// over K tiles into an f32 tile of C, that tile rounded to bf16 once its K loop ends.
#include "cpu/WidenedMatmul.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/Error.h"
#include "cpu/Parallel.h"

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

/// Row work items: enough rows per item that a parallel loop is worth waking the team for.
int64_t rowGrain(int64_t cols) { return std::max<int64_t>(1, kElementGrain / std::max<int64_t>(cols, 1)); }

/// dst (rows x cols, dense) = the bf16 rows at src, `stride` elements apart, widened exactly.
void widen(const bf16 *src, int64_t stride, int64_t rows, int64_t cols, float *dst) {
  parallelFor(rows, rowGrain(cols), [&](int64_t r) {
    const bf16 *s = src + r * stride;
    float *d = dst + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      d[c] = bf16::toFloat(s[c].bits);
  });
}

/// The bf16 rows at dst, `stride` apart = src (rows x cols, dense), rounded to nearest even.
void roundInto(const float *src, int64_t rows, int64_t cols, bf16 *dst, int64_t stride) {
  parallelFor(rows, rowGrain(cols), [&](int64_t r) {
    const float *s = src + r * cols;
    bf16 *d = dst + r * stride;
    for (int64_t c = 0; c < cols; ++c)
      d[c].bits = bf16::fromFloat(s[c]);
  });
}

/// One 2-D product C (m x n, row stride n) = op(A) op(B), A stored m x k (k x m when
/// transA), B k x n (n x k when transB), all dense.
void widenedGemm(const bf16 *a, const bf16 *b, bf16 *c, int64_t m, int64_t n, int64_t k,
                 bool transA, bool transB, const WidenTiles &tiles) {
  thread_local TileBuffer aBuffer, bBuffer, cBuffer;
  const int64_t tm = std::min(m, tiles.m), tn = std::min(n, tiles.n), tk = std::min(k, tiles.k);
  float *aTile = aBuffer.get(tm * std::max<int64_t>(tk, 1));
  float *bTile = bBuffer.get(std::max<int64_t>(tk, 1) * tn);
  float *cTile = cBuffer.get(tm * tn);
  for (int64_t i0 = 0; i0 < m; i0 += tm) {
    const int64_t mc = std::min(tm, m - i0);
    for (int64_t j0 = 0; j0 < n; j0 += tn) {
      const int64_t nc = std::min(tn, n - j0);
      if (k == 0)
        std::memset(cTile, 0, sizeof(float) * mc * nc);
      for (int64_t p0 = 0; p0 < k; p0 += tk) {
        const int64_t kc = std::min(tk, k - p0);
        // Each tile keeps its operand's orientation, so every widened row is a contiguous
        // run of the source row and the GEMM transposes as the caller asked.
        if (transA)
          widen(a + p0 * m + i0, m, kc, mc, aTile);
        else
          widen(a + i0 * k + p0, k, mc, kc, aTile);
        if (transB)
          widen(b + j0 * k + p0, k, nc, kc, bTile);
        else
          widen(b + p0 * n + j0, n, kc, nc, bTile);
        dnnl::status status =
            dnnl::sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', mc, nc, kc, 1.0f, aTile,
                        transA ? mc : kc, bTile, transB ? kc : nc, p0 == 0 ? 0.0f : 1.0f, cTile, nc);
        if (status != dnnl::status::success)
          fatal("zrt_matmul", "widened bf16 matmul: oneDNN f32 GEMM %lldx%lldx%lld failed (status %d)",
                static_cast<long long>(mc), static_cast<long long>(nc), static_cast<long long>(kc),
                static_cast<int>(status));
      }
      roundInto(cTile, mc, nc, c + i0 * n + j0, n);
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
