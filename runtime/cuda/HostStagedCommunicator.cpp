#include "cuda/HostStagedCommunicator.h"

#include <algorithm>
#include <cstring>

#include "core/Error.h"
#include "cpu/Elementwise.h"
#include "cuda/CudaCheck.h"
#include "zrt/bf16.h"

namespace zrt::cuda {
namespace {

/// Pinned host memory that grows to the largest request and stays (a bucket's collectives reuse it
/// every step). Growing waits for the stream: the previous call's copies may still read it.
class PinnedBuffer {
public:
  ~PinnedBuffer() {
    if (data_)
      cudaFreeHost(data_);
  }
  char *reserve(size_t bytes, cudaStream_t stream, const char *call) {
    if (bytes <= bytes_)
      return data_;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    ZRT_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone)
      fatal(call, "collectives through MPI (--comm mpi) cannot be captured in a CUDA graph; run train.bin "
                  "with --cuda-graphs off");
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (data_)
      ZRT_CUDA_CHECK(cudaFreeHost(data_));
    data_ = nullptr;
    ZRT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void **>(&data_), bytes));
    bytes_ = bytes;
    return data_;
  }

private:
  char *data_ = nullptr;
  size_t bytes_ = 0;
};

/// recv /= ranks on the host, as the CPU backend averages after its MPI sums (cpu/Runtime.cpp).
void divide(void *recv, int32_t dtype, int64_t count, int ranks) {
  if (dtype == 1)
    cpu::scale(static_cast<bf16 *>(recv), static_cast<bf16 *>(recv), count, 1.0 / ranks);
  else
    cpu::scale(static_cast<float *>(recv), static_cast<float *>(recv), count, 1.0 / ranks);
}

class HostStagedCommunicator final : public StreamCommunicator {
public:
  HostStagedCommunicator(std::unique_ptr<Communicator> host, cudaStream_t stream)
      : host_(std::move(host)), stream_(stream) {}

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  bool capturable() const override { return false; }

  void run(const CollectiveArgs &a) override {
    const char *call = collectiveName(a.kind);
    const int64_t eb = static_cast<int64_t>(dtypeSize(a.dtype)), n = size();
    CollectiveArgs h = a;
    switch (a.kind) {
    case Collective::AllGather: { // this rank's slice staged in place: MPI_IN_PLACE
      char *all = recvBuffer_.reserve(a.count * n * eb, stream_, call);
      toHost(all + rank() * a.count * eb, a.send, a.count * eb);
      h.send = all + rank() * a.count * eb;
      h.recv = all;
      host_->run(h);
      toDevice(a.recv, all, a.count * n * eb);
      return;
    }
    case Collective::ReduceScatter: { // the send's `total` values; the padding is the MPI communicator's
      const int64_t sent = a.total >= 0 && a.total < a.count * n ? a.total : a.count * n;
      char *send = sendBuffer_.reserve(sent * eb, stream_, call);
      char *recv = recvBuffer_.reserve(a.count * eb, stream_, call);
      toHost(send, a.send, sent * eb);
      h.send = send;
      h.recv = recv;
      host_->run(h);
      if (a.average && n > 1)
        divide(recv, a.dtype, a.count, n);
      toDevice(a.recv, recv, a.count * eb);
      return;
    }
    case Collective::AllReduce:
    case Collective::Broadcast: { // in place on the host
      char *buf = recvBuffer_.reserve(a.count * eb, stream_, call);
      toHost(buf, a.send, a.count * eb);
      h.send = buf;
      h.recv = buf;
      host_->run(h);
      if (a.kind == Collective::AllReduce && a.average && n > 1)
        divide(buf, a.dtype, a.count, n);
      toDevice(a.recv, buf, a.count * eb);
      return;
    }
    case Collective::AllToAll: {
      char *send = sendBuffer_.reserve(a.count * n * eb, stream_, call);
      char *recv = recvBuffer_.reserve(a.count * n * eb, stream_, call);
      toHost(send, a.send, a.count * n * eb);
      h.send = send;
      h.recv = recv;
      host_->run(h);
      toDevice(a.recv, recv, a.count * n * eb);
      return;
    }
    }
    fatal(call, "unknown collective kind %d", static_cast<int>(a.kind));
  }

  std::unique_ptr<Communicator> split(int color, int key) override { return splitOn(color, key, stream_); }
  std::unique_ptr<Communicator> splitOn(int color, int key, cudaStream_t stream) override {
    std::unique_ptr<Communicator> sub = host_->split(color, key);
    if (!sub)
      return nullptr;
    return std::make_unique<HostStagedCommunicator>(std::move(sub), stream);
  }

