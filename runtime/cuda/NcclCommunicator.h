// Collectives between GPUs through NCCL, on the backend's communication stream. The
// communicator is started through MPI: rank 0's ncclUniqueId is broadcast to every rank.
#ifndef ZRT_CUDA_NCCLCOMMUNICATOR_H
#define ZRT_CUDA_NCCLCOMMUNICATOR_H

#include <cuda_runtime.h>
#include <memory>

#include "cuda/StreamCommunicator.h"

namespace zrt::cuda {

/// `control` is the MPI communicator (bootstrap, agreement checks, abort); collectives
/// on device buffers run on `stream`. Averaging is NCCL's (ncclAvg): unlike the CPU
/// communicators, run() applies `average` itself. run() returns once the collective is
/// enqueued; ordering with compute is the caller's, through events.
std::unique_ptr<StreamCommunicator> createNcclCommunicator(std::unique_ptr<Communicator> control, cudaStream_t stream);

} // namespace zrt::cuda

#endif // ZRT_CUDA_NCCLCOMMUNICATOR_H
