// A warp's barrier and shuffles on HIP-CPU's fibers. HIP-CPU has only the block's barrier (and
// builds its shuffles on it), which would make every __syncwarp and shuffle a __syncthreads and hide
// a missing one. Here a warp's lanes wait for one another alone: the block's fibers run in turn
// (fiber f hands over to f + 1 at a barrier), and at a warp's barrier the warp's last lane hands
// back to its first instead, so the warp runs on and the other warps wait where they are. Warp-
// level calls with a partial mask are not modelled (fibers do not run in lock step): a kernel that
// makes one aborts here rather than passing untested.
#ifndef ZRT_CUDA_ON_CPU_WARP_SYNC_H
#define ZRT_CUDA_ON_CPU_WARP_SYNC_H

#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace zrt::cudaoncpu {

constexpr int kWarp = 32;
static_assert(warpSize == kWarp, "third_party/hip-cpu must be built with a warp of 32");

inline void requireFullMask(unsigned mask, const char *call) {
  if (mask != 0xffffffffu) {
    std::fprintf(stderr, "cuda-on-cpu: %s with mask 0x%08x: partial warps are not modelled on the CPU\n", call,
                 mask);
    std::abort();
  }
}

/// This thread's lane and the lanes of its warp present in the block ([first, first + size)).
struct WarpPlace {
  uint32_t fiber, first, size;
};
inline WarpPlace warpPlace() {
  using namespace hip::detail;
  const uint32_t threads = count(Tile::this_tile().dimensions());
  const uint32_t fiber = id(Fiber::this_fiber());
  const uint32_t first = fiber - fiber % kWarp;
  return {fiber, first, std::min<uint32_t>(kWarp, threads - first)};
}

/// Every lane of the warp arrives before any goes on.
inline void warpBarrier() {
  using namespace hip::detail;
  const WarpPlace w = warpPlace();
  if (w.size == 1)
    return;
  this_tile::has_barrier = true; // the block's first fiber must hand over to the rest at its end
  const uint32_t next = w.fiber + 1 == w.first + w.size ? w.first : w.fiber + 1;
  Fiber::yield(Tile::fibers()[next]);
}

/// The value lane `source` of the warp passes (own when there is no such lane).
template <class T> T warpExchange(T value, uint32_t lane, uint32_t source, uint32_t warpLanes) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffle moves at most 8 bytes");
  // Per CPU thread, so per block; a slot per lane of each warp.
  thread_local uint64_t slots[1024 / kWarp][kWarp];
  const uint32_t warp = warpPlace().fiber / kWarp;
  std::memcpy(&slots[warp][lane], &value, sizeof(T));
  warpBarrier();
  T result = value;
  if (source < warpLanes)
    std::memcpy(&result, &slots[warp][source], sizeof(T));
  warpBarrier(); // nobody overwrites a slot before every lane has read
  return result;
}

} // namespace zrt::cudaoncpu

/// The warp's barrier (CUDA's __syncwarp), not the block's.
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  zrt::cudaoncpu::requireFullMask(mask, "__syncwarp");
  zrt::cudaoncpu::warpBarrier();
}

// CUDA's xor shuffle within segments of `width` lanes: a source outside the caller's segment gives
// the caller's own value. (The kernels use no other shuffle: one added must come with its model.)
template <class T> T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = warpSize) {
  zrt::cudaoncpu::requireFullMask(mask, "__shfl_xor_sync");
  const auto w = zrt::cudaoncpu::warpPlace();
  const uint32_t lane = w.fiber - w.first, source = lane ^ uint32_t(laneMask);
  const bool inSegment = source / uint32_t(width) == lane / uint32_t(width);
  return zrt::cudaoncpu::warpExchange(v, lane, inSegment ? source : lane, w.size);
}

#endif // ZRT_CUDA_ON_CPU_WARP_SYNC_H
