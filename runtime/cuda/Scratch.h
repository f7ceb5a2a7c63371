// Device scratch for kernels that need a temporary (per-row statistics, partial sums):
// one buffer, grown to the largest request and then reused, so steady-state steps
// allocate nothing. Kernels on one stream use it one after the other.
#ifndef ZRT_CUDA_SCRATCH_H
#define ZRT_CUDA_SCRATCH_H

#include <cstdint>

namespace zrt::cuda {

float *scratchFloats(int64_t count);

} // namespace zrt::cuda

#endif // ZRT_CUDA_SCRATCH_H
