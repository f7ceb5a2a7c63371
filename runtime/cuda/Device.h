// The CUDA backend's device state: one GPU per rank (chosen from the launcher's
// local-rank variable), one arena allocated once, a compute stream and a communication
// stream ordered by events (never by device-wide synchronization inside a step).
#ifndef ZRT_CUDA_DEVICE_H
#define ZRT_CUDA_DEVICE_H

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/DeviceShare.h"
#include "cuda/LocalRank.h"

namespace zrt::cuda {

/// The device this rank uses: localRank() modulo the visible devices. Fatal error,
/// with the reason, when there is no usable CUDA device.
int selectDevice();

class Device {
public:
  /// Selects the device, checks that the arenas of the ranks sharing it fit (DeviceShare.h; over
  /// MPI when `mpi`), creates the streams, allocates `arenaBytes` once.
  Device(int64_t arenaBytes, bool mpi);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  int id() const { return device_; }
  char *arena() const { return arena_; }
  int64_t arenaBytes() const { return arenaBytes_; }
  cudaStream_t compute() const { return compute_; }
  cudaStream_t comm() const { return comm_; }
  const DeviceShare &share() const { return share_; }
  /// The communication stream waits for the work issued so far on the compute stream
  /// (a collective's input is ready), and the reverse.
  void commWaitsForCompute();
  void computeWaitsForComm();

private:
  int device_ = 0;
  char *arena_ = nullptr;
  int64_t arenaBytes_ = 0;
  DeviceShare share_;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  cudaEvent_t computeDone_ = nullptr, commDone_ = nullptr;
};

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICE_H
