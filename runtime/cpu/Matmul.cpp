// Matrix products: f32 and bf16 through oneDNN (bf16 accumulates in f32), bf16 widened to f32
// where oneDNN has no AMX (cpu/WidenedMatmul.h), f64 (the tests' finite-difference
// references) through BLAS.
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
  std::optional<dnnl::matmul> primitive(Type type, const MatmulShape &s, std::string *why = nullptr) {
    Key key{type, s.batch, s.m, s.n, s.k, s.transA, s.transB, s.bShared};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = primitives_.find(key);
    if (it == primitives_.end()) {
      Entry entry;
      try {
        // oneDNN 2.x (Debian 12): op descriptor first, then the primitive descriptor.
        dnnl::matmul::desc opDesc(describe(type, s.batch, s.m, s.k, s.transA, false),
                                  describe(type, s.batch, s.k, s.n, s.transB, s.bShared),
                                  describe(type, s.batch, s.m, s.n, false, false));
        entry.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(opDesc, engine_));
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
    // Logical [batch, rows, cols]; a transposed operand is stored [batch, cols, rows].
    dims shape{shared ? 1 : batch, rows, cols};
    dims strides = transposed ? dims{rows * cols, 1, rows} : dims{rows * cols, cols, 1};
    return dnnl::memory::desc(shape, type, strides);
  }

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_}; // CPU streams execute in the calling thread
  std::mutex mutex_;
  std::map<Key, Entry> primitives_;
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

/// Which bf16 path runs, from ZRT_BF16_MATMUL; read once.
enum class Bf16Mode { Auto, Native, Widen };

Bf16Mode bf16Mode(const char *call) {
  static const char *value = std::getenv("ZRT_BF16_MATMUL");
  if (!value || !*value || std::strcmp(value, "auto") == 0)
    return Bf16Mode::Auto;
  if (std::strcmp(value, "widen") == 0)
    return Bf16Mode::Widen;
  if (std::strcmp(value, "native") == 0) {
    if (!nativeBf16MatmulAvailable())
      fatal(call, "ZRT_BF16_MATMUL=native: oneDNN has no bf16 matmul on this CPU (its ISA: %s; "
                  "it needs AVX-512); use ZRT_BF16_MATMUL=widen or auto",
            describeDnnlIsa().c_str());
    return Bf16Mode::Native;
  }
  fatal(call, "ZRT_BF16_MATMUL=%s: expected auto, native or widen", value);
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

/// f32 through oneDNN's GEMM entry point, not its matmul primitive: oneDNN 2.6's brgemm
/// matmul has shapes where it runs at a third to half of the GEMM (GPT-2 124M's MLP, one
/// thread of an AVX-512 core: 4096x3072x768 at 78 against 163 GF/s, the weight gradient
/// 768x3072x4096 at 44 against 159), and elsewhere the two are within a few percent
/// (bench/runtime/KernelBench.cpp, BM_zrt_matmul_f32 against BM_onednn_f32_primitive).
void matmul(const float *a, const float *b, float *c, const MatmulShape &shape) {
  // batchedGemm passes cblas_dgemm's arguments; its alpha is always 1, as sgemm's.
  batchedGemm(a, b, c, shape,
              [](CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
                sgemm("zrt_matmul", ta == CblasTrans, tb == CblasTrans, m, n, k, a, lda, b, ldb, beta, c,
                      ldc);
              });
}

void matmul(const double *a, const double *b, double *c, const MatmulShape &shape) {
  batchedGemm(a, b, c, shape, cblas_dgemm);
}

bool nativeBf16MatmulAvailable() {
  static const bool available = DnnlMatmul::instance()
                                    .primitive(dnnl::memory::data_type::bf16,
                                               MatmulShape{1, 16, 16, 16, false, false, false})
                                    .has_value();
  return available;
}

/// Whether `auto` runs bf16 products on oneDNN's primitive: only where oneDNN drives AMX tiles.
/// Without AMX a bf16 dot product (AVX512-BF16's vdpbf16ps, 64 flops) retires a quarter as often
/// as an f32 FMA (32 flops), so at half the flops: on a Sapphire Rapids core without AMX, 86
/// against 176 GF/s, and oneDNN 2.6's bf16 matmul runs at about 80 GF/s where its f32 GEMM
/// runs at 160 (a 10.7M-parameter GPT step: 1925 ms native, 1228-1266 widened, 1210 fp32). The
/// widened GEMM (cpu/WidenedGemm.h) runs at f32 FMA rates and keeps bf16's halved bytes in memory.
bool nativeBf16MatmulPreferred() {
  static const bool preferred =
      dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx && nativeBf16MatmulAvailable();
  return preferred;
}

void matmulOn(Bf16MatmulPath path, const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  if (path == Bf16MatmulPath::Widen) {
    widenedMatmul(a, b, c, shape);
    return;
  }
  runDnnl(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape, /*mayLack=*/false);
}

void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  switch (bf16Mode("zrt_matmul")) {
  case Bf16Mode::Widen:
    widenedMatmul(a, b, c, shape);
    return;
  case Bf16Mode::Native:
    runDnnl(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape, /*mayLack=*/false);
    return;
  case Bf16Mode::Auto:
    // Chosen once per shape: oneDNN is asked once, its answer is kept with the primitives.
    if (!nativeBf16MatmulPreferred()) {
      widenedMatmul(a, b, c, shape);
      return;
    }
    if (!runDnnl(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape, /*mayLack=*/true)) {
      static std::once_flag noted;
      std::call_once(noted, [&] {
        std::fprintf(stderr, "zrt: zrt_matmul: %s: no native primitive, widened to f32 (said once)\n",
                     shapeText("bf16", shape).c_str());
      });
      widenedMatmul(a, b, c, shape);
    }
    return;
  }
}

std::string describeBf16Matmul(const char *call) {
  const Bf16Mode mode = bf16Mode(call);
  const std::string isa = describeDnnlIsa();
  // The kernels' level is on the same start-up line; the widened GEMM runs at that level.
  const std::string widened = "zcc's widened GEMM: bf16 widened while packed, f32 sums";
  if (mode == Bf16Mode::Widen)
    return "bf16 matmul widen (ZRT_BF16_MATMUL=widen: " + widened + ")";
  if (mode == Bf16Mode::Native)
    return "bf16 matmul native (ZRT_BF16_MATMUL=native: oneDNN " + isa + ")";
  if (nativeBf16MatmulPreferred())
    return "bf16 matmul native (oneDNN " + isa + "; shapes it lacks widen to f32)";
  if (nativeBf16MatmulAvailable())
    return "bf16 matmul widen (oneDNN " + isa + " has no AMX, its bf16 matmul runs below f32: " + widened +
           "; ZRT_BF16_MATMUL=native forces it)";
  return "bf16 matmul widen (oneDNN " + isa + " has no bf16 matmul: " + widened + ")";
}

} // namespace zrt::cpu
