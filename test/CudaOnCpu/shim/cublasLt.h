// What runtime/cuda/CudaCheck.h names of cuBLASLt. cuBLASLt itself does not run on the CPU: the
// matmuls are the CPU backend's (test/CudaOnCpu/CpuMatmul.cpp).
#ifndef ZRT_CUDA_ON_CPU_CUBLASLT_H
#define ZRT_CUDA_ON_CPU_CUBLASLT_H

enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0 };
inline const char *cublasLtGetStatusString(cublasStatus_t) { return "cuBLASLt is not on the CPU"; }

#endif // ZRT_CUDA_ON_CPU_CUBLASLT_H
