// The communicator interface (the analogue of MPI_Comm / ncclComm_t): collectives across the
// data-parallel ranks. Implementations: MPI (cpu/MpiCommunicator.cpp) and a single rank
// (core/LocalCommunicator.cpp); NCCL joins with the CUDA backend.
#ifndef ZRT_CORE_COMMUNICATOR_H
#define ZRT_CORE_COMMUNICATOR_H

#include <cstdint>
#include <deque>
#include <memory>

namespace zrt {

enum class Collective : int32_t { AllGather = 0, ReduceScatter = 1, AllReduce = 2, Broadcast = 3, AllToAll = 4 };
constexpr int kCollectiveKinds = 5;
const char *collectiveName(Collective kind); // the ABI call's name, for messages

/// One collective call. `count` is per rank for AllGather (elements each rank
/// contributes) and ReduceScatter (elements each rank receives), the whole
/// buffer for AllReduce and Broadcast, and for AllToAll one block: rank r's
/// block p of `send` goes to rank p, where it is block r of `recv`. `send` may equal `recv` for AllReduce and
/// Broadcast; for AllGather `send` may be this rank's own slice of `recv` (in place).
struct CollectiveArgs {
  Collective kind;
  int32_t dtype; // zrt_dtype
  const void *send;
  void *recv;
  int64_t count;
  bool average; // reduce: divide the sum by the rank count
  int32_t root; // broadcast
  /// ReduceScatter: the elements `send` holds, when fewer than ranks * count (a
  /// ZeRO shard's padding): the missing tail counts as zeros, and the receive
  /// buffer's part beyond them is zero-filled. -1: ranks * count.
  int64_t total = -1;
  int32_t axis = 0; // zrt_axis: whose group runs it
};

size_t dtypeSize(int32_t dtype);

/// Bytes `rank` sends for `args` under the ring algorithms (what the counters, the
/// report and the cost model count): all-gather and reduce-scatter (N-1) shards,
/// all-reduce 2 (N-1)/N of the buffer, broadcast the buffer from the root, all-to-all its N-1
/// blocks to the others.
int64_t ringBytesSent(const CollectiveArgs &args, int ranks, int rank);

/// The same bytes by link: `nodes[i]` is the node of the group's rank i. The ring algorithms
/// send everything to rank + 1 (mod ranks); an all-to-all sends block p to rank p.
struct LinkBytes {
  int64_t inNode = 0, crossNode = 0;
};
LinkBytes linkBytesSent(const CollectiveArgs &args, const int *nodes, int ranks, int rank);

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Runs `args` to completion. Every rank calls with matching arguments in the
  /// same order; the averaging of `average` is done by the caller.
  virtual void run(const CollectiveArgs &args) = 0;
  /// Compares (sequence number, kind, dtype, count) across ranks and stops
  /// every rank with a message naming the call if they differ: a mismatched
  /// collective would otherwise hang or corrupt memory.
  virtual void checkAgreement(const CollectiveArgs &args, int64_t sequence) = 0;
  /// The group of this communicator's ranks that passed the same `color`, ordered by `key`
  /// (MPI_Comm_split, ncclCommSplit): one axis of the device mesh. Every rank calls it; one
  /// that passes a negative color joins no group and gets null.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
  /// Point to point (pipeline parallelism): `bytes` to `peer` of this group, returning once
  /// the bytes are copied out (the transfer completes later: flushSends waits for all), and
  /// from `peer`, returning once they arrived. The single-rank communicator has no peer.
  virtual void sendAsync(const void *buf, int64_t bytes, int peer) = 0;
  virtual void recv(void *buf, int64_t bytes, int peer) = 0;
  virtual void flushSends() = 0;
  /// A receive started ahead of its use (a pipeline stage prefetching a later input while it
  /// computes): the bytes are in `buf` once recvWait(handle) returns. Receives are waited for
  /// in the order they were started. This default receives at the wait: a transport whose
  /// receive blocks the caller must not block before the caller's order asks (it could wait for
  /// a message the peer sends only after one the caller has yet to send).
  virtual int64_t recvStart(void *buf, int64_t bytes, int peer) {
    deferred_.push_back({buf, bytes, peer, started_});
    return started_++;
  }
  virtual void recvWait(int64_t handle) {
    const DeferredReceive r = nextDeferred(handle);
    recv(r.buf, r.bytes, r.peer);
  }
  /// Whether recv returns before its bytes arrive (it enqueues the receive, as NCCL's on a
  /// stream): the caller orders the use after it, and may call it ahead.
  virtual bool receivesWithoutBlocking() const { return false; }
  /// Sends `bytes` of `send` to `to` and receives as many from `from` into `recv`, returning
  /// when both are done (ring attention's step: every rank sends and receives at once).
  virtual void sendRecv(const void *send, void *recv, int64_t bytes, int to, int from) {
    sendAsync(send, bytes, to);
    this->recv(recv, bytes, from);
    flushSends();
  }
  /// An all-to-all of variable counts (MPI_Alltoallv; expert parallelism's token exchange):
  /// `sendUnits[p]` units of `unitBytes` go to rank p, from `send`'s blocks in rank order, and
  /// `recvUnits[p]` arrive from rank p into `recv`'s blocks in rank order. Every rank's
  /// sendUnits[p] must be rank p's recvUnits[this rank]. This default sends point to point.
  virtual void allToAllv(const void *send, const int64_t *sendUnits, void *recv, const int64_t *recvUnits,
                         int64_t unitBytes);
  /// Stops every rank of the job; never returns.
  [[noreturn]] virtual void abortAll(int exitCode) = 0;
  virtual void finalize() = 0;

protected:
  struct DeferredReceive {
    void *buf;
    int64_t bytes;
    int peer;
    int64_t handle;
  };
  /// The oldest receive started and not yet waited for, which must be `handle`'s.
  DeferredReceive nextDeferred(int64_t handle);

private:
  std::deque<DeferredReceive> deferred_;
  int64_t started_ = 0;
};

std::unique_ptr<Communicator> createLocalCommunicator();
/// Initializes MPI (MPI_THREAD_MULTIPLE requested, SERIALIZED required).
std::unique_ptr<Communicator> createMpiCommunicator(int *argc, char ***argv);
/// True when the process was started by an MPI launcher (mpirun, srun).
bool launchedByMpi();
/// The ranks the launcher started on this rank's node (Open MPI, MPICH, Slurm), or 0 when it
/// does not say.
int launcherLocalRanks();

} // namespace zrt

#endif // ZRT_CORE_COMMUNICATOR_H
