// The offload tiers on the CPU backend: the host tier is host memory the optimizer updates in
// place and activations wait in between the passes (outside the arena and its budget), the NVMe
// store swaps straight into the arena's slot buffers (host memory too).
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/Error.h"
#include "core/Tiers.h"
#include "core/Trace.h"
#include "zrt/zrt.h"

using namespace zrt;

extern "C" {

void zrt_tier_open(int32_t tier, const void *path, int64_t bytes) {
  tiers().open(tier, path ? static_cast<const char *>(path) : "", zrt_rank(), bytes);
}

void *zrt_tier_ptr(int32_t tier, int64_t offset, int64_t bytes) {
  if (tier != ZRT_TIER_HOST)
    fatal("zrt_tier_ptr", "tier %d has no addressable memory (only the host tier, 1)", tier);
  return tiers().hostAt(offset, bytes, "zrt_tier_ptr");
}

void zrt_tier_read(int32_t tier, int64_t offset, void *dst, int64_t bytes) { tiers().read(tier, offset, dst, bytes); }

void zrt_tier_write(int32_t tier, int64_t offset, const void *src, int64_t bytes) {
  tiers().write(tier, offset, src, bytes);
}

void zrt_swap_read(int32_t slot, void *dst, int64_t offset, int64_t bytes) {
  tiers().nvme.readAsync(slot, dst, offset, bytes);
}

void zrt_swap_write(int32_t slot, const void *src, int64_t offset, int64_t bytes) {
  tiers().nvme.writeAsync(slot, src, offset, bytes);
  // Test hook (ZCC_FAULT=kill-in-swap:N): the process dies right after starting its N-th swap
  // write, with transfers in flight, as a node failing in the middle of the update would.
  static const char *fault = std::getenv("ZCC_FAULT");
  static int64_t writes = 0;
  ++writes;
  if (fault && std::strncmp(fault, "kill-in-swap:", 13) == 0 && std::atoll(fault + 13) == writes)
    std::raise(SIGKILL);
}

void zrt_activation_out(const void *src, int64_t offset, int64_t bytes) {
  TraceScope trace("zrt_activation_out", TraceTrack::Compute);
  std::memcpy(tiers().hostAt(offset, bytes, "zrt_activation_out"), src, static_cast<size_t>(bytes));
}

void zrt_activation_in(void *dst, int64_t offset, int64_t bytes) {
  TraceScope trace("zrt_activation_in", TraceTrack::Compute);
  std::memcpy(dst, tiers().hostAt(offset, bytes, "zrt_activation_in"), static_cast<size_t>(bytes));
}

void zrt_swap_wait(int32_t slot) {
  TraceScope trace("zrt_swap_wait", TraceTrack::Compute);
  tiers().nvme.wait(slot);
}

} // extern "C"
