// The offload tiers on the CUDA backend. The host tier and the NVMe store are opened and read
// and written by train.bin (initialization, checkpoints) as on the CPU backend; the optimizer
// on host memory (ZeRO-Offload's CPU AdamW beside the GPU) and the swap schedule into device
// slots are not built for this backend yet: zcc refuses --offload-* with --target cuda, and
// these entry points stop a program that calls them anyway.
#include <cstring>

#include "core/Error.h"
#include "core/Tiers.h"
#include "cuda/RuntimeState.h"

using namespace zrt;
using namespace zrt::cuda::abi;

extern "C" {

void zrt_tier_open(int32_t tier, const void *path, int64_t bytes) {
  CudaRuntime &r = current("zrt_tier_open");
  tiers().open(tier, path ? static_cast<const char *>(path) : "", r.rank, bytes);
}

void *zrt_tier_ptr(int32_t, int64_t, int64_t) {
  fatal("zrt_tier_ptr", "the optimizer on host memory is not built for the CUDA backend (compile with --target cpu)");
}

void zrt_tier_read(int32_t tier, int64_t offset, void *dst, int64_t bytes) { tiers().read(tier, offset, dst, bytes); }

void zrt_tier_write(int32_t tier, int64_t offset, const void *src, int64_t bytes) {
  tiers().write(tier, offset, src, bytes);
}

void zrt_swap_read(int32_t, void *, int64_t, int64_t) {
  fatal("zrt_swap_read", "NVMe swapping into device memory is not built for the CUDA backend (compile with --target cpu)");
}
void zrt_swap_write(int32_t, const void *, int64_t, int64_t) {
  fatal("zrt_swap_write", "NVMe swapping from device memory is not built for the CUDA backend (compile with --target cpu)");
}
void zrt_swap_wait(int32_t) {
  fatal("zrt_swap_wait", "NVMe swapping is not built for the CUDA backend (compile with --target cpu)");
}

} // extern "C"
