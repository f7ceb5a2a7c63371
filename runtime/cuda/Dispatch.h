// From the C ABI's dtype code to the element type of a CUDA kernel template.
#ifndef ZRT_CUDA_DISPATCH_H
#define ZRT_CUDA_DISPATCH_H

#include <cstdint>

#include "core/Error.h"
#include "zrt/bf16.h"

namespace zrt::cuda {

/// Calls fn with a typed null pointer for `dtype` (f32, or the shared bf16 type).
template <class F> void typed(const char *call, int32_t dtype, F &&fn) {
  if (dtype == 0)
    fn(static_cast<float *>(nullptr));
  else if (dtype == 1)
    fn(static_cast<zrt::bf16 *>(nullptr));
  else
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16)", dtype);
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_DISPATCH_H
