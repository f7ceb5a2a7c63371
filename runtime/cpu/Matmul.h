// Matrix products: f32 through oneDNN, bf16 through oneDNN's bf16 primitive where this CPU has
// AMX and through widened f32 tiles elsewhere (cpu/WidenedMatmul.h), f64 (the tests'
// finite-difference references) through BLAS.
#ifndef ZRT_CPU_MATMUL_H
#define ZRT_CPU_MATMUL_H

#include <cstdint>
#include <string>

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
/// On the path ZRT_BF16_MATMUL picks: `auto` (the default) runs oneDNN's bf16 primitive where
/// oneDNN has AMX (for every shape it can create one for; the rest widen) and widens elsewhere,
/// `native` and `widen` force one.
void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape);

/// The two ways a bf16 product runs: oneDNN's bf16 primitive (CPUs with AVX-512), or bf16
/// tiles widened to f32 through an f32 GEMM (any CPU). Both accumulate in f32 and round once.
enum class Bf16MatmulPath { Native, Widen };

/// Whether oneDNN creates bf16 matmuls on this CPU (probed once per process; Debian's
/// oneDNN 2.6 does not below AVX-512, nor under ONEDNN_MAX_CPU_ISA=AVX2).
bool nativeBf16MatmulAvailable();

/// A bf16 product on the given path whatever ZRT_BF16_MATMUL says (the tests compare paths);
/// Native where it is not available is a fatal error.
void matmulOn(Bf16MatmulPath path, const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape);

/// oneDNN's name for the instruction set it generates code for ("avx2", "avx512_core_bf16").
std::string describeDnnlIsa();

/// Checks ZRT_BF16_MATMUL (a value other than auto, native or widen, or native on a CPU
/// without it, is a fatal error naming the call) and says which path runs and why, for
/// the start-up log: "bf16 matmul native (oneDNN avx512_core_bf16)".
std::string describeBf16Matmul(const char *call);

} // namespace zrt::cpu

#endif // ZRT_CPU_MATMUL_H
