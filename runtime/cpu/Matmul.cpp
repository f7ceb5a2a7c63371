// Matrix products on the path chosen per shape (cpu/MatmulPlan.h): f32 through oneDNN's GEMM,
// its matmul primitive or OpenBLAS, bf16 through oneDNN's bf16 primitive or widened to f32
// (cpu/WidenedMatmul.h); f64 (the tests' finite-difference references) through BLAS.
//
// Why not BLAS for f32: OpenBLAS picks its kernels from the CPU model, and on CPUs it
// does not know (AVX-512 AMD parts among them) falls back to AVX2 kernels, while oneDNN
// generates code for the instruction sets CPUID reports: 30% faster GPT steps on this
// machine's AMD EPYC (47 -> 35 ms, one thread).
#include "cpu/Matmul.h"

#include <cblas.h>
#include <dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "core/Error.h"
#include "cpu/MatmulPlan.h"
#include "cpu/Sgemm.h"
#include "cpu/WidenedMatmul.h"

namespace zrt::cpu {
namespace {

/// One GEMM per batch element, except when B is shared and A is not
/// transposed: then the batch folds into M and one GEMM does all the work.
template <class T, class Gemm>
void batchedGemm(const T *a, const T *b, T *c, const MatmulShape &s, Gemm gemm) {
  if (s.batch <= 0 || s.m <= 0 || s.n <= 0)
    return;
  const CBLAS_TRANSPOSE ta = s.transA ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = s.transB ? CblasTrans : CblasNoTrans;
  const int64_t lda = s.transA ? s.m : s.k, ldb = s.transB ? s.k : s.n, ldc = s.n;
  if (s.bShared && !s.transA) {
    gemm(CblasRowMajor, ta, tb, s.batch * s.m, s.n, s.k, T(1), a, lda, b, ldb, T(0), c, ldc);
    return;
  }
  for (int64_t i = 0; i < s.batch; ++i)
    gemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, T(1), a + i * s.m * s.k,
         lda, b + (s.bShared ? 0 : i * s.k * s.n), ldb, T(0), c + i * s.m * s.n, ldc);
}

/// oneDNN primitives are expensive to create and cheap to run: one per shape and
/// type, created on first use and kept for the life of the process. A shape oneDNN has
/// no primitive for is remembered too, so it is asked once.
class DnnlMatmul {
public:
  using Type = dnnl::memory::data_type;

  static DnnlMatmul &instance() {
    static DnnlMatmul dnnl;
    return dnnl;
  }

  /// The primitive for this type and shape, or nullopt (and why, in `why`) where oneDNN has
  /// none on this CPU.
  /// A product whose m or k varies has one, made for any value of it (DNNL_RUNTIME_DIM_VAL).
  std::optional<dnnl::matmul> primitive(Type type, const MatmulShape &s, std::string *why = nullptr) {
    const int64_t any = DNNL_RUNTIME_DIM_VAL;
    const int64_t m = s.varies == MatmulVarying::M ? any : s.m, k = s.varies == MatmulVarying::K ? any : s.k;
    Key key{type, s.batch, m, s.n, k, s.transA, s.transB, s.bShared};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = primitives_.find(key);
    if (it == primitives_.end()) {
      Entry entry;
      try {
        // oneDNN 2.x (Debian 12): op descriptor first, then the primitive descriptor.
        dnnl::matmul::desc opDesc(describe(type, s.batch, m, k, s.transA, false),
                                  describe(type, s.batch, k, s.n, s.transB, s.bShared),
                                  describe(type, s.batch, m, s.n, false, false));
        entry.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(opDesc, engine_));
        ++created_;
      } catch (const dnnl::error &e) {
        entry.why = e.what();
      }
      it = primitives_.emplace(key, std::move(entry)).first;
    }
    if (why)
      *why = it->second.why;
    return it->second.primitive;
  }

