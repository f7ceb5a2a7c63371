// zc.matmul_cross_entropy on the CPU: a language-model head, its mean cross-entropy and both
// gradients, a chunk of rows at a time, so the logits never exist whole (at GPT-2's vocabulary
// of 50304 they are 0.8 GB for 4 x 1024 positions, and their gradient as much again).
//
// Per chunk: the logits by zrt_matmul's GEMM, each row's loss and gradient in place
// (math::crossEntropyRowAndGrad), the input's gradient rows by one more GEMM, and the chunk's
// product into the weight's gradient. With one chunk these are the calls and the arithmetic of
// the unfused ops, so the results are bitwise theirs; over several, the weight gradient sums
// the chunks in order (GEMM with beta = 1; for bf16 an f32 sum rounded once).
#ifndef ZRT_CPU_MATMULCROSSENTROPY_H
#define ZRT_CPU_MATMULCROSSENTROPY_H

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu/Loss.h"
#include "cpu/Matmul.h"
#include "cpu/Parallel.h"
#include "cpu/Sgemm.h"
#include "zrt/MatmulCrossEntropy.h"

namespace zrt::cpu {

namespace detail {
/// c += op(a) op(b) (one matrix, row-major) for the weight gradient's later chunks.
inline void addProduct(const float *a, const float *b, float *c, const MatmulShape &s, const MatmulCrossEntropyLayout &,
                       char *) {
  sgemm("zrt_matmul_cross_entropy", s.transA, s.transB, s.m, s.n, s.k, a, s.transA ? s.m : s.k, b,
        s.transB ? s.k : s.n, 1.0f, c, s.n);
}
inline void addProduct(const double *a, const double *b, double *c, const MatmulShape &s,
                       const MatmulCrossEntropyLayout &, char *) {
  cblas_dgemm(CblasRowMajor, s.transA ? CblasTrans : CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans, s.m, s.n,
              s.k, 1.0, a, s.transA ? s.m : s.k, b, s.transB ? s.k : s.n, 1.0, c, s.n);
}
/// bf16: the chunk's product in bf16 (the unfused matmul's rounding), summed in f32 in the
/// workspace; c holds the first chunk's product until the sum starts and the rounded sum after.
inline void addProduct(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &s, const MatmulCrossEntropyLayout &l,
                       char *workspace) {
  float *sum = reinterpret_cast<float *>(workspace + l.sumOffset);
  bf16 *part = reinterpret_cast<bf16 *>(workspace + l.partOffset);
  const int64_t n = s.m * s.n;
  matmul(a, b, part, s);
  parallelFor(n, kElementGrain, [&](int64_t i) {
    sum[i] += static_cast<float>(part[i]);
    c[i] = bf16(sum[i]);
  });
}
inline void startSum(const bf16 *c, int64_t n, const MatmulCrossEntropyLayout &l, char *workspace) {
  float *sum = reinterpret_cast<float *>(workspace + l.sumOffset);
  parallelFor(n, kElementGrain, [&](int64_t i) { sum[i] = static_cast<float>(c[i]); });
}
template <class T> void startSum(const T *, int64_t, const MatmulCrossEntropyLayout &, char *) {}
/// The sizes and labels both heads (with and without their backward) are called with.
inline void checkHead(const char *call, const int32_t *labels, int64_t rows, int64_t classes, int64_t channels,
                      int64_t chunkRows) {
  if (rows < 1 || classes < 1 || channels < 1 || chunkRows < 1 || chunkRows > rows)
    fatal(call, "bad sizes: %lld rows in chunks of %lld, %lld classes, %lld channels", static_cast<long long>(rows),
          static_cast<long long>(chunkRows), static_cast<long long>(classes), static_cast<long long>(channels));
  checkLabels(call, labels, rows, classes);
}
} // namespace detail

/// The products of one chunk of n rows: its logits, the input's gradient rows, and its part of
/// the weight gradient (through matmul() for the first chunk, and for every chunk in bf16).
struct ChunkProducts {
  MatmulShape logits, dx, dw;
  static ChunkProducts of(int64_t n, int64_t classes, int64_t channels, bool transW) {
    // dw = dlogits^T x ([classes, channels]) or x^T dlogits, as autodiff writes them.
    return {MatmulShape{1, n, classes, channels, false, transW, false},
            MatmulShape{1, n, channels, classes, false, !transW, false},
            transW ? MatmulShape{1, classes, channels, n, true, false, false}
                   : MatmulShape{1, channels, classes, n, true, false, false}};
  }
};

/// Every product matmulCrossEntropy runs through matmul() for these sizes (a plan covers them).
inline std::vector<MatmulShape> matmulCrossEntropyProducts(int64_t rows, int64_t classes, int64_t channels,
                                                           bool transW, int64_t chunkRows) {
  std::vector<MatmulShape> shapes;
  for (int64_t n : {std::min(chunkRows, rows), rows % chunkRows})
    if (n > 0) {
      const ChunkProducts p = ChunkProducts::of(n, classes, channels, transW);
      shapes.insert(shapes.end(), {p.logits, p.dx, p.dw});
    }
  return shapes;
}

/// x [rows, channels], w [classes, channels] (transW) or [channels, classes], labels [rows];
/// loss = mean cross-entropy of x op(w), dx and dw its gradients scaled by *dloss.
template <class T>
void matmulCrossEntropy(const T *x, const T *w, const int32_t *labels, const LossOf<T> *dloss, LossOf<T> *loss,
                        T *dx, T *dw, void *workspace, int64_t rows, int64_t classes, int64_t channels, bool transW,
                        int64_t chunkRows, double softcap = 0) {
  using A = Acc<T>;
  constexpr const char *kCall = "zrt_matmul_cross_entropy";
  detail::checkHead(kCall, labels, rows, classes, channels, chunkRows);
  const auto layout = MatmulCrossEntropyLayout::of(rows, classes, classes * channels, chunkRows, sizeof(T));
  char *ws = static_cast<char *>(workspace);
  A *rowLoss = reinterpret_cast<A *>(ws + layout.rowLossOffset);
  T *chunk = reinterpret_cast<T *>(ws + layout.chunkOffset);
  const A g = static_cast<A>(*dloss) / A(rows);
  const math::LogitCap<A> cap{A(softcap)};

  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    const T *xRows = x + r0 * channels;
    const ChunkProducts products = ChunkProducts::of(n, classes, channels, transW);
    matmul(xRows, w, chunk, products.logits);
    parallelFor(n, 16, [&](int64_t r) {
      rowLoss[r0 + r] = math::crossEntropyRowAndGrad<A>(chunk + r * classes, labels[r0 + r], classes, g, cap);
    });
    matmul(chunk, w, dx + r0 * channels, products.dx);
    const MatmulShape &dwShape = products.dw;
    const T *lhs = transW ? chunk : xRows, *rhs = transW ? xRows : chunk;
    if (r0 == 0) {
      matmul(lhs, rhs, dw, dwShape);
      continue;
    }
    if (r0 == chunkRows)
      detail::startSum(dw, classes * channels, layout, ws);
    detail::addProduct(lhs, rhs, dw, dwShape, layout, ws);
  }
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r)
    sum += rowLoss[r];
  *loss = static_cast<LossOf<T>>(sum / static_cast<double>(rows));
}

