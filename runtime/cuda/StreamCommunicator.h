// A communicator of the CUDA backend: collectives and point to point on device buffers, ordered on
// a CUDA stream. Two transports: NCCL (NcclCommunicator.h, one GPU per rank) and MPI through pinned
// host buffers (HostStagedCommunicator.h: ranks that share a GPU, or have no NCCL). CommChoice.h picks.
#ifndef ZRT_CUDA_STREAMCOMMUNICATOR_H
#define ZRT_CUDA_STREAMCOMMUNICATOR_H

#include <cuda_runtime.h>
#include <memory>

#include "core/Communicator.h"

namespace zrt::cuda {

class StreamCommunicator : public Communicator {
public:
  /// split() whose collectives and point to point run on `stream` instead of this one's (a
  /// pipeline's activations and gradients each on their own stream).
  virtual std::unique_ptr<Communicator> splitOn(int color, int key, cudaStream_t stream) = 0;
  /// Whether a collective may be enqueued while `stream` is being captured into a CUDA graph
  /// (NCCL's may; the host-staged one waits on the host and may not).
  virtual bool capturable() const = 0;
};

/// `comm.splitOn(...)`: `comm` is the CUDA backend's world communicator of several ranks.
inline std::unique_ptr<Communicator> splitOnStream(Communicator &comm, int color, int key, cudaStream_t stream) {
  return static_cast<StreamCommunicator &>(comm).splitOn(color, key, stream);
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_STREAMCOMMUNICATOR_H