  /// Pipeline point to point. A send returns once its bytes are on the host and handed to MPI,
  /// which copies them out (the staging buffer is free again), as the interface asks; a receive
  /// once they are enqueued to the device.
  void sendAsync(const void *buf, int64_t bytes, int peer) override {
    char *host = sendBuffer_.reserve(bytes, stream_, "zrt_pipeline_send");
    toHost(host, buf, bytes);
    host_->sendAsync(host, bytes, peer);
  }
  void recv(void *buf, int64_t bytes, int peer) override {
    char *host = recvBuffer_.reserve(bytes, stream_, "zrt_pipeline_recv");
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_)); // the previous receive's copy has left the buffer
    host_->recv(host, bytes, peer);
    toDevice(buf, host, bytes);
  }
  void flushSends() override {
    host_->flushSends();
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  /// Ring attention's exchange: both directions at once, as the MPI communicator's sendRecv.
  void sendRecv(const void *send, void *recv, int64_t bytes, int to, int from) override {
    char *hostSend = sendBuffer_.reserve(bytes, stream_, "zrt_ring_attention");
    char *hostRecv = recvBuffer_.reserve(bytes, stream_, "zrt_ring_attention");
    toHost(hostSend, send, bytes);
    host_->sendRecv(hostSend, hostRecv, bytes, to, from);
    toDevice(recv, hostRecv, bytes);
  }

  /// The messages packed by peer into pinned memory (each peer's in its order), one
  /// MPI_Alltoallv of the packed blocks, and the blocks unpacked into the receives.
  void exchange(const std::vector<PeerMessage> &sends, const std::vector<PeerMessage> &recvs,
                int64_t unitBytes) override {
    const char *call = "zrt_ep_exchange";
    const int n = size();
    std::vector<int64_t> sendUnits(n, 0), recvUnits(n, 0);
    for (const PeerMessage &m : sends)
      sendUnits[checkedPeer(m, call)] += m.units;
    for (const PeerMessage &m : recvs)
      recvUnits[checkedPeer(m, call)] += m.units;
    std::vector<int64_t> sendAt(n + 1, 0), recvAt(n + 1, 0);
    for (int p = 0; p < n; ++p)
      sendAt[p + 1] = sendAt[p] + sendUnits[p], recvAt[p + 1] = recvAt[p] + recvUnits[p];
    char *send = sendBuffer_.reserve(std::max<int64_t>(sendAt[n] * unitBytes, 1), stream_, call);
    char *recv = recvBuffer_.reserve(std::max<int64_t>(recvAt[n] * unitBytes, 1), stream_, call);
    std::vector<int64_t> at(sendAt.begin(), sendAt.end() - 1);
    for (const PeerMessage &m : sends) {
      if (m.units > 0)
        ZRT_CUDA_CHECK(cudaMemcpyAsync(send + at[m.peer] * unitBytes, m.buf, m.units * unitBytes,
                                       cudaMemcpyDeviceToHost, stream_));
      at[m.peer] += m.units;
    }
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_)); // packed (and the last call's unpacking done)
    host_->allToAllv(send, sendUnits.data(), recv, recvUnits.data(), unitBytes);
    at.assign(recvAt.begin(), recvAt.end() - 1);
    for (const PeerMessage &m : recvs) {
      toDevice(const_cast<void *>(m.buf), recv + at[m.peer] * unitBytes, m.units * unitBytes);
      at[m.peer] += m.units;
    }
  }

  void checkAgreement(const CollectiveArgs &args, int64_t sequence) override {
    host_->checkAgreement(args, sequence);
  }
  [[noreturn]] void abortAll(int exitCode) override { host_->abortAll(exitCode); }
  void finalize() override {
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    host_->finalize();
  }

private:
  int checkedPeer(const PeerMessage &m, const char *call) const {
    if (m.peer < 0 || m.peer >= size() || m.peer == rank() || m.units < 0)
      fatal(call, "a message of %lld units to or from rank %d of a group of %d (not itself)",
            static_cast<long long>(m.units), m.peer, size());
    return m.peer;
  }
  /// Device -> host on the stream, then waits: the host reads it next. The wait also orders this
  /// call after every earlier one on the stream, whose device copies read the staging buffers.
  void toHost(char *host, const void *device, int64_t bytes) {
    if (bytes > 0)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
    ZRT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  /// Host -> device on the stream; later work on the stream sees the result.
  void toDevice(void *device, const char *host, int64_t bytes) {
    if (bytes > 0)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
  }

  std::unique_ptr<Communicator> host_;
  cudaStream_t stream_;
  PinnedBuffer sendBuffer_, recvBuffer_;
};

} // namespace

std::unique_ptr<StreamCommunicator> createHostStagedCommunicator(std::unique_ptr<Communicator> host,
                                                                 cudaStream_t stream) {
  return std::make_unique<HostStagedCommunicator>(std::move(host), stream);
}

} // namespace zrt::cuda
