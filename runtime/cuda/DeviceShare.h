// Ranks that share one GPU (several local ranks per device: --comm mpi's case): each has its own
// arena, so the card must hold all of them. Checked before any arena is allocated, with every
// sharer's planned bytes (pipeline stages plan different arenas), so a plan too large for the card
// stops at start with the sum named instead of in one rank's cudaMalloc.
#ifndef ZRT_CUDA_DEVICESHARE_H
#define ZRT_CUDA_DEVICESHARE_H

#include <cstdint>
#include <string>

namespace zrt::cuda {

struct DeviceShare {
  int ranks = 1;           // the ranks of this node on this rank's device, this one included
  int64_t arenaBytes = 0;  // their arenas together
  int64_t deviceBytes = 0; // the card's memory (cudaMemGetInfo's total)
};

/// The device's sharers and their arenas (MPI over the node's ranks when `mpi`, else this rank
/// alone); fatal, naming each figure, when their arenas exceed the card's memory.
DeviceShare checkDeviceShare(int device, int64_t arenaBytes, bool mpi);

/// "2 ranks share device 0: 3.1 GiB of arenas on 79.1 GiB" for the start-up line; empty for one.
std::string describeDeviceShare(const DeviceShare &share, int device);

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICESHARE_H
