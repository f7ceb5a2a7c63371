// Matrix products: f32 through oneDNN's GEMM, its matmul primitive or OpenBLAS, bf16 through
// oneDNN's bf16 primitive or widened f32 tiles (cpu/WidenedMatmul.h), whichever the plan
// measured fastest for the shape (cpu/MatmulPlan.h); f64 (the tests' finite-difference
// references) through BLAS.
#ifndef ZRT_CPU_MATMUL_H
#define ZRT_CPU_MATMUL_H

#include <cstdint>
#include <optional>
#include <string>

#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace zrt::cpu {

/// Which size of a product changes from call to call: none, or m or k, an expert's row count in
/// a grouped product (its rows' product, or its weight gradient's).
enum class MatmulVarying : uint8_t { None, M, K };

/// Shapes of one matmul call: C[b] (m x n) = op(A[b]) (m x k) * op(B[b]) (k x n)
/// for b in [0, batch); A is stored m x k (k x m when transA), B k x n (n x k
/// when transB); with bShared one B serves every batch element. A product whose m or k
/// `varies` runs on one oneDNN primitive made for any value of it (DNNL_RUNTIME_DIM_VAL), where a
/// primitive per value would JIT a kernel for each expert's row count of each step; the plan
/// keeps it apart from a fixed product of the same sizes, since the two run different code.
struct MatmulShape {
  int64_t batch, m, n, k;
  bool transA, transB, bShared;
  MatmulVarying varies = MatmulVarying::None;
};

/// f32 on the path the plan (cpu/MatmulPlan.h) chose for this shape, else the one ZRT_F32_MATMUL
/// forces, else oneDNN's GEMM.
void matmul(const float *a, const float *b, float *c, const MatmulShape &shape);
void matmul(const double *a, const double *b, double *c, const MatmulShape &shape);
/// bf16 on the plan's path, else the one ZRT_BF16_MATMUL forces, else the rule's: oneDNN's bf16
/// primitive where oneDNN has AMX (for every shape it can create one for; the rest widen),
/// widened elsewhere.
void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape);

/// The ways a product runs. f32: oneDNN's GEMM entry point (dnnl_sgemm), oneDNN's matmul
/// primitive, OpenBLAS's cblas_sgemm. bf16: oneDNN's bf16 primitive (CPUs with AVX-512), or
/// bf16 tiles widened to f32 through zcc's GEMM (any CPU); both accumulate in f32 and round once.
/// Each sums in its own order, so two paths of one shape differ in the last bits.
enum class MatmulPath : uint8_t { Sgemm, Primitive, Blas, Native, Widen };
constexpr MatmulPath kMatmulPaths[] = {MatmulPath::Sgemm, MatmulPath::Primitive, MatmulPath::Blas,
                                       MatmulPath::Native, MatmulPath::Widen};
/// "sgemm", "primitive", "blas", "native", "widen" (the names ZRT_*_MATMUL and plans use).
const char *matmulPathName(MatmulPath path);
/// Whether `path` computes products of `dtype` (zrt_dtype).
bool pathComputes(MatmulPath path, int32_t dtype);

/// Whether oneDNN creates bf16 matmuls on this CPU (probed once per process; Debian's
/// oneDNN 2.6 does not below AVX-512, nor under ONEDNN_MAX_CPU_ISA=AVX2).
bool nativeBf16MatmulAvailable();
/// Whether `path` can run this shape here: oneDNN's primitives exist for it (Native, Primitive);
/// the GEMMs run every shape.
bool pathRuns(MatmulPath path, int32_t dtype, const MatmulShape &shape);

/// A product on the given path whatever the plan and ZRT_*_MATMUL say (the tests compare paths,
/// the tuner times them); a path of the other dtype, or one this CPU lacks, is a fatal error.
void matmulOn(MatmulPath path, const float *a, const float *b, float *c, const MatmulShape &shape);
void matmulOn(MatmulPath path, const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape);

/// A product whose m or k changes from call to call (an expert's rows of a grouped product:
/// `planned.varies` says which, and `planned` is the balanced count's shape that stands for it)
/// on the path the installed plan chose for `planned`; matmul()'s choice where no plan is
/// installed, and a path that runs every shape where the planned one has no primitive.
void matmulPlannedAs(const float *a, const float *b, float *c, const MatmulShape &shape, const MatmulShape &planned);
void matmulPlannedAs(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape, const MatmulShape &planned);
inline void matmulPlannedAs(const double *a, const double *b, double *c, const MatmulShape &shape,
                            const MatmulShape &) {
  matmul(a, b, c, shape);
}

/// The path ZRT_F32_MATMUL (f32) or ZRT_BF16_MATMUL (bf16) forces, if any; a value that is not
/// a path of that dtype, or native where this CPU has none, is a fatal error naming `call`.
std::optional<MatmulPath> forcedMatmulPath(int32_t dtype, const char *call);
/// The path of a shape no plan covers: dnnl_sgemm for f32; for bf16 native where oneDNN drives
/// AMX tiles, widened elsewhere (measured on a Sapphire Rapids core without AMX; a plan measures
/// instead of trusting it).
MatmulPath ruleMatmulPath(int32_t dtype);

/// How many oneDNN matmul primitives this process has created (each a JIT'ed kernel: the tests
/// check that a varying product makes one, not one per size met).
int64_t dnnlPrimitivesCreated();

/// oneDNN's name for the instruction set it generates code for ("avx2", "avx512_core_bf16").
std::string describeDnnlIsa();

/// Checks ZRT_F32_MATMUL and ZRT_BF16_MATMUL (forcedMatmulPath's errors) and says what decides
/// the paths, for the backend's start-up line: "matmul paths per shape (oneDNN avx512_core_bf16
/// with bf16 matmul)", or the forced ones.
std::string describeMatmulPaths(const char *call);

} // namespace zrt::cpu

#endif // ZRT_CPU_MATMUL_H
