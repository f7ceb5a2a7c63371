// ZeRO-Infinity on the CUDA backend: the compiler's swap schedule (zc.swap_in / swap_out /
// swap_wait, passes/Offload.cpp) moves optimizer state and parameter shards between the NVMe
// store and the arena's swap slots, which are device memory here. The store reads and writes
// page-locked staging copies of the slot ranges (O_DIRECT needs host buffers aligned to 4 KiB),
// and the copies between staging and device run in compute-stream order:
//
//   swap_in    the store starts reading into the range's staging            (host, io_uring)
//   swap_out   the compute stream copies the slot range to its staging (D2H, after the update)
//   swap_wait  the copies out still on their way are waited for and written to the store (those
//              that landed earlier went at the next swap call); every transfer of the slot
//              completes; the compute stream copies what was read into the slot (H2D), before
//              the update or the gather's pack that reads it
//
// A staging buffer is not refilled before the device copy that last read or wrote it is done (its
// `copied` event), so a slot read again for a later gather never overwrites bytes still on their
// way to the device.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdlib>

#include "core/Error.h"
#include "core/Tiers.h"
#include "cuda/CudaCheck.h"
#include "cuda/RuntimeState.h"

namespace zrt::cuda::abi {

namespace {

using Staging = CudaRuntime::SwapSide::Staging;

/// The page-locked staging of the slot range at `device`, at least `bytes` long.
Staging &stagingFor(CudaRuntime &r, const void *device, int64_t bytes, const char *call) {
  Staging &s = r.swapSide.staging[device];
  if (s.bytes >= bytes)
    return s;
  if (s.host) { // grown: only before any transfer of it is in flight (each range has one size)
    if (s.copyPending)
      ZRT_CUDA_CHECK(cudaEventSynchronize(s.copied));
    cudaHostUnregister(s.host);
    std::free(s.host);
  }
  void *host = nullptr;
  if (posix_memalign(&host, kStoreAlignment, static_cast<size_t>(bytes)) != 0 || !host)
    fatal(call, "cannot allocate %lld bytes of swap staging", static_cast<long long>(bytes));
  cudaError_t pinned = cudaHostRegister(host, static_cast<size_t>(bytes), cudaHostRegisterPortable);
  if (pinned != cudaSuccess)
    fatal(call, "cannot page-lock %lld bytes of swap staging (%s): raise ulimit -l", static_cast<long long>(bytes),
          cudaGetErrorString(pinned));
  s.host = static_cast<char *>(host);
  s.bytes = bytes;
  if (!s.copied)
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
  return s;
}

/// The device copy that last used `s` is done (the host is about to let the store overwrite it).
void copiesDone(Staging &s) {
  if (s.copyPending)
    ZRT_CUDA_CHECK(cudaEventSynchronize(s.copied));
  s.copyPending = false;
}

/// Writes whose copy out of the slot has landed go to the store now, not at their slot's wait:
/// the store writes while the device runs the next updates.
void submitLandedWrites(CudaRuntime &r) {
  for (auto &[slot, writes] : r.swapSide.writes)
    for (size_t i = 0; i < writes.size();) {
      Staging &s = *writes[i].staging;
      if (s.copyPending && cudaEventQuery(s.copied) != cudaSuccess) {
        ++i;
        continue;
      }
      s.copyPending = false;
      tiers().nvme.writeAsync(slot, s.host, writes[i].offset, writes[i].bytes);
      writes.erase(writes.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

} // namespace

void swapRead(CudaRuntime &r, int slot, void *device, int64_t offset, int64_t bytes) {
  runsEagerly(r, "zrt_swap_read"); // host I/O: no CUDA graph replays it
  submitLandedWrites(r);
  Staging &s = stagingFor(r, device, bytes, "zrt_swap_read");
  copiesDone(s);
  tiers().nvme.readAsync(slot, s.host, offset, bytes);
  r.swapSide.reads[slot].push_back({device, &s, offset, bytes});
}

void swapWrite(CudaRuntime &r, int slot, const void *device, int64_t offset, int64_t bytes) {
  runsEagerly(r, "zrt_swap_write"); // host I/O: no CUDA graph replays it
  submitLandedWrites(r);
  Staging &s = stagingFor(r, device, bytes, "zrt_swap_write");
  copiesDone(s);
  cudaStream_t stream = compute(); // after the update that wrote the slot
  {
    GpuScope copy("zrt_swap_write", stream, TraceTrack::Communication, bytes);
    ZRT_CUDA_CHECK(cudaMemcpyAsync(s.host, device, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream));
  }
  ZRT_CUDA_CHECK(cudaEventRecord(s.copied, stream));
  s.copyPending = true;
  r.swapSide.writes[slot].push_back({const_cast<void *>(device), &s, offset, bytes});
}

void swapWait(CudaRuntime &r, int slot) {
  runsEagerly(r, "zrt_swap_wait"); // host I/O: no CUDA graph replays it
  TraceScope trace("zrt_swap_wait", TraceTrack::Compute);
  // The writes: their bytes reached the staging, then the store.
  std::vector<CudaRuntime::SwapSide::Transfer> &writes = r.swapSide.writes[slot];
  for (const auto &w : writes) {
    copiesDone(*w.staging);
    tiers().nvme.writeAsync(slot, w.staging->host, w.offset, w.bytes);
  }
  writes.clear();
  tiers().nvme.wait(slot);
  // The reads: into the slot, before what the compute stream runs next reads it.
  std::vector<CudaRuntime::SwapSide::Transfer> &reads = r.swapSide.reads[slot];
  if (reads.empty())
    return;
  cudaStream_t stream = compute();
  for (const auto &rd : reads) {
    {
      GpuScope copy("zrt_swap_read", stream, TraceTrack::Communication, rd.bytes);
      ZRT_CUDA_CHECK(cudaMemcpyAsync(rd.device, rd.staging->host, static_cast<size_t>(rd.bytes),
                                     cudaMemcpyHostToDevice, stream));
    }
    ZRT_CUDA_CHECK(cudaEventRecord(rd.staging->copied, stream));
    rd.staging->copyPending = true;
  }
  reads.clear();
}

void releaseSwapStaging(CudaRuntime &r) {
  for (auto &entry : r.swapSide.staging) {
    Staging &s = entry.second;
    if (s.copied)
      cudaEventDestroy(s.copied);
    if (s.host) {
      cudaHostUnregister(s.host);
      std::free(s.host);
    }
  }
  r.swapSide.staging.clear();
  r.swapSide.reads.clear();
  r.swapSide.writes.clear();
}

} // namespace zrt::cuda::abi
