// CUDA's runtime API on HIP-CPU (third_party/hip-cpu): what runtime/cuda's kernels and their
// launch wrappers call, so the same sources run as C++ on a CPU (test/CudaOnCpu/README.md).
// Device memory is host memory; streams are HIP-CPU's task queues (a launch is asynchronous,
// as on a GPU); a block's threads are fibers, run one after the other between barriers.
#ifndef ZRT_CUDA_ON_CPU_CUDA_RUNTIME_H
#define ZRT_CUDA_ON_CPU_CUDA_RUNTIME_H

#include <hip/hip_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>

using cudaError_t = hipError_t;
using cudaStream_t = hipStream_t;
using cudaMemcpyKind = hipMemcpyKind;
constexpr cudaError_t cudaSuccess = hipSuccess;
constexpr cudaError_t cudaErrorInvalidValue = hipErrorInvalidValue;
constexpr cudaError_t cudaErrorInvalidConfiguration = hipErrorInvalidConfiguration;
constexpr cudaMemcpyKind cudaMemcpyHostToDevice = hipMemcpyHostToDevice;
constexpr cudaMemcpyKind cudaMemcpyDeviceToHost = hipMemcpyDeviceToHost;
constexpr cudaMemcpyKind cudaMemcpyDeviceToDevice = hipMemcpyDeviceToDevice;

enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize };

namespace zrt::cudaoncpu {

/// The device the kernels are checked against: the oldest the CUDA build targets (sm_80, an
/// A100: 163 KiB of shared memory a block after opting in), so a launch that only an H100
/// could take fails here too.
constexpr int kComputeMajor = 8, kComputeMinor = 0;
constexpr size_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kOptInSharedBytes = 163 * 1024;

/// A launch's or an API call's error, returned (and cleared) by the next cudaGetLastError, as
/// CUDA returns a rejected launch's.
void setError(cudaError_t error);
cudaError_t takeError();
/// cudaFuncSetAttribute's opt-in of a kernel (by address) to more dynamic shared memory.
void allowShared(const void *kernel, size_t bytes);

} // namespace zrt::cudaoncpu

inline cudaError_t cudaGetLastError() {
  const cudaError_t mine = zrt::cudaoncpu::takeError();
  const cudaError_t hip = hipGetLastError();
  return mine != cudaSuccess ? mine : hip;
}
inline const char *cudaGetErrorString(cudaError_t e) { return hipGetErrorString(e); }
inline cudaError_t cudaGetDeviceCount(int *count) { return hipGetDeviceCount(count); }
inline cudaError_t cudaGetDevice(int *device) { return hipGetDevice(device); }
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int /*device*/) {
  switch (attr) {
  case cudaDevAttrComputeCapabilityMajor: *value = zrt::cudaoncpu::kComputeMajor; break;
  case cudaDevAttrComputeCapabilityMinor: *value = zrt::cudaoncpu::kComputeMinor; break;
  }
  return cudaSuccess;
}
template <class Kernel> cudaError_t cudaFuncSetAttribute(Kernel *kernel, cudaFuncAttribute, int value) {
  if (value < 0 || size_t(value) > zrt::cudaoncpu::kOptInSharedBytes)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::allowShared(reinterpret_cast<const void *>(kernel), size_t(value));
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void **ptr, size_t bytes) { return hipMalloc(ptr, bytes); }
template <class T> cudaError_t cudaMalloc(T **ptr, size_t bytes) { return hipMalloc(reinterpret_cast<void **>(ptr), bytes); }
inline cudaError_t cudaFree(void *ptr) { return hipFree(ptr); }
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  return hipMemcpy(dst, src, bytes, kind);
}
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t stream = nullptr) {
  return hipMemcpyAsync(dst, src, bytes, kind, stream);
}
inline cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t stream = nullptr) {
  return hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream);
}
inline cudaError_t cudaMemset(void *dst, int value, size_t bytes) { return hipMemset(dst, value, bytes); }
inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream = nullptr) {
  return hipMemsetAsync(dst, value, bytes, stream);
}
inline cudaError_t cudaMallocHost(void **ptr, size_t bytes) { return hipHostMalloc(ptr, bytes); }
inline cudaError_t cudaFreeHost(void *ptr) { return hipHostFree(ptr); }
inline cudaError_t cudaDeviceSynchronize() { return hipDeviceSynchronize(); }
inline cudaError_t cudaStreamCreate(cudaStream_t *stream) { return hipStreamCreate(stream); }
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) { return hipStreamDestroy(stream); }
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return hipStreamSynchronize(stream); }
// HIP-CPU captures no graphs: a stream is never capturing.
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone, cudaStreamCaptureStatusActive, cudaStreamCaptureStatusInvalidated };
inline cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus *status) {
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

// Device code.
#define __align__(n) alignas(n)

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

#include "WarpSync.h"

#include "CudaOnCpuLaunch.h"

#endif // ZRT_CUDA_ON_CPU_CUDA_RUNTIME_H
