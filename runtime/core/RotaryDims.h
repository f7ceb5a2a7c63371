// The channels of each head a rotary embedding turns (zrt_rotary's rotary_dims), checked in one
// place for both backends' entry points.
#ifndef ZRT_CORE_ROTARYDIMS_H
#define ZRT_CORE_ROTARYDIMS_H

#include <cstdint>

#include "core/Error.h"
#include "zrt/KernelMath.h"

namespace zrt {

/// `heads` divide `channels`, and each head's rotated channels (math::rotatedChannels: `rotaryDims`,
/// or the whole head for 0) are an even count (two halves) no larger than the head.
inline void checkRotaryDims(const char *call, int64_t channels, int64_t heads, int64_t rotaryDims) {
  if (heads <= 0 || channels % heads != 0)
    fatal(call, "%lld channels are not divisible into %lld heads", static_cast<long long>(channels),
          static_cast<long long>(heads));
  const int64_t headDim = channels / heads, dims = math::rotatedChannels(headDim, rotaryDims);
  if (rotaryDims < 0 || dims > headDim || dims % 2 != 0)
    fatal(call, "a rotary over %lld of a head's %lld channels: they must be an even count, at most the head",
          static_cast<long long>(dims), static_cast<long long>(headDim));
}

} // namespace zrt

#endif // ZRT_CORE_ROTARYDIMS_H
