// The offload tiers on the CUDA backend. The host tier is page-locked host memory: the CPU runs
// the optimizer on it (ZeRO-Offload, HostOffload.cu) and ZeRO-3's gathers fetch parameter shards
// from it (zrt_pack); activations wait in it between the passes (zrt_activation_out/in).
// train.bin reads and writes the tiers (initialization, checkpoints) as on
// the CPU backend, once the host-side updates in flight are done. The NVMe swap schedule moves
// state between the store and the arena's (device) swap slots through staging (NvmeSwap.cu).
#include <cstring>

#include "core/Error.h"
#include "core/Tiers.h"
#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"

using namespace zrt;
using namespace zrt::cuda::abi;

extern "C" {

void zrt_tier_open(int32_t tier, const void *path, int64_t bytes) {
  CudaRuntime &r = current("zrt_tier_open");
  tiers().open(tier, path ? static_cast<const char *>(path) : "", r.rank, bytes);
  if (tier == ZRT_TIER_HOST)
    pinHostTier(r);
}

// No current(): the update's pointers are computed between its host-side calls, which must not
// make the compute stream wait for them (compute() would).
void *zrt_tier_ptr(int32_t tier, int64_t offset, int64_t bytes) {
  if (tier != ZRT_TIER_HOST)
    fatal("zrt_tier_ptr", "tier %d has no addressable memory (only the host tier, 1)", tier);
  return tiers().hostAt(offset, bytes, "zrt_tier_ptr");
}

void zrt_tier_read(int32_t tier, int64_t offset, void *dst, int64_t bytes) {
  drainHostWork(current("zrt_tier_read"));
  tiers().read(tier, offset, dst, bytes);
}

void zrt_tier_write(int32_t tier, int64_t offset, const void *src, int64_t bytes) {
  drainHostWork(current("zrt_tier_write"));
  tiers().write(tier, offset, src, bytes);
}

// On the compute stream: the arena bytes may be reused by the next kernel, and the backward
// kernel after a reload reads them (the copy engine moves the bytes, the stream orders them).
void zrt_activation_out(const void *src, int64_t offset, int64_t bytes) {
  cudaStream_t stream = compute();
  GpuScope copy("zrt_activation_out", stream, TraceTrack::Communication, bytes);
  ZRT_CUDA_CHECK(cudaMemcpyAsync(tiers().hostAt(offset, bytes, "zrt_activation_out"), src, static_cast<size_t>(bytes),
                                 cudaMemcpyDeviceToHost, stream));
  current("zrt_activation_out").counters.swap_write_bytes += bytes;
}

void zrt_activation_in(void *dst, int64_t offset, int64_t bytes) {
  cudaStream_t stream = compute();
  GpuScope copy("zrt_activation_in", stream, TraceTrack::Communication, bytes);
  ZRT_CUDA_CHECK(cudaMemcpyAsync(dst, tiers().hostAt(offset, bytes, "zrt_activation_in"), static_cast<size_t>(bytes),
                                 cudaMemcpyHostToDevice, stream));
  current("zrt_activation_in").counters.swap_read_bytes += bytes;
}

void zrt_swap_read(int32_t slot, void *dst, int64_t offset, int64_t bytes) {
  swapRead(current("zrt_swap_read"), slot, dst, offset, bytes);
}
void zrt_swap_write(int32_t slot, const void *src, int64_t offset, int64_t bytes) {
  swapWrite(current("zrt_swap_write"), slot, src, offset, bytes);
}
void zrt_swap_wait(int32_t slot) { swapWait(current("zrt_swap_wait"), slot); }

} // extern "C"
