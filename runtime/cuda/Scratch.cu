#include "cuda/Scratch.h"

#include "cuda/CudaCheck.h"

namespace zrt::cuda {

float *scratchFloats(int64_t count) {
  static float *buffer = nullptr;
  static int64_t capacity = 0;
  if (count > capacity) {
    // Growing frees the old buffer: wait for the kernels that may still read it.
    ZRT_CUDA_CHECK(cudaDeviceSynchronize());
    if (buffer)
      ZRT_CUDA_CHECK(cudaFree(buffer));
    ZRT_CUDA_CHECK(cudaMalloc(&buffer, count * sizeof(float)));
    capacity = count;
  }
  return buffer;
}

} // namespace zrt::cuda
