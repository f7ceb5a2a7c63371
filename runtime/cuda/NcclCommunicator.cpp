#include "cuda/NcclCommunicator.h"

#include <mpi.h>
#include <nccl.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"

#define ZRT_NCCL_CHECK(call)                                                                       \
  do {                                                                                             \
    ncclResult_t zrtStatus_ = (call);                                                              \
    if (zrtStatus_ != ncclSuccess)                                                                 \
      ::zrt::fatal("nccl", "%s failed: %s", #call, ncclGetErrorString(zrtStatus_));                \
  } while (0)

namespace zrt::cuda {
namespace {

class NcclCommunicator final : public StreamCommunicator {
public:
  NcclCommunicator(std::unique_ptr<Communicator> control, cudaStream_t stream)
      : control_(std::move(control)), stream_(stream) {
    ncclUniqueId id;
    if (control_->rank() == 0)
      ZRT_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ZRT_NCCL_CHECK(ncclCommInitRank(&comm_, control_->size(), id, control_->rank()));
  }
  /// A group split from another communicator (ncclCommSplit, NCCL >= 2.18).
  NcclCommunicator(std::unique_ptr<Communicator> control, cudaStream_t stream, ncclComm_t comm)
      : control_(std::move(control)), stream_(stream), comm_(comm) {}
  ~NcclCommunicator() override {
    if (staging_)
      cudaFree(staging_);
  }

  int rank() const override { return control_->rank(); }
  int size() const override { return control_->size(); }
  bool capturable() const override { return true; }

  void run(const CollectiveArgs &a) override {
    ncclDataType_t type = a.dtype == 2 ? ncclInt8 : a.dtype == 1 ? ncclBfloat16 : ncclFloat32;
    ncclRedOp_t op = a.average ? ncclAvg : ncclSum;
    const size_t elementBytes = dtypeSize(a.dtype);
    switch (a.kind) {
    case Collective::AllGather:
      ZRT_NCCL_CHECK(ncclAllGather(a.send, a.recv, a.count, type, comm_, stream_));
      return;
    case Collective::ReduceScatter: {
      const void *send = a.send;
      const int64_t whole = a.count * size();
      if (a.total >= 0 && a.total < whole) { // ZeRO's padding: zeros past the tensor
        const size_t bytes = whole * elementBytes;
        if (stagingBytes_ < bytes) { // grows to the largest bucket once, then never again
          if (staging_)
            ZRT_CUDA_CHECK(cudaFree(staging_));
          ZRT_CUDA_CHECK(cudaMalloc(&staging_, bytes));
          stagingBytes_ = bytes;
        }
        ZRT_CUDA_CHECK(cudaMemcpyAsync(staging_, a.send, a.total * elementBytes, cudaMemcpyDeviceToDevice, stream_));
        ZRT_CUDA_CHECK(cudaMemsetAsync(static_cast<char *>(staging_) + a.total * elementBytes, 0,
                                       (whole - a.total) * elementBytes, stream_));
        send = staging_;
      }
      ZRT_NCCL_CHECK(ncclReduceScatter(send, a.recv, a.count, type, op, comm_, stream_));
      return;
    }
    case Collective::AllReduce:
      ZRT_NCCL_CHECK(ncclAllReduce(a.send, a.recv, a.count, type, op, comm_, stream_));
      return;
    case Collective::Broadcast:
      ZRT_NCCL_CHECK(ncclBroadcast(a.send, a.recv, a.count, type, a.root, comm_, stream_));
      return;
    case Collective::AllToAll: { // NCCL's all-to-all: a send and a receive per peer, in one group
      const size_t block = a.count * elementBytes;
      ZRT_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < size(); ++peer) {
        ZRT_NCCL_CHECK(ncclSend(static_cast<const char *>(a.send) + peer * block, a.count, type, peer, comm_, stream_));
        ZRT_NCCL_CHECK(ncclRecv(static_cast<char *>(a.recv) + peer * block, a.count, type, peer, comm_, stream_));
      }
      ZRT_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    }
  }

  std::unique_ptr<Communicator> split(int color, int key) override { return splitOn(color, key, stream_); }
  std::unique_ptr<Communicator> splitOn(int color, int key, cudaStream_t stream) override {
    ncclComm_t sub = nullptr;
    ZRT_NCCL_CHECK(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, nullptr));
    std::unique_ptr<Communicator> control = control_->split(color, key);
    if (!sub)
      return nullptr;
    return std::make_unique<NcclCommunicator>(std::move(control), stream, sub);
  }

  /// Pipeline point to point, enqueued on the communication stream (device buffers; the
  /// caller orders it with compute and keeps a send's buffer until it completed).
  void sendAsync(const void *buf, int64_t bytes, int peer) override {
    ZRT_NCCL_CHECK(ncclSend(buf, bytes, ncclUint8, peer, comm_, stream_));
  }
  void recv(void *buf, int64_t bytes, int peer) override {
    ZRT_NCCL_CHECK(ncclRecv(buf, bytes, ncclUint8, peer, comm_, stream_));
  }
  void flushSends() override { ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  bool receivesWithoutBlocking() const override { return true; } // ncclRecv enqueues
  /// Enqueued on the communication stream as one group: each rank's send and receive pair up
  /// without waiting for each other's order.
  void sendRecv(const void *send, void *recv, int64_t bytes, int to, int from) override {
    ZRT_NCCL_CHECK(ncclGroupStart());
    ZRT_NCCL_CHECK(ncclSend(send, bytes, ncclUint8, to, comm_, stream_));
    ZRT_NCCL_CHECK(ncclRecv(recv, bytes, ncclUint8, from, comm_, stream_));
    ZRT_NCCL_CHECK(ncclGroupEnd());
  }

  /// One NCCL group: sends and receives between the same two ranks pair in the order issued.
  void exchange(const std::vector<PeerMessage> &sends, const std::vector<PeerMessage> &recvs,
                int64_t unitBytes) override {
    ZRT_NCCL_CHECK(ncclGroupStart());
    for (const PeerMessage &m : sends)
      ZRT_NCCL_CHECK(ncclSend(m.buf, m.units * unitBytes, ncclUint8, m.peer, comm_, stream_));
    for (const PeerMessage &m : recvs)
      ZRT_NCCL_CHECK(ncclRecv(const_cast<void *>(m.buf), m.units * unitBytes, ncclUint8, m.peer, comm_, stream_));
    ZRT_NCCL_CHECK(ncclGroupEnd());
  }

  void checkAgreement(const CollectiveArgs &args, int64_t sequence) override {
    control_->checkAgreement(args, sequence);
  }
  [[noreturn]] void abortAll(int exitCode) override {
    ncclCommAbort(comm_);
    control_->abortAll(exitCode);
  }
  void finalize() override {
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    ZRT_NCCL_CHECK(ncclCommDestroy(comm_));
    control_->finalize();
  }

private:
  std::unique_ptr<Communicator> control_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  void *staging_ = nullptr;
  size_t stagingBytes_ = 0;
};

} // namespace

std::unique_ptr<StreamCommunicator> createNcclCommunicator(std::unique_ptr<Communicator> control, cudaStream_t stream) {
  return std::make_unique<NcclCommunicator>(std::move(control), stream);
}

} // namespace zrt::cuda
