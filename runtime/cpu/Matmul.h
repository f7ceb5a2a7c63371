// Matrix products: f32 and f64 through BLAS, bf16 through oneDNN (f32 accumulation).
#ifndef ZRT_CPU_MATMUL_H
#define ZRT_CPU_MATMUL_H

#include <cstdint>

#include "zrt/bf16.h"

namespace zrt::cpu {

/// Shapes of one matmul call: C[b] (m x n) = op(A[b]) (m x k) * op(B[b]) (k x n)
/// for b in [0, batch); A is stored m x k (k x m when transA), B k x n (n x k
/// when transB); with bShared one B serves every batch element.
struct MatmulShape {
  int64_t batch, m, n, k;
  bool transA, transB, bShared;
};

void matmul(const float *a, const float *b, float *c, const MatmulShape &shape);
void matmul(const double *a, const double *b, double *c, const MatmulShape &shape);
void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape);

} // namespace zrt::cpu

#endif // ZRT_CPU_MATMUL_H
