#include "cuda/CommChoice.h"

#include <cstdio>
#include <cstring>

#include "core/Error.h"

namespace zrt::cuda {

CommChoice chooseComm(const char *requested, int localRanks, int devices, bool ncclBuilt) {
  const char *mode = requested && *requested ? requested : "auto";
  if (std::strcmp(mode, "auto") != 0 && std::strcmp(mode, "nccl") != 0 && std::strcmp(mode, "mpi") != 0)
    fatal("zrt_init", "--comm %s (ZRT_COMM): expected nccl, mpi or auto", mode);
  const bool shared = localRanks > devices;
  char sharing[160];
  std::snprintf(sharing, sizeof sharing, "%d ranks on this node share %d device%s", localRanks, devices,
                devices == 1 ? "" : "s");
  if (std::strcmp(mode, "mpi") == 0)
    return {CommTransport::Mpi, "--comm mpi"};
  if (std::strcmp(mode, "nccl") == 0) {
    if (!ncclBuilt)
      fatal("zrt_init", "--comm nccl, but this runtime was built without NCCL; run with --comm mpi");
    if (shared)
      fatal("zrt_init", "--comm nccl, but %s and NCCL needs one per rank; run with --comm mpi", sharing);
    return {CommTransport::Nccl, "--comm nccl"};
  }
  if (!ncclBuilt)
    return {CommTransport::Mpi, "--comm auto: no NCCL in this runtime"};
  if (shared)
    return {CommTransport::Mpi, std::string("--comm auto: ") + sharing + ", which NCCL refuses"};
  return {CommTransport::Nccl, "--comm auto: a device per rank"};
}

} // namespace zrt::cuda
