#include "cuda/Device.h"

#include "core/Error.h"
#include "cuda/CudaCheck.h"

namespace zrt::cuda {

int selectDevice() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    fatal("cuda", "no usable CUDA device (%s): this train.bin was compiled with --target=cuda; compile "
                  "with --target=cpu to train on the CPU",
          status != cudaSuccess ? cudaGetErrorString(status) : "none visible");
  int device = localRank() % count;
  ZRT_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

Device::Device(int64_t arenaBytes, bool mpi) : arenaBytes_(arenaBytes) {
  device_ = selectDevice();
  share_ = checkDeviceShare(device_, arenaBytes, mpi);
  ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking));
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&computeDone_, cudaEventDisableTiming));
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&commDone_, cudaEventDisableTiming));
  if (arenaBytes > 0)
    ZRT_CUDA_CHECK(cudaMalloc(&arena_, arenaBytes));
}

Device::~Device() {
  cudaDeviceSynchronize();
  if (arena_)
    cudaFree(arena_);
  cudaEventDestroy(computeDone_);
  cudaEventDestroy(commDone_);
  cudaStreamDestroy(compute_);
  cudaStreamDestroy(comm_);
}

void Device::commWaitsForCompute() {
  ZRT_CUDA_CHECK(cudaEventRecord(computeDone_, compute_));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(comm_, computeDone_, 0));
}

void Device::computeWaitsForComm() {
  ZRT_CUDA_CHECK(cudaEventRecord(commDone_, comm_));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(compute_, commDone_, 0));
}

} // namespace zrt::cuda
