// Collectives between CUDA ranks through MPI, over pinned host buffers: for ranks that share one
// GPU (NCCL refuses two ranks on a device) or have no NCCL, and for the CUDA backend run on the CPU
// in CI (test/CudaOnCpu). Each call copies its input to the host on the communication stream, waits
// for it there, runs the MPI communicator's collective (the CPU backend's, with its agreement checks
// and bf16 sums) and copies the result back on the stream, so later work on the stream sees it as
// it would NCCL's. The wait blocks the calling thread: correct, never faster than NCCL, and not
// capturable into a CUDA graph (train.bin says so: --cuda-graphs off).
#ifndef ZRT_CUDA_HOSTSTAGEDCOMMUNICATOR_H
#define ZRT_CUDA_HOSTSTAGEDCOMMUNICATOR_H

#include <cuda_runtime.h>
#include <memory>

#include "cuda/StreamCommunicator.h"

namespace zrt::cuda {

/// `host` is an MPI communicator of host buffers (createMpiCommunicator or a split of it); device
/// buffers' collectives run on `stream`. Like NCCL's, run() applies `average` itself.
std::unique_ptr<StreamCommunicator> createHostStagedCommunicator(std::unique_ptr<Communicator> host,
                                                                 cudaStream_t stream);

} // namespace zrt::cuda

#endif // ZRT_CUDA_HOSTSTAGEDCOMMUNICATOR_H
