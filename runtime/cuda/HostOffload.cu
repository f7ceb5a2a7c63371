// ZeRO-Offload on the CUDA backend: the optimizer's state (fp32 master weights, moments; with
// --offload-param cpu, ZeRO-3's parameter shards too) lives in the host tier, page-locked, and
// the CPU updates it beside the GPU. The compiled update calls zrt_adamw / zrt_sgd_momentum with
// state pointers into the host tier (zrt_tier_ptr); such a call runs here as
//
//   compute stream  ... the gradient is final ─► event
//   toHost stream   wait ─► chunk 0's gradient D2H ─► chunk 1's D2H ─► ...       (copy engine)
//   onHost stream   wait c0 ─► CPU update c0 ─► H2D c0 ─► wait c1 ─► CPU update c1 ─► H2D c1 ...
//
// so the copies of one chunk overlap the CPU's update of the one before, and consecutive update
// calls queue behind each other without the compute stream waiting between them: it waits once,
// when it is next given work (compute() calls joinHostWork), for all of them. The CPU update is
// a CUDA host function (no CUDA call inside) running the CPU backend's update (HostOptimizer.cpp).
//
// What the update writes for the device (a bf16 copy of the master, or an fp32 shard kept in the
// arena) goes back from a pinned mirror of that buffer; what lives in the host tier is written in
// place. DeepSpeed's ZeRO-Offload does the same with its CPU Adam, behind its backward hooks; zcc's
// update starts once the step's gradients are final (after the non-finite check, which may skip
// it), and overlaps its own copies and CPU work.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/Error.h"
#include "core/Tiers.h"
#include "cuda/CudaCheck.h"
#include "cuda/HostOptimizer.h"
#include "cuda/RuntimeState.h"

namespace zrt::cuda::abi {

namespace {

/// Elements per pipelined chunk: 8 MiB of fp32 state per tensor, long enough for the copy
/// engine to run at full PCIe speed, short enough that the first CPU update starts soon.
constexpr int64_t kChunkElements = int64_t(1) << 21;

int64_t pinnedBytes() {
  return std::max<int64_t>(kStoreAlignment, (tiers().hostBytes + kStoreAlignment - 1) / kStoreAlignment *
                                                kStoreAlignment);
}

/// A page-locked host copy of device buffer `device`, at least `bytes` long, kept for the next
/// steps (each update call site uses the same buffers every step).
char *mirror(CudaRuntime &r, const void *device, int64_t bytes) {
  CudaRuntime::HostSide::Mirror &m = r.hostSide.mirrors[device];
  if (m.bytes < bytes) {
    if (m.host) {
      drainHostWork(r); // nothing in flight reads the old one
      ZRT_CUDA_CHECK(cudaFreeHost(m.host));
    }
    ZRT_CUDA_CHECK(cudaMallocHost(&m.host, static_cast<size_t>(bytes)));
    m.bytes = bytes;
  }
  return static_cast<char *>(m.host);
}

/// The event's stream waits for `from`'s work so far.
void streamWaits(cudaStream_t stream, cudaStream_t from) {
  cudaEvent_t e;
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  ZRT_CUDA_CHECK(cudaEventRecord(e, from));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(stream, e, 0));
  ZRT_CUDA_CHECK(cudaEventDestroy(e)); // released once it completed
}

void CUDART_CB runChunk(void *chunk) {
  auto *c = static_cast<HostUpdateChunk *>(chunk);
  runHostUpdate(*c);
  delete c;
}

} // namespace

void runsEagerly(CudaRuntime &r, const char *call) {
  if (r.capturing >= 0)
    fatal(call, "host-side offload work cannot be captured in a CUDA graph; run train.bin with --cuda-graphs off");
  if (r.eagerRegion >= 0)
    r.graphs[r.eagerRegion].eagerOnly = true;
}

bool inHostTier(const void *p) {
  const char *host = tiers().host, *at = static_cast<const char *>(p);
  return host && at >= host && at < host + tiers().hostBytes;
}

void pinHostTier(CudaRuntime &r) {
  if (r.hostSide.pinned || !tiers().host)
    return;
  // Page-locked, so the copies are DMA from and to it, asynchronous to the host (pageable
  // memory would make every copy a staged, synchronous one).
  cudaError_t pinned = cudaHostRegister(tiers().host, static_cast<size_t>(pinnedBytes()), cudaHostRegisterPortable);
  if (pinned != cudaSuccess)
    fatal("zrt_tier_open", "cannot page-lock the %lld-byte host tier (%s): raise the locked-memory limit "
          "(ulimit -l) or offload less", static_cast<long long>(tiers().hostBytes), cudaGetErrorString(pinned));
  r.hostSide.pinned = true;
}

