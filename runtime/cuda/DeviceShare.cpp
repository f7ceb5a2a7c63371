// checkDeviceShare (DeviceShare.h): the node's ranks exchange (device, arena bytes), each sums its
// own device's.
#include "cuda/DeviceShare.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "core/Error.h"
#include "cuda/CudaCheck.h"

namespace zrt::cuda {

DeviceShare checkDeviceShare(int device, int64_t arenaBytes, bool mpi) {
  DeviceShare share;
  share.arenaBytes = arenaBytes;
  size_t free = 0, total = 0;
  ZRT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  share.deviceBytes = static_cast<int64_t>(total);
  if (mpi) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int size = 1;
    MPI_Comm_size(node, &size);
    const int64_t mine[2] = {device, arenaBytes};
    std::vector<int64_t> all(2 * static_cast<size_t>(size));
    MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, node);
    MPI_Comm_free(&node);
    share.ranks = 0;
    share.arenaBytes = 0;
    for (int i = 0; i < size; ++i)
      if (all[2 * i] == device) {
        ++share.ranks;
        share.arenaBytes += all[2 * i + 1];
      }
  }
  if (share.arenaBytes > share.deviceBytes)
    fatal("zrt_init",
          "%d rank(s) share device %d and their arenas need %lld bytes together (this rank's %lld), more than "
          "its %lld bytes: run fewer ranks per GPU, or a plan with a smaller arena (zcc --zero-stage 3, "
          "--recompute, --grad-accum, --offload-*)",
          share.ranks, device, static_cast<long long>(share.arenaBytes), static_cast<long long>(arenaBytes),
          static_cast<long long>(share.deviceBytes));
  return share;
}

std::string describeDeviceShare(const DeviceShare &share, int device) {
  if (share.ranks <= 1)
    return "";
  char text[160];
  std::snprintf(text, sizeof text, "%d ranks share device %d: %.2f GiB of arenas on %.1f GiB", share.ranks, device,
                share.arenaBytes / double(1 << 30), share.deviceBytes / double(1 << 30));
  return text;
}

} // namespace zrt::cuda