  void execute(const dnnl::matmul &primitive, Type type, const void *a, const void *b, void *c,
               const MatmulShape &s) {
    dnnl::memory aMem(describe(type, s.batch, s.m, s.k, s.transA, false), engine_, const_cast<void *>(a));
    dnnl::memory bMem(describe(type, s.batch, s.k, s.n, s.transB, s.bShared), engine_,
                      const_cast<void *>(b));
    dnnl::memory cMem(describe(type, s.batch, s.m, s.n, false, false), engine_, c);
    primitive.execute(stream_, {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}, {DNNL_ARG_DST, cMem}});
    stream_.wait();
  }

private:
  using Key = std::tuple<Type, int64_t, int64_t, int64_t, int64_t, bool, bool, bool>;
  struct Entry {
    std::optional<dnnl::matmul> primitive;
    std::string why;
  };

  static dnnl::memory::desc describe(Type type, int64_t batch, int64_t rows, int64_t cols,
                                     bool transposed, bool shared) {
    using dims = dnnl::memory::dims;
    // Logical [batch, rows, cols]; a transposed operand is stored [batch, cols, rows]. A size
    // left to run time (DNNL_RUNTIME_DIM_VAL) leaves the strides it scales to run time too.
    const int64_t any = DNNL_RUNTIME_DIM_VAL;
    auto times = [&](int64_t x, int64_t y) { return x == any || y == any ? any : x * y; };
    dims shape{shared ? 1 : batch, rows, cols};
    dims strides = transposed ? dims{times(rows, cols), 1, rows} : dims{times(rows, cols), cols, 1};
    return dnnl::memory::desc(shape, type, strides);
  }

public:
  int64_t created() {
    std::lock_guard<std::mutex> lock(mutex_);
    return created_;
  }

private:
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_}; // CPU streams execute in the calling thread
  std::mutex mutex_;
  std::map<Key, Entry> primitives_;
  int64_t created_ = 0;
};

std::string shapeText(const char *typeName, const MatmulShape &s) {
  char text[160];
  std::snprintf(text, sizeof text, "oneDNN %s matmul %lldx%lldx%lld (batch %lld)", typeName,
                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                static_cast<long long>(s.batch));
  return text;
}

/// Runs the oneDNN primitive of this shape; false where oneDNN has none (and `mayLack`),
/// fatal where it has none and the caller has no other path.
bool runDnnl(DnnlMatmul::Type type, const char *typeName, const void *a, const void *b, void *c,
             const MatmulShape &shape, bool mayLack) {
  DnnlMatmul &dnnl = DnnlMatmul::instance();
  std::string why;
  std::optional<dnnl::matmul> primitive = dnnl.primitive(type, shape, &why);
  if (!primitive) {
    if (mayLack)
      return false;
    fatal("zrt_matmul", "%s failed: %s", shapeText(typeName, shape).c_str(), why.c_str());
  }
  try {
    dnnl.execute(*primitive, type, a, b, c, shape);
  } catch (const dnnl::error &e) {
    fatal("zrt_matmul", "%s failed: %s", shapeText(typeName, shape).c_str(), e.what());
  }
  return true;
}

/// dnnl_sgemm is the rule's f32 path, not oneDNN's matmul primitive: oneDNN 2.6's brgemm
/// matmul has shapes where it runs at a third to half of the GEMM (GPT-2 124M's MLP, one
/// thread of an AVX-512 core: 4096x3072x768 at 78 against 163 GF/s, the weight gradient
/// 768x3072x4096 at 44 against 159), and elsewhere the two are within a few percent
/// (bench/runtime/KernelBench.cpp); a plan measures each shape.
void sgemmProduct(const float *a, const float *b, float *c, const MatmulShape &shape) {
  // batchedGemm passes cblas_sgemm's arguments; its alpha is always 1, as sgemm's.
  batchedGemm(a, b, c, shape,
              [](CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
                sgemm("zrt_matmul", ta == CblasTrans, tb == CblasTrans, m, n, k, a, lda, b, ldb, beta, c,
                      ldc);
              });
}


} // namespace

