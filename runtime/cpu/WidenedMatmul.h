// bf16 products on CPUs whose oneDNN has no bf16 matmul (Debian's oneDNN 2.6 has none below
// AVX-512): bf16 tiles widened to f32, an f32 GEMM accumulating in f32 over the whole K, the
// result rounded to bf16 to nearest even. That is the arithmetic of the native primitive
// (bf16 products are exact in f32, accumulation in f32, one rounding at the end), so the two
// paths differ only in the order of the f32 additions.
#ifndef ZRT_CPU_WIDENEDMATMUL_H
#define ZRT_CPU_WIDENEDMATMUL_H

#include <cstdint>

#include "cpu/Matmul.h"

namespace zrt::cpu {

/// Tile sizes of the widened product. Each widened tile is at most m*k, k*n or m*n floats,
/// so the scratch stays bounded (48 MiB per calling thread at the defaults) whatever the
/// product's size, and a product that fits one tile is one f32 GEMM. Re-widening costs one
/// conversion per 2*min(m, n) flops: under 1% at 2048.
struct WidenTiles {
  int64_t m = 2048, n = 2048, k = 2048;
  /// Tiles of fewer flops run on the calling thread alone: waking the team costs more.
  double minParallelFlops = 1 << 20;
};

/// C[b] = op(A[b]) op(B[b]) in bf16 through f32 tiles; same shapes as matmul().
void widenedMatmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape,
                   const WidenTiles &tiles = WidenTiles());

} // namespace zrt::cpu

#endif // ZRT_CPU_WIDENEDMATMUL_H
