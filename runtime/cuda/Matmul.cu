#include "cuda/Matmul.h"

#include <map>
#include <optional>
#include <mutex>
#include <tuple>

#include "cuda/CudaCheck.h"
#include "cuda/Kernels.h"

namespace zrt::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

/// One cached plan: descriptors and the heuristic's algorithm for a shape.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
};

// dtype, batch, m, n, k, transA, transB, bShared, epilogue (cublasLtEpilogue_t)
using Key = std::tuple<int32_t, int64_t, int64_t, int64_t, int64_t, bool, bool, bool, int>;

struct Library {
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  std::map<Key, std::optional<Plan>> plans;
  std::mutex mutex;
  Library() {
    ZRT_CUBLAS_CHECK(cublasLtCreate(&handle));
    ZRT_CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  }
};

Library &library() {
  static Library *lib = new Library(); // lives as long as the process: no teardown order issues
  return *lib;
}

cublasLtMatrixLayout_t layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch,
                              int64_t stride) {
  cublasLtMatrixLayout_t l;
  ZRT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  int32_t count = static_cast<int32_t>(batch);
  ZRT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  ZRT_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  return l;
}

/// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's "A" is our
/// B and its "B" our A, with the transposes kept.
/// A plan for `key`; `found` false when cuBLASLt has no algorithm (for an epilogue
/// that is a reason to run unfused, for a plain matmul an error).
Plan makePlan(const Key &key, bool &found) {
  auto [dtype, batch, m, n, k, transA, transB, bShared, epilogue] = key;
  cudaDataType type = dtype == 1 ? CUDA_R_16BF : CUDA_R_32F;
  Plan p;
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N; // our B
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N; // our A
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
  cublasLtEpilogue_t e = static_cast<cublasLtEpilogue_t>(epilogue);
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
  if (e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
    int64_t ld = n; // the auxiliary (pre-activation) tensor is laid out like the output
    ZRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)));
  }
  // Column-major views of the row-major buffers.
  // Our B: [k, n] row-major (or [n, k] when transposed) = column-major [n, k] (or [k, n]).
  p.a = transB ? layout(type, k, n, k, batch, bShared ? 0 : n * k) : layout(type, n, k, n, batch, bShared ? 0 : n * k);
  // Our A: [m, k] row-major (or [k, m]) = column-major [k, m] (or [m, k]).
  p.b = transA ? layout(type, m, k, m, batch, m * k) : layout(type, k, m, k, batch, m * k);
  p.c = layout(type, n, m, n, batch, m * n);

  cublasLtMatmulPreference_t pref;
  ZRT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t workspace = kWorkspaceBytes;
  ZRT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                        sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t result;
  int count = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(library().handle, p.desc, p.a, p.b, p.c, p.c, pref, 1,
                                                         &result, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  found = status == CUBLAS_STATUS_SUCCESS && count > 0;
  if (found)
    p.algo = result.algo;
  return p;
}

/// The cached plan of `key`, or null when cuBLASLt has none.
Plan *planFor(const Key &key) {
  Library &lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  auto it = lib.plans.find(key);
  if (it == lib.plans.end()) {
    bool found = false;
    Plan plan = makePlan(key, found);
    it = lib.plans.emplace(key, found ? std::optional<Plan>(plan) : std::nullopt).first;
  }
  return it->second ? &*it->second : nullptr;
}

} // namespace

void matmul(int32_t dtype, const void *a, const void *b, void *c, int64_t batch, int64_t m, int64_t n, int64_t k,
            bool transA, bool transB, bool bShared, cudaStream_t stream, bool accumulate) {
  if (!matmulHasWork(dtype, c, batch, m, n, k, accumulate, stream))
    return;
  Plan *plan = planFor(Key{dtype, batch, m, n, k, transA, transB, bShared, CUBLASLT_EPILOGUE_DEFAULT});
  if (!plan)
    fatal("cublasLt", "no algorithm for a %s matmul of batch %lld, m %lld, n %lld, k %lld", dtype == 1 ? "bf16" : "f32",
          static_cast<long long>(batch), static_cast<long long>(m), static_cast<long long>(n),
          static_cast<long long>(k));
  Library &lib = library();
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  ZRT_CUBLAS_CHECK(cublasLtMatmul(lib.handle, plan->desc, &alpha, b, plan->a, a, plan->b, &beta, c, plan->c, c,
                                  plan->c, &plan->algo, lib.workspace, kWorkspaceBytes, stream));
}

void matmulEpilogue(Epilogue epilogue, int32_t dtype, const void *a, const void *b, const void *vector, void *aux,
                    void *c, int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB, bool bShared,
                    cudaStream_t stream) {
  cublasLtEpilogue_t e = epilogue == Epilogue::Bias       ? CUBLASLT_EPILOGUE_BIAS
                         : epilogue == Epilogue::BiasGelu ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                                                          : CUBLASLT_EPILOGUE_DGELU_BGRAD;
  // Batched products would give per-batch bias gradients: those run unfused.
  Plan *plan = batch == 1 && k > 0 ? planFor(Key{dtype, batch, m, n, k, transA, transB, bShared, e}) : nullptr;
  if (!plan) {
    matmulEpilogueUnfused(epilogue, dtype, a, b, vector, aux, c, batch, m, n, k, transA, transB, bShared, stream);
    return;
  }
  Library &lib = library();
  // The per-call pointers of the epilogue.
  const void *biasPointer = vector;
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasPointer,
                                                  sizeof(biasPointer)));
  if (e != CUBLASLT_EPILOGUE_BIAS)
    ZRT_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
  const float alpha = 1.0f, beta = 0.0f;
  ZRT_CUBLAS_CHECK(cublasLtMatmul(lib.handle, plan->desc, &alpha, b, plan->a, a, plan->b, &beta, c, plan->c, c,
                                  plan->c, &plan->algo, lib.workspace, kWorkspaceBytes, stream));
}

} // namespace zrt::cuda