/// oneDNN's name for the instruction set it generates code for.
std::string describeDnnlIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
  case dnnl::cpu_isa::sse41: return "sse41";
  case dnnl::cpu_isa::avx: return "avx";
  case dnnl::cpu_isa::avx2: return "avx2";
  case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
  case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
  case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
  case dnnl::cpu_isa::avx512_core: return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  default: return "unknown";
  }
}


const char *matmulPathName(MatmulPath path) {
  switch (path) {
  case MatmulPath::Sgemm: return "sgemm";
  case MatmulPath::Primitive: return "primitive";
  case MatmulPath::Blas: return "blas";
  case MatmulPath::Native: return "native";
  case MatmulPath::Widen: return "widen";
  }
  return "?";
}

bool pathComputes(MatmulPath path, int32_t dtype) {
  const bool bf16Path = path == MatmulPath::Native || path == MatmulPath::Widen;
  return dtype == ZRT_DTYPE_BF16 ? bf16Path : !bf16Path;
}

bool nativeBf16MatmulAvailable() {
  static const bool available = DnnlMatmul::instance()
                                    .primitive(dnnl::memory::data_type::bf16,
                                               MatmulShape{1, 16, 16, 16, false, false, false})
                                    .has_value();
  return available;
}

bool pathRuns(MatmulPath path, int32_t dtype, const MatmulShape &shape) {
  if (!pathComputes(path, dtype))
    return false;
  if (path == MatmulPath::Native)
    return nativeBf16MatmulAvailable() &&
           DnnlMatmul::instance().primitive(dnnl::memory::data_type::bf16, shape).has_value();
  if (path == MatmulPath::Primitive)
    return DnnlMatmul::instance().primitive(dnnl::memory::data_type::f32, shape).has_value();
  return true;
}

std::optional<MatmulPath> forcedMatmulPath(int32_t dtype, const char *call) {
  const bool isBf16 = dtype == ZRT_DTYPE_BF16;
  const char *variable = isBf16 ? "ZRT_BF16_MATMUL" : "ZRT_F32_MATMUL";
  const char *value = std::getenv(variable);
  if (!value || !*value || std::strcmp(value, "auto") == 0)
    return std::nullopt;
  for (MatmulPath path : kMatmulPaths)
    if (pathComputes(path, dtype) && std::strcmp(value, matmulPathName(path)) == 0) {
      if (path == MatmulPath::Native && !nativeBf16MatmulAvailable())
        fatal(call, "ZRT_BF16_MATMUL=native: oneDNN has no bf16 matmul on this CPU (its ISA: %s; "
                    "it needs AVX-512); use ZRT_BF16_MATMUL=widen or auto",
              describeDnnlIsa().c_str());
      return path;
    }
  fatal(call, "%s=%s: expected auto, %s", variable, value,
        isBf16 ? "native or widen" : "sgemm, primitive or blas");
}

/// Why the rule's bf16 path is native only where oneDNN drives AMX tiles: without AMX a bf16 dot
/// product (AVX512-BF16's vdpbf16ps, 64 flops) retires a quarter as often as an f32 FMA (32
/// flops) on a Sapphire Rapids core, so at half the flops (86 against 176 GF/s; oneDNN 2.6's
/// bf16 matmul at about 80 GF/s where its f32 GEMM runs at 160). An AMD Zen 5 core runs the same
/// instruction at 1.7x its f32 rate: which is why a plan measures, and the rule only serves
/// shapes outside it.
MatmulPath ruleMatmulPath(int32_t dtype) {
  if (dtype != ZRT_DTYPE_BF16)
    return MatmulPath::Sgemm;
  static const bool amx =
      dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx && nativeBf16MatmulAvailable();
  return amx ? MatmulPath::Native : MatmulPath::Widen;
}

void matmulOn(MatmulPath path, const float *a, const float *b, float *c, const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  switch (path) {
  case MatmulPath::Sgemm:
    sgemmProduct(a, b, c, shape);
    return;
  case MatmulPath::Primitive:
    runDnnl(dnnl::memory::data_type::f32, "f32", a, b, c, shape, /*mayLack=*/false);
    return;
  case MatmulPath::Blas:
    batchedGemm(a, b, c, shape, cblas_sgemm);
    return;
  default:
    fatal("zrt_matmul", "the %s path computes bf16 products, not f32", matmulPathName(path));
  }
}

