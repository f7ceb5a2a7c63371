// The widened bf16 matmul (cpu/WidenedMatmul.h): batches and shared operands folded into
// 2-D products, each run by the ISA level's widened GEMM (cpu/WidenedGemm.h).
#include "cpu/WidenedMatmul.h"

#include "core/Error.h"
#include "cpu/IsaKernels.h"

namespace zrt::cpu {

void widenedMatmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &s,
                   const WidenTiles &tiles) {
  if (s.batch <= 0 || s.m <= 0 || s.n <= 0)
    return;
  if (tiles.m <= 0 || tiles.n <= 0 || tiles.k <= 0)
    fatal("zrt_matmul", "widened bf16 matmul: tile sizes must be positive");
  const IsaKernels &isa = isaKernels();
  // A shared B and an untransposed A: the batch is more rows of one product.
  if (s.bShared && !s.transA) {
    isa.widenedGemm(a, b, c, s.batch * s.m, s.n, s.k, false, s.transB, tiles);
    return;
  }
  for (int64_t i = 0; i < s.batch; ++i)
    isa.widenedGemm(a + i * s.m * s.k, b + (s.bShared ? 0 : i * s.k * s.n), c + i * s.m * s.n, s.m,
                    s.n, s.k, s.transA, s.transB, tiles);
}

} // namespace zrt::cpu
