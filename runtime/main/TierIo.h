// Model state wherever its tier keeps it (the arena, host memory, the NVMe store): the
// blocking copies train.bin initializes, checkpoints and exports through.
#ifndef ZRT_MAIN_TIERIO_H
#define ZRT_MAIN_TIERIO_H

#include <cstdint>

#include "zrt/zrt.h"

namespace zrt::train {

inline void readModelState(int32_t tier, int64_t offset, void *dst, int64_t bytes) {
  if (tier == ZRT_TIER_DEVICE)
    zrt_arena_read(offset, dst, bytes);
  else
    zrt_tier_read(tier, offset, dst, bytes);
}

inline void writeModelState(int32_t tier, int64_t offset, const void *src, int64_t bytes) {
  if (tier == ZRT_TIER_DEVICE)
    zrt_arena_write(offset, src, bytes);
  else
    zrt_tier_write(tier, offset, src, bytes);
}

} // namespace zrt::train

#endif // ZRT_MAIN_TIERIO_H
