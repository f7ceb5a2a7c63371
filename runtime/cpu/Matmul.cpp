// Matrix products: f32 and bf16 through oneDNN (bf16 accumulates in f32), f64 (the tests'
// finite-difference references) through BLAS.
//
// Why not BLAS for f32: OpenBLAS picks its kernels from the CPU model, and on CPUs it
// does not know (AVX-512 AMD parts among them) falls back to AVX2 kernels, while oneDNN
// generates code for the instruction sets CPUID reports: 30% faster GPT steps on this
// machine's AMD EPYC (47 -> 35 ms, one thread).
#include "cpu/Matmul.h"

#include <cblas.h>
#include <dnnl.hpp>

#include <map>
#include <mutex>
#include <tuple>

#include "core/Error.h"

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
/// type, created on first use and kept for the life of the process.
struct DnnlMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine}; // CPU streams execute in the calling thread
  std::mutex mutex;
  using Type = dnnl::memory::data_type;
  using Key = std::tuple<Type, int64_t, int64_t, int64_t, int64_t, bool, bool, bool>;
  std::map<Key, dnnl::matmul> primitives;

  static dnnl::memory::desc describe(Type type, int64_t batch, int64_t rows, int64_t cols,
                                     bool transposed, bool shared) {
    using dims = dnnl::memory::dims;
    // Logical [batch, rows, cols]; a transposed operand is stored [batch, cols, rows].
    dims shape{shared ? 1 : batch, rows, cols};
    dims strides = transposed ? dims{rows * cols, 1, rows} : dims{rows * cols, cols, 1};
    return dnnl::memory::desc(shape, type, strides);
  }

  void run(Type type, const void *a, const void *b, void *c, const MatmulShape &s) {
    auto aDesc = describe(type, s.batch, s.m, s.k, s.transA, false);
    auto bDesc = describe(type, s.batch, s.k, s.n, s.transB, s.bShared);
    auto cDesc = describe(type, s.batch, s.m, s.n, false, false);
    Key key{type, s.batch, s.m, s.n, s.k, s.transA, s.transB, s.bShared};
    dnnl::matmul primitive;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = primitives.find(key);
      if (it == primitives.end()) {
        // oneDNN 2.x (Debian 12): op descriptor first, then the primitive descriptor.
        dnnl::matmul::desc opDesc(aDesc, bDesc, cDesc);
        dnnl::matmul::primitive_desc pd(opDesc, engine);
        it = primitives.emplace(key, dnnl::matmul(pd)).first;
      }
      primitive = it->second;
    }
    dnnl::memory aMem(aDesc, engine, const_cast<void *>(a));
    dnnl::memory bMem(bDesc, engine, const_cast<void *>(b));
    dnnl::memory cMem(cDesc, engine, c);
    primitive.execute(stream, {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}, {DNNL_ARG_DST, cMem}});
    stream.wait();
  }
};

void dnnlMatmul(DnnlMatmul::Type type, const char *typeName, const void *a, const void *b, void *c,
                const MatmulShape &shape) {
  if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0)
    return;
  static DnnlMatmul instance;
  try {
    instance.run(type, a, b, c, shape);
  } catch (const dnnl::error &e) {
    fatal("zrt_matmul", "oneDNN %s matmul %lldx%lldx%lld (batch %lld) failed: %s", typeName,
          static_cast<long long>(shape.m), static_cast<long long>(shape.n),
          static_cast<long long>(shape.k), static_cast<long long>(shape.batch), e.what());
  }
}

} // namespace

void matmul(const float *a, const float *b, float *c, const MatmulShape &shape) {
  dnnlMatmul(dnnl::memory::data_type::f32, "f32", a, b, c, shape);
}

void matmul(const double *a, const double *b, double *c, const MatmulShape &shape) {
  batchedGemm(a, b, c, shape, cblas_dgemm);
}

void matmul(const bf16 *a, const bf16 *b, bf16 *c, const MatmulShape &shape) {
  dnnlMatmul(dnnl::memory::data_type::bf16, "bf16", a, b, c, shape);
}

} // namespace zrt::cpu
