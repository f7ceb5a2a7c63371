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

/// Every lane of the warp arrives before any goes on (lanes arrive in order: the last lane last).
inline void warpBarrier(const WarpPlace &w) {
  using namespace hip::detail;
  if (w.size == 1)
    return;
  this_tile::has_barrier = true; // the block's first fiber must hand over to the rest at its end
  const uint32_t next = w.fiber + 1 == w.first + w.size ? w.first : w.fiber + 1;
  Fiber::yield(Tile::fibers()[next]);
}
inline void warpBarrier() { warpBarrier(warpPlace()); }

/// The value lane `source` of the warp passes (own when there is no such lane).
template <class T> T warpExchange(T value, const WarpPlace &w, uint32_t source) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffle moves at most 8 bytes");
  // Per CPU thread, so per block: a slot per lane of each warp, in two sets a warp uses in turn, so
  // that one barrier per exchange is enough (every fiber switch counts: the row kernels' reductions
  // are most of a training's time on HIP-CPU). A lane writes this exchange's set, and the next
  // exchange's, only after the barrier of the one before, which every lane passed having read
  // that one's set. The warp's last lane arrives last (warpBarrier): it flips the warp's turn once
  // every lane has picked this exchange's set.
  thread_local uint64_t slots[2][1024 / kWarp][kWarp];
  thread_local uint8_t turn[1024 / kWarp];
  const uint32_t warp = w.fiber / kWarp, lane = w.fiber - w.first;
  const uint8_t set = turn[warp];
  std::memcpy(&slots[set][warp][lane], &value, sizeof(T));
  if (lane + 1 == w.size)
    turn[warp] = set ^ 1;
  warpBarrier(w);
  T result = value;
  if (source < w.size)
    std::memcpy(&result, &slots[set][warp][source], sizeof(T));
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
  return zrt::cudaoncpu::warpExchange(v, w, inSegment ? source : lane);
}

#endif // ZRT_CUDA_ON_CPU_WARP_SYNC_H
