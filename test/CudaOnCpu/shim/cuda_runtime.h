// CUDA's runtime API on HIP-CPU (third_party/hip-cpu): what runtime/cuda's kernels and their
// launch wrappers call, so the same sources run as C++ on a CPU (test/CudaOnCpu/README.md).
// Device memory is host memory; streams and events are the shim's (CudaOnCpuStreams.h: a thread
// per stream, a launch is asynchronous as on a GPU); a block's threads are HIP-CPU's fibers, run
// one after the other between barriers.
#ifndef ZRT_CUDA_ON_CPU_CUDA_RUNTIME_H
#define ZRT_CUDA_ON_CPU_CUDA_RUNTIME_H

#include <hip/hip_runtime.h>

#include "CudaOnCpuStreams.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>

using cudaError_t = hipError_t;
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
inline cudaError_t cudaMallocHost(void **ptr, size_t bytes) { return hipHostMalloc(ptr, bytes); }
template <class T> cudaError_t cudaMallocHost(T **ptr, size_t bytes) {
  return hipHostMalloc(reinterpret_cast<void **>(ptr), bytes);
}
inline cudaError_t cudaFreeHost(void *ptr) { return hipHostFree(ptr); }
// Host memory is what the device reads here: registering it pins nothing.
constexpr unsigned cudaHostRegisterPortable = 1;
inline cudaError_t cudaHostRegister(void *ptr, size_t bytes, unsigned) {
  return ptr && bytes ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaHostUnregister(void *ptr) { return ptr ? cudaSuccess : cudaErrorInvalidValue; }
// ZRT_CUDA_ON_CPU_DEVICE_BYTES: the card's memory, for a test of what does not fit (free = total:
// the arenas are not counted against it); else the host's.
inline cudaError_t cudaMemGetInfo(size_t *free, size_t *total) {
  if (const char *bytes = std::getenv("ZRT_CUDA_ON_CPU_DEVICE_BYTES")) {
    *free = *total = std::strtoull(bytes, nullptr, 10);
    return cudaSuccess;
  }
  return hipMemGetInfo(free, total);
}

// Streams and events with CUDA's ordering rules (CudaOnCpuStreams.h).
constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDefault = 0, cudaEventBlockingSync = 1, cudaEventDisableTiming = 2;
constexpr unsigned cudaEventRecordDefault = 0, cudaEventRecordExternal = 1;
inline cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  *stream = zrt::cudaoncpu::createStream(/*blocking=*/true);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags) {
  *stream = zrt::cudaoncpu::createStream(!(flags & cudaStreamNonBlocking));
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  zrt::cudaoncpu::destroyStream(stream);
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  zrt::cudaoncpu::synchronizeStream(stream);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  zrt::cudaoncpu::synchronizeAll();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = zrt::cudaoncpu::createEvent();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) { return cudaEventCreate(event); }
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  zrt::cudaoncpu::destroyEvent(event);
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr) {
  if (!event)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::recordEvent(event, stream);
  return cudaSuccess;
}
// cudaEventRecordExternal matters inside a graph capture only, which never happens here.
inline cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = nullptr, unsigned = 0) {
  return cudaEventRecord(event, stream);
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned = 0) {
  if (!event)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::streamWaits(stream, event);
  return cudaSuccess;
}
constexpr cudaError_t cudaErrorNotReady = hipErrorNotReady;
inline cudaError_t cudaEventQuery(cudaEvent_t event) {
  return zrt::cudaoncpu::eventDone(event) ? cudaSuccess : cudaErrorNotReady;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  zrt::cudaoncpu::synchronizeEvent(event);
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  return zrt::cudaoncpu::elapsedMs(start, end, ms) ? cudaSuccess : cudaErrorNotReady;
}
#define CUDART_CB
using cudaHostFn_t = void (*)(void *);
inline cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *data) {
  zrt::cudaoncpu::enqueue(stream, [fn, data] { fn(data); });
  return cudaSuccess;
}

// Copies and fills, queued on the stream (the null stream's run now, cudaMemcpy's too).
constexpr cudaMemcpyKind cudaMemcpyDefault = hipMemcpyDefault;
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind,
                                   cudaStream_t stream = nullptr) {
  if (bytes == 0)
    return cudaSuccess;
  if (!dst || !src)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::enqueue(stream, [=] {
    zrt::cudaoncpu::modelCopyLatency(stream);
    std::memcpy(dst, src, bytes);
  });
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
inline cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind, cudaStream_t stream = nullptr) {
  if (width > dpitch || width > spitch)
    return cudaErrorInvalidValue;
  if (width == 0 || height == 0)
    return cudaSuccess;
  if (!dst || !src)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::enqueue(stream, [=] {
    zrt::cudaoncpu::modelCopyLatency(stream);
    for (size_t row = 0; row < height; ++row)
      std::memcpy(static_cast<char *>(dst) + row * dpitch, static_cast<const char *>(src) + row * spitch, width);
  });
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream = nullptr) {
  if (bytes == 0)
    return cudaSuccess;
  if (!dst)
    return cudaErrorInvalidValue;
  zrt::cudaoncpu::enqueue(stream, [=] { std::memset(dst, value, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void *dst, int value, size_t bytes) { return cudaMemsetAsync(dst, value, bytes, nullptr); }

// HIP-CPU captures no graphs: a stream is never capturing, and a capture is refused (train.bin
// --cuda-graphs off, or the MPI transport, which captures nothing).
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone, cudaStreamCaptureStatusActive, cudaStreamCaptureStatusInvalidated };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
constexpr cudaError_t cudaErrorNotSupported = hipErrorNotSupported;
inline cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus *status) {
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
struct CUgraph_st;
struct CUgraphExec_st;
using cudaGraph_t = CUgraph_st *;
using cudaGraphExec_t = CUgraphExec_st *;
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaErrorNotSupported; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *, cudaGraph_t, unsigned long long) {
  return cudaErrorNotSupported;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaErrorNotSupported; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaErrorNotSupported; }

// The device: one, an sm_80 as the launch checks assume, the host's memory.
inline cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }
struct cudaDeviceProp {
  char name[256];
  int major, minor;
  size_t totalGlobalMem;
  int multiProcessorCount;
};
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (device != 0)
    return cudaErrorInvalidValue;
  size_t free = 0, total = 0;
  (void)hipMemGetInfo(&free, &total);
  std::snprintf(prop->name, sizeof prop->name, "CUDA on the CPU (HIP-CPU, test/CudaOnCpu)");
  prop->major = zrt::cudaoncpu::kComputeMajor;
  prop->minor = zrt::cudaoncpu::kComputeMinor;
  prop->totalGlobalMem = total;
  prop->multiProcessorCount = 1;
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
