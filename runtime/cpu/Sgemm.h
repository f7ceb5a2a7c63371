// oneDNN's f32 GEMM (runtime-dispatched JIT at whatever vector width the CPU has), row-major,
// as the CPU backend's f32 products call it: zrt_matmul and the attention blocks. Its C entry point only, so an ISA level's object that includes this
// instantiates no library code of its own.
#ifndef ZRT_CPU_SGEMM_H
#define ZRT_CPU_SGEMM_H

#include <dnnl.h>

#include <cstdint>

#include "core/Error.h"

namespace zrt::cpu {

/// C (m x n, rows ldc apart) = op(A) op(B) + beta C; a failure is fatal, named after `call`.
inline void sgemm(const char *call, bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *a,
                  int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    fatal(call, "oneDNN f32 GEMM %lldx%lldx%lld failed (status %d)", static_cast<long long>(m),
          static_cast<long long>(n), static_cast<long long>(k), static_cast<int>(status));
}

} // namespace zrt::cpu

#endif // ZRT_CPU_SGEMM_H
