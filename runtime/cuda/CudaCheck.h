// Error checks of the CUDA, cuBLASLt and NCCL calls: a failure is a fatal runtime error
// naming the call and the library's message (every rank stops, as with any zrt error).
#ifndef ZRT_CUDA_CUDACHECK_H
#define ZRT_CUDA_CUDACHECK_H

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/Error.h"

#define ZRT_CUDA_CHECK(call)                                                                       \
  do {                                                                                             \
    cudaError_t zrtStatus_ = (call);                                                               \
    if (zrtStatus_ != cudaSuccess)                                                                 \
      ::zrt::fatal("cuda", "%s failed: %s", #call, cudaGetErrorString(zrtStatus_));                \
  } while (0)

#define ZRT_CUBLAS_CHECK(call)                                                                     \
  do {                                                                                             \
    cublasStatus_t zrtStatus_ = (call);                                                            \
    if (zrtStatus_ != CUBLAS_STATUS_SUCCESS)                                                       \
      ::zrt::fatal("cublasLt", "%s failed: %s", #call, cublasLtGetStatusString(zrtStatus_));         \
  } while (0)

#endif // ZRT_CUDA_CUDACHECK_H