void matmulOn(MatmulPath path, const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  switch (path) {
  case MatmulPath::Widen:
    widenedMatmul(a, b, c, shape);
    return;
  case MatmulPath::Native:
    runDnnl(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape, /*mayLack=*/false);
    return;
  default:
    fatal("zrt_matmul", "the %s path computes f32 products, not bf16", matmulPathName(path));
  }
}

void matmul(const float *a, const float *b, float *c, const MatmulShape &shape) {
  // The plan first (rank 0's choice, forced paths included), then what this process forces.
  static const std::optional<MatmulPath> forced = forcedMatmulPath(ZRT_DTYPE_F32, "zrt_matmul");
  matmulOn(plannedMatmulPath(ZRT_DTYPE_F32, shape).value_or(forced.value_or(MatmulPath::Sgemm)), a, b, c, shape);
}

void matmul(const double *a, const double *b, double *c, const MatmulShape &shape) {
  batchedGemm(a, b, c, shape, cblas_dgemm);
}

void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  // The plan first (rank 0's choice, forced paths included: every rank runs the same), then
  // what this process forces.
  static const std::optional<MatmulPath> forced = forcedMatmulPath(ZRT_DTYPE_BF16, "zrt_matmul");
  if (std::optional<MatmulPath> path = plannedMatmulPath(ZRT_DTYPE_BF16, shape); path || forced) {
    matmulOn(path ? *path : *forced, a, b, c, shape);
    return;
  }
  // Outside a plan, the rule's path; native where oneDNN has a primitive for the shape.
  if (ruleMatmulPath(ZRT_DTYPE_BF16) == MatmulPath::Native &&
      runDnnl(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape, /*mayLack=*/true))
    return;
  widenedMatmul(a, b, c, shape);
}

namespace {
/// matmulPlannedAs for either dtype: `anyShape` is the path of that dtype that runs every shape.
template <class T>
void plannedAs(int32_t dtype, MatmulPath anyShape, const T *a, const T *b, T *c, const MatmulShape &shape,
               const MatmulShape &planned) {
  if (installedMatmulPlan().empty()) {
    matmul(a, b, c, shape);
    return;
  }
  const std::optional<MatmulPath> path = plannedMatmulPath(dtype, planned);
  MatmulShape varying = shape;
  varying.varies = planned.varies; // oneDNN's primitive for any such size, the one the plan timed
  matmulOn(path && pathRuns(*path, dtype, varying) ? *path : anyShape, a, b, c, varying);
}
} // namespace

void matmulPlannedAs(const float *a, const float *b, float *c, const MatmulShape &shape, const MatmulShape &planned) {
  plannedAs(ZRT_DTYPE_F32, MatmulPath::Sgemm, a, b, c, shape, planned);
}

void matmulPlannedAs(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape, const MatmulShape &planned) {
  plannedAs(ZRT_DTYPE_BF16, MatmulPath::Widen, a, b, c, shape, planned);
}

int64_t dnnlPrimitivesCreated() { return DnnlMatmul::instance().created(); }

std::string describeMatmulPaths(const char *call) {
  std::string text;
  for (int32_t dtype : {ZRT_DTYPE_F32, ZRT_DTYPE_BF16})
    if (std::optional<MatmulPath> forced = forcedMatmulPath(dtype, call))
      text += std::string(text.empty() ? "" : ", ") + (dtype == ZRT_DTYPE_BF16 ? "bf16" : "f32") +
              " matmul " + matmulPathName(*forced) + " (" +
              (dtype == ZRT_DTYPE_BF16 ? "ZRT_BF16_MATMUL" : "ZRT_F32_MATMUL") + ")";
  const std::string isa = "oneDNN " + describeDnnlIsa() +
                          (nativeBf16MatmulAvailable() ? " with" : " without") + " bf16 matmul";
  return text.empty() ? "matmul paths per shape (" + isa + ")" : text + ", " + isa;
}

} // namespace zrt::cpu
