// A communicator of the CUDA backend: collectives and point to point on device buffers, ordered on
// a CUDA stream. Two transports: NCCL (NcclCommunicator.h, one GPU per rank) and MPI through pinned
// host buffers (HostStagedCommunicator.h: ranks that share a GPU, or have no NCCL). CommChoice.h picks.
#ifndef ZRT_CUDA_STREAMCOMMUNICATOR_H
#define ZRT_CUDA_STREAMCOMMUNICATOR_H

#include <cuda_runtime.h>
#include <memory>
#include <vector>

#include "core/Communicator.h"

namespace zrt::cuda {

/// One point-to-point message of an exchange: `units` units at `buf` (device memory) to or from
/// `peer` of the group.
struct PeerMessage {
  const void *buf;
  int64_t units;
  int peer;
};

class StreamCommunicator : public Communicator {
public:
  /// Messages to and from the group's other ranks as one step, enqueued on the stream (expert
  /// parallelism's token exchange: its row counts change every call, so it is no fixed-size
  /// collective). Each peer's messages to this rank pair with this rank's receives from it in the
  /// order both list them, with equal units; `recvs`' buffers are written. None to itself.
  virtual void exchange(const std::vector<PeerMessage> &sends, const std::vector<PeerMessage> &recvs,
                        int64_t unitBytes) = 0;
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