void unpinHostTier(CudaRuntime &r) {
  CudaRuntime::HostSide &h = r.hostSide;
  for (auto &entry : h.mirrors)
    cudaFreeHost(entry.second.host);
  h.mirrors.clear();
  if (h.toHost)
    cudaStreamDestroy(h.toHost);
  if (h.onHost)
    cudaStreamDestroy(h.onHost);
  if (h.done)
    cudaEventDestroy(h.done);
  h.toHost = h.onHost = nullptr;
  h.done = nullptr;
  h.pending = false;
  if (h.pinned)
    cudaHostUnregister(tiers().host);
  h.pinned = false;
}

void enqueueHostUpdate(CudaRuntime &r, const char *call, const HostUpdateChunk &whole) {
  CudaRuntime::HostSide &h = r.hostSide;
  // A host function would replay with the hyperparameters it was captured with.
  runsEagerly(r, call);
  if (whole.gradDtype != ZRT_DTYPE_F32 && whole.gradDtype != ZRT_DTYPE_BF16)
    fatal(call, "unknown gradient dtype %d (0 = f32, 1 = bf16)", whole.gradDtype);
  if (whole.n <= 0)
    return;
  if (!h.toHost) {
    ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&h.toHost, cudaStreamNonBlocking));
    ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&h.onHost, cudaStreamNonBlocking));
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&h.done, cudaEventDisableTiming));
  }
  const int64_t n = whole.n, gradBytes = whole.gradDtype == ZRT_DTYPE_BF16 ? 2 : 4;
  const bool paramOnDevice = !inHostTier(whole.param);
  const bool lowOnDevice = whole.paramBf16 && !inHostTier(whole.paramBf16);
  char *grad = mirror(r, whole.grad, n * gradBytes);
  float *param = paramOnDevice ? reinterpret_cast<float *>(mirror(r, whole.param, n * 4)) : whole.param;
  char *low = lowOnDevice ? mirror(r, whole.paramBf16, n * 2) : static_cast<char *>(whole.paramBf16);
  // The gradient is final at this point of the compute stream (the earlier host-side work needs
  // no wait: it touches other tensors).
  streamWaits(h.toHost, r.device->compute());
  // The clip coefficient too (4 bytes, copied with the gradient, read by every chunk's update).
  float *scale = whole.gradScale ? reinterpret_cast<float *>(mirror(r, whole.gradScale, sizeof(float))) : nullptr;
  if (scale)
    ZRT_CUDA_CHECK(cudaMemcpyAsync(scale, whole.gradScale, sizeof(float), cudaMemcpyDeviceToHost, h.toHost));
  for (int64_t first = 0; first < n; first += kChunkElements) {
    const int64_t count = std::min(kChunkElements, n - first);
    {
      GpuScope copy("offload_to_host", h.toHost, TraceTrack::Communication,
                    count * (gradBytes + (paramOnDevice ? 4 : 0)));
      ZRT_CUDA_CHECK(cudaMemcpyAsync(grad + first * gradBytes, static_cast<const char *>(whole.grad) + first * gradBytes,
                                     count * gradBytes, cudaMemcpyDeviceToHost, h.toHost));
      if (paramOnDevice)
        ZRT_CUDA_CHECK(cudaMemcpyAsync(param + first, whole.param + first, count * 4, cudaMemcpyDeviceToHost,
                                       h.toHost));
    }
    r.counters.swap_write_bytes += count * (gradBytes + (paramOnDevice ? 4 : 0));
    streamWaits(h.onHost, h.toHost);
    auto *chunk = new HostUpdateChunk(whole);
    chunk->param = param + first;
    chunk->grad = grad + first * gradBytes;
    chunk->m = whole.m + first;
    chunk->v = whole.v ? whole.v + first : nullptr;
    chunk->paramBf16 = low ? low + first * 2 : nullptr;
    chunk->n = count;
    chunk->gradScale = scale;
    ZRT_CUDA_CHECK(cudaLaunchHostFunc(h.onHost, runChunk, chunk));
    GpuScope copy("offload_to_device", h.onHost, TraceTrack::Communication,
                  count * ((paramOnDevice ? 4 : 0) + (lowOnDevice ? 2 : 0)));
    if (paramOnDevice)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(whole.param + first, param + first, count * 4, cudaMemcpyHostToDevice, h.onHost));
    if (lowOnDevice)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(whole.paramBf16) + first * 2, low + first * 2, count * 2,
                                     cudaMemcpyHostToDevice, h.onHost));
    r.counters.swap_read_bytes += count * ((paramOnDevice ? 4 : 0) + (lowOnDevice ? 2 : 0));
  }
  ZRT_CUDA_CHECK(cudaEventRecord(h.done, h.onHost));
  h.pending = true;
}

void joinHostWork(CudaRuntime &r) {
  if (!r.hostSide.pending)
    return;
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(r.device->compute(), r.hostSide.done, 0));
  r.hostSide.pending = false;
}

void drainHostWork(CudaRuntime &r) {
  if (r.hostSide.onHost)
    ZRT_CUDA_CHECK(cudaStreamSynchronize(r.hostSide.onHost));
}

} // namespace zrt::cuda::abi
