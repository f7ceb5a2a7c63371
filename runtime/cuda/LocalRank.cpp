// localRank() (LocalRank.h): host code alone, so the CUDA-on-CPU build links it too.
#include "cuda/LocalRank.h"

#include <cstdlib>
#include <initializer_list>

namespace zrt::cuda {

int localRank() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "SLURM_LOCALID",
                           "LOCAL_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

} // namespace zrt::cuda
