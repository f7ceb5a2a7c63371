// Collectives between GPUs through NCCL, on the backend's communication stream. The
// communicator is started through MPI: rank 0's ncclUniqueId is broadcast to every rank.
#ifndef ZRT_CUDA_NCCLCOMMUNICATOR_H
#define ZRT_CUDA_NCCLCOMMUNICATOR_H

#include <cuda_runtime.h>
#include <memory>

#include "core/Communicator.h"

namespace zrt::cuda {

/// `control` is the MPI communicator (bootstrap, agreement checks, abort); collectives
/// on device buffers run on `stream`. Averaging is NCCL's (ncclAvg): unlike the CPU
/// communicators, run() applies `average` itself. run() returns once the collective is
/// enqueued; ordering with compute is the caller's, through events.
std::unique_ptr<Communicator> createNcclCommunicator(std::unique_ptr<Communicator> control, cudaStream_t stream);
/// `split` of an NCCL communicator whose collectives and point to point run on `stream`
/// instead of the parent's (a pipeline's activations and gradients each on their own).
std::unique_ptr<Communicator> splitNcclOnStream(Communicator &nccl, int color, int key, cudaStream_t stream);

} // namespace zrt::cuda

#endif // ZRT_CUDA_NCCLCOMMUNICATOR_H
