// bf16 products where oneDNN's bf16 primitive is missing or slower than its f32 GEMM (every
// CPU without AMX): bf16 widened to f32 as the operands are packed, f32 products and sums in
// registers, the result rounded to bf16 to nearest even once (cpu/WidenedGemm.h). That is the
// arithmetic of the native primitive (bf16 products are exact in f32, accumulation in f32, one
// rounding at the end), so the two paths differ only in the order of the f32 additions.
#ifndef ZRT_CPU_WIDENEDMATMUL_H
#define ZRT_CPU_WIDENEDMATMUL_H

#include <cstdint>

#include "cpu/Matmul.h"
#include "cpu/WidenTiles.h"

namespace zrt::cpu {

/// C[b] = op(A[b]) op(B[b]) in bf16 with f32 arithmetic; same shapes as matmul(). Runs the
/// GEMM of the process's ISA level (cpu/IsaKernels.h).
void widenedMatmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape,
                   const WidenTiles &tiles = WidenTiles());

} // namespace zrt::cpu

#endif // ZRT_CPU_WIDENEDMATMUL_H
