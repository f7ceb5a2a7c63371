// createNcclCommunicator where NCCL cannot run (runtime/cuda/NcclCommunicator.h): a train.bin built
// on the CPU (test/CudaOnCpu) has one device, so --comm auto takes the MPI transport at every
// world size above one; --comm nccl stops here with the reason instead of at NCCL's first call.
#include "cuda/NcclCommunicator.h"

#include "core/Error.h"

namespace zrt::cuda {

std::unique_ptr<StreamCommunicator> createNcclCommunicator(std::unique_ptr<Communicator>, cudaStream_t) {
  fatal("zrt_init", "cuda-on-cpu: NCCL cannot run on the CPU; run with --comm mpi (test/CudaOnCpu)");
}

} // namespace zrt::cuda
