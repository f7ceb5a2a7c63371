// Which transport carries the CUDA backend's collectives (train.bin --comm, ZRT_COMM): NCCL, or MPI
// over pinned host buffers (HostStagedCommunicator.h). Host code alone: the CUDA-on-CPU build and
// its tests link it too.
#ifndef ZRT_CUDA_COMMCHOICE_H
#define ZRT_CUDA_COMMCHOICE_H

#include <string>

namespace zrt::cuda {

enum class CommTransport { Nccl, Mpi };

struct CommChoice {
  CommTransport transport;
  std::string why; // for the start-up line
};

/// `requested`: "nccl", "mpi", "auto" or null (auto). auto takes NCCL when every rank of this node
/// has a device of its own (`localRanks` <= `devices`; 0 local ranks: the launcher does not say,
/// one rank a node assumed) and NCCL was built, else MPI. An explicit "nccl" that cannot work (ranks
/// sharing a device, which NCCL refuses, or no NCCL) stops with a message naming --comm mpi.
CommChoice chooseComm(const char *requested, int localRanks, int devices, bool ncclBuilt);

} // namespace zrt::cuda

#endif // ZRT_CUDA_COMMCHOICE_H