/// The loss alone (zc.matmul_cross_entropy_loss): each chunk's logits by zrt_matmul's GEMM, each
/// row's loss with crossEntropy's arithmetic, the mean in row order. With one chunk it is
/// bitwise the unfused matmul and cross_entropy.
template <class T>
void matmulCrossEntropyLoss(const T *x, const T *w, const int32_t *labels, LossOf<T> *loss, void *workspace,
                            int64_t rows, int64_t classes, int64_t channels, bool transW, int64_t chunkRows,
                            double softcap = 0) {
  using A = Acc<T>;
  constexpr const char *kCall = "zrt_matmul_cross_entropy_loss";
  detail::checkHead(kCall, labels, rows, classes, channels, chunkRows);
  const auto layout = MatmulCrossEntropyLayout::forLoss(rows, classes, chunkRows, sizeof(T));
  char *ws = static_cast<char *>(workspace);
  A *rowLoss = reinterpret_cast<A *>(ws + layout.rowLossOffset);
  T *chunk = reinterpret_cast<T *>(ws + layout.chunkOffset);
  const math::LogitCap<A> cap{A(softcap)};
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    matmul(x + r0 * channels, w, chunk, ChunkProducts::of(n, classes, channels, transW).logits);
    parallelFor(n, 16, [&](int64_t r) {
      rowLoss[r0 + r] = math::crossEntropyRow<A>(chunk + r * classes, labels[r0 + r], classes, cap);
    });
  }
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r)
    sum += rowLoss[r];
  *loss = static_cast<LossOf<T>>(sum / static_cast<double>(rows));
}

} // namespace zrt::cpu

#endif // ZRT_CPU_MATMULCROSSENTROPY_H
