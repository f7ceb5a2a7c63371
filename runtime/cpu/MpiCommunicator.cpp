// The MPI communicator of the CPU backend. Collectives are issued by one thread (the
// communication stream's), so MPI_THREAD_SERIALIZED suffices; MULTIPLE is asked for.
#include "core/Communicator.h"

#include <mpi.h>
#include <omp.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "core/Error.h"
#include "zrt/bf16.h"

namespace zrt {
namespace {

int positiveEnv(const char *name, int otherwise) {
  const char *v = std::getenv(name);
  int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : otherwise;
}

/// The cores this rank may use and whether the launcher bound it to them (fewer than the node has
/// online), and how many ranks the launcher started on this node. Read before MPI_Init (Open MPI's
/// and MPICH's local-size variables); false where the affinity cannot be read.
struct RankCores {
  int usable;
  bool bound;
  int localRanks;
};
bool readRankCores(RankCores &out) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return false;
  out.usable = CPU_COUNT(&set);
  out.bound = out.usable < sysconf(_SC_NPROCESSORS_ONLN);
  out.localRanks = positiveEnv("OMPI_COMM_WORLD_LOCAL_SIZE", positiveEnv("MPI_LOCALNRANKS", 1));
  return true;
}

/// `mpirun -np 4 ./train.bin` on one node: each rank's OpenMP (and OpenBLAS, which follows it)
/// would start one thread per core the rank may use, the node's cores four times over, and every
/// parallel region's barrier would wait for threads the other ranks' threads had pushed off a core
/// (libomp spins 200 ms before it sleeps). torchrun sets OMP_NUM_THREADS=1 for each process for
/// this reason. Unless the user set OMP_NUM_THREADS, a rank takes its share instead: when the
/// launcher bound it to some cores, those (OpenMP's default: the binding divided them already);
/// else the usable cores divided among this node's ranks, at least one. Set in the environment,
/// for what reads it later, and on OpenMP itself: OpenBLAS's OpenMP build asks OpenMP for its
/// thread count while the libraries load, and OpenMP reads OMP_NUM_THREADS only then, before
/// main. (2-core Intel Xeon, 100 steps of examples/gpt.mlir, medians
/// of 4: np 4 with tp 2 at ZeRO-3 3.9 s against 5.0 s with two threads a rank, np 2 at ZeRO-3 2.3
/// s against 2.65 s.)
void shareCoresAmongLocalRanks() {
  RankCores cores;
  if (std::getenv("OMP_NUM_THREADS") || !readRankCores(cores) || cores.bound || cores.localRanks <= 1)
    return;
  const int share = std::max(1, cores.usable / cores.localRanks);
  setenv("OMP_NUM_THREADS", std::to_string(share).c_str(), /*overwrite=*/0);
  omp_set_num_threads(share);
}

/// The communication stream's thread waits inside blocking MPI calls, and Open MPI waits by
/// polling. Where the compute threads already fill this rank's cores, that poll takes a core
/// from the kernels the collective should overlap with (bench/schedule_bench.py, GPT ZeRO-3,
/// 2 ranks on 2 cores: scheduled/bucketed step time 1.07 polling, 1.00 yielding, medians of
/// 8 and 12 bench runs). Open MPI yields by itself only when it sees more processes than
/// slots: it does not count our threads. So, unless the user chose, ask it to yield when this
/// rank's compute threads plus the communication thread outnumber the cores it may use.
/// MPI_Init reads it.
void yieldWhenCoresAreShared() {
  RankCores rank;
  if (std::getenv("OMPI_MCA_mpi_yield_when_idle") || !readRankCores(rank))
    return;
  // A rank bound to some cores has them to itself; an unbound one shares the node.
  const double cores = rank.bound ? rank.usable : double(rank.usable) / rank.localRanks;
  const int computeThreads = positiveEnv("OMP_NUM_THREADS", rank.usable); // OpenMP's default: one per usable core
  if (computeThreads + 1 > cores)
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
}

/// The most elements per rank one MPI call moves: MPI's int count, or less where
/// ZRT_MPI_MAX_COUNT says (the tests split small collectives this way).
int64_t maxCount() {
  static const int64_t count = [] {
    const char *v = std::getenv("ZRT_MPI_MAX_COUNT");
    const long long n = v ? std::atoll(v) : 0;
    return n > 0 && n < INT32_MAX ? static_cast<int64_t>(n) : static_cast<int64_t>(INT32_MAX);
  }();
  return count;
}

/// bf16 sum for MPI (which has no bf16): add in f32, round once.
void bf16Sum(void *in, void *inout, int *len, MPI_Datatype *) {
  const bf16 *a = static_cast<const bf16 *>(in);
  bf16 *b = static_cast<bf16 *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = bf16(float(a[i]) + float(b[i]));
}

void mpiCheck(int code, const char *call) {
  if (code == MPI_SUCCESS)
    return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  fatal(call, "MPI error: %s", message);
}

[[noreturn]] void abortHook(int exitCode) {
  MPI_Abort(MPI_COMM_WORLD, exitCode);
  std::_Exit(exitCode);
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(int *argc, char ***argv) {
    int provided = 0;
    shareCoresAmongLocalRanks();
    yieldWhenCoresAreShared();
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    setErrorRank(rank_);
    setAbortHook(abortHook);
    // Errors come back as codes and go through fatal(), which names the call.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_SERIALIZED)
      fatal("zrt_init", "MPI provides thread level %d; zrt needs MPI_THREAD_SERIALIZED", provided);
    MPI_Op_create(bf16Sum, /*commute=*/1, &bf16SumOp_);
  }

  /// A group of the world's ranks (MPI_Comm_split): a mesh axis' communicator.
  MpiCommunicator(MPI_Comm comm, MPI_Op bf16SumOp) : comm_(comm), bf16SumOp_(bf16SumOp), owner_(false) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    mpiCheck(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub), "zrt_set_mesh");
    if (sub == MPI_COMM_NULL) // not a member of any group
      return nullptr;
    return std::make_unique<MpiCommunicator>(sub, bf16SumOp_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  /// Calls fn(c0, len, spread) for each stretch [c0, c0 + len) of a block of a.count elements:
  /// `spread` is one value of len elements whose extent is a whole block, so the stretch of
  /// rank (or peer) r lands r blocks further on (the all-gather's and all-to-all's over-long
  /// blocks).
  template <class F>
  void forEachStretch(const CollectiveArgs &a, MPI_Datatype type, int64_t size, int64_t chunk, const char *call,
                      F &&fn) {
    for (int64_t c0 = 0; c0 < a.count; c0 += chunk) {
      const int len = static_cast<int>(std::min(chunk, a.count - c0));
      MPI_Datatype stretch, spread;
      mpiCheck(MPI_Type_contiguous(len, type, &stretch), call);
      mpiCheck(MPI_Type_create_resized(stretch, 0, static_cast<MPI_Aint>(a.count * size), &spread), call);
      mpiCheck(MPI_Type_commit(&spread), call);
      fn(c0, len, spread);
      MPI_Type_free(&spread);
      MPI_Type_free(&stretch);
    }
  }

  /// MPI's counts are int. A collective of more elements per rank than that runs as several,
  /// each over one stretch of every rank's block, in the same order on every rank (an empty
  /// one moves nothing and makes no call: every rank agrees on the count).
  void run(const CollectiveArgs &a) override {
    const char *call = collectiveName(a.kind);
    const MPI_Datatype type = a.dtype == 2 ? MPI_INT8_T : a.dtype == 1 ? MPI_UINT16_T : MPI_FLOAT;
    const MPI_Op sum = a.dtype == 1 ? bf16SumOp_ : MPI_SUM;
    const int64_t size = static_cast<int64_t>(dtypeSize(a.dtype)), chunk = maxCount();
    const char *send = static_cast<const char *>(a.send);
    char *recv = static_cast<char *>(a.recv);
    switch (a.kind) {
    case Collective::AllGather: {
      const bool inPlace = send == recv + rank_ * a.count * size;
      if (a.count <= chunk) {
        const int count = static_cast<int>(a.count);
        mpiCheck(MPI_Allgather(inPlace ? MPI_IN_PLACE : send, count, type, recv, count, type, comm_),
                 call);
        return;
      }
      forEachStretch(a, type, size, chunk, call, [&](int64_t c0, int len, MPI_Datatype spread) {
        mpiCheck(MPI_Allgather(inPlace ? MPI_IN_PLACE : send + c0 * size, len, type, recv + c0 * size, 1, spread,
                               comm_),
                 call);
      });
      return;
    }
    case Collective::ReduceScatter: {
      // Padded: send holds `total` values, the rest count as zeros.
      const int64_t total = a.total >= 0 ? std::min(a.total, a.count * size_) : a.count * size_;
      if (a.count <= chunk && total == a.count * size_) {
        mpiCheck(MPI_Reduce_scatter_block(send, recv, static_cast<int>(a.count), type, sum, comm_), call);
        return;
      }
      if (a.count <= chunk) {
        // Rank r receives the valid part of its block, then zeros.
        std::vector<int> counts(size_);
        for (int r = 0; r < size_; ++r)
          counts[r] = static_cast<int>(std::clamp<int64_t>(total - r * a.count, 0, a.count));
        mpiCheck(MPI_Reduce_scatter(send, recv, counts.data(), type, sum, comm_), call);
        std::memset(recv + counts[rank_] * size, 0, (a.count - counts[rank_]) * size);
        return;
      }
      // One reduce to each rank per stretch of its block: no staging copy of the send buffer.
      for (int r = 0; r < size_; ++r)
        for (int64_t c0 = 0; c0 < a.count; c0 += chunk) {
          const int64_t len = std::min(chunk, a.count - c0);
          const int64_t valid = std::clamp<int64_t>(total - (r * a.count + c0), 0, len);
          if (valid > 0)
            mpiCheck(MPI_Reduce(send + (r * a.count + c0) * size, r == rank_ ? recv + c0 * size : nullptr,
                                static_cast<int>(valid), type, sum, r, comm_),
                     call);
          if (r == rank_ && valid < len)
            std::memset(recv + (c0 + valid) * size, 0, (len - valid) * size);
        }
      return;
    }
    case Collective::AllReduce:
      for (int64_t c0 = 0; c0 < a.count; c0 += chunk) {
        const int len = static_cast<int>(std::min(chunk, a.count - c0));
        mpiCheck(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send + c0 * size, recv + c0 * size, len, type, sum,
                               comm_),
                 call);
      }
      return;
    case Collective::AllToAll:
      forEachStretch(a, type, size, chunk, call, [&](int64_t c0, int, MPI_Datatype spread) {
        mpiCheck(MPI_Alltoall(send + c0 * size, 1, spread, recv + c0 * size, 1, spread, comm_), call);
      });
      return;
    case Collective::Broadcast:
      for (int64_t c0 = 0; c0 < a.count; c0 += chunk) {
        const int len = static_cast<int>(std::min(chunk, a.count - c0));
        mpiCheck(MPI_Bcast(recv + c0 * size, len, type, a.root, comm_), call);
      }
      return;
    }
  }

  void checkAgreement(const CollectiveArgs &a, int64_t sequence) override {
    // One small allreduce gives every rank the max and (negated) min of each
    // field, so every rank reaches the same verdict and none is left waiting.
    int64_t local[4] = {sequence, static_cast<int64_t>(a.kind), a.dtype, a.count};
    int64_t both[8], reduced[8];
    for (int i = 0; i < 4; ++i) {
      both[i] = local[i];
      both[i + 4] = -local[i];
    }
    const char *call = collectiveName(a.kind);
    mpiCheck(MPI_Allreduce(both, reduced, 8, MPI_INT64_T, MPI_MAX, comm_), call);
    static const char *const fields[4] = {"sequence number", "collective kind", "dtype",
                                          "element count"};
    for (int i = 0; i < 4; ++i)
      if (reduced[i] != -reduced[i + 4])
        fatal(call,
              "ranks disagree on collective #%lld: %s is %lld here, ranks have values in "
              "[%lld, %lld]",
              static_cast<long long>(sequence), fields[i], static_cast<long long>(local[i]),
              static_cast<long long>(-reduced[i + 4]), static_cast<long long>(reduced[i]));
  }

  /// MPI_Alltoallv in units of one contiguous datatype of `unitBytes` (a row), so the counts
  /// are rows, not bytes, and stay within MPI's int.
  void allToAllv(const void *send, const int64_t *sendUnits, void *recv, const int64_t *recvUnits,
                 int64_t unitBytes) override {
    const char *call = "zrt_all_to_all_v";
    constexpr int64_t kMaxUnits = INT32_MAX;
    if (unitBytes < 1 || unitBytes > kMaxUnits)
      fatal(call, "a unit of %lld bytes: 1 to %lld", static_cast<long long>(unitBytes),
            static_cast<long long>(kMaxUnits));
    std::vector<int> sc(size_), sd(size_), rc(size_), rd(size_);
    int64_t sendAt = 0, recvAt = 0;
    for (int p = 0; p < size_; ++p) {
      if (sendAt + sendUnits[p] > kMaxUnits || recvAt + recvUnits[p] > kMaxUnits)
        fatal(call, "more than %lld units of %lld bytes in one exchange", static_cast<long long>(kMaxUnits),
              static_cast<long long>(unitBytes));
      sc[p] = static_cast<int>(sendUnits[p]), sd[p] = static_cast<int>(sendAt);
      rc[p] = static_cast<int>(recvUnits[p]), rd[p] = static_cast<int>(recvAt);
      sendAt += sendUnits[p], recvAt += recvUnits[p];
    }
    MPI_Datatype unit;
    mpiCheck(MPI_Type_contiguous(static_cast<int>(unitBytes), MPI_BYTE, &unit), call);
    mpiCheck(MPI_Type_commit(&unit), call);
    const int status = MPI_Alltoallv(send, sc.data(), sd.data(), unit, recv, rc.data(), rd.data(), unit, comm_);
    MPI_Type_free(&unit);
    mpiCheck(status, call);
  }

  /// MPI_Isend from a copy: the caller may reuse `buf` at once, and a send never waits for its
  /// receiver (two neighbours sending to each other at once cannot deadlock). Completed sends
  /// are reaped on every call; bytes above MPI's int count go as several messages.
  void sendAsync(const void *buf, int64_t bytes, int peer) override {
    checkPeer(peer, "zrt_pipe_send");
    reapSends();
    pending_.push_back({std::vector<char>(static_cast<const char *>(buf), static_cast<const char *>(buf) + bytes), {}});
    Pending &p = pending_.back();
    const int64_t chunk = maxCount();
    for (int64_t at = 0; at < bytes || (at == 0 && bytes == 0); at += chunk) {
      MPI_Request request;
      mpiCheck(MPI_Isend(p.bytes.data() + at, static_cast<int>(std::min(chunk, bytes - at)), MPI_BYTE, peer,
                         kPipeTag, comm_, &request),
               "zrt_pipe_send");
      p.requests.push_back(request);
      if (bytes == 0)
        break;
    }
  }
  void recv(void *buf, int64_t bytes, int peer) override {
    checkPeer(peer, "zrt_pipe_recv");
    reapSends();
    const int64_t chunk = maxCount();
    for (int64_t at = 0; at < bytes || (at == 0 && bytes == 0); at += chunk) {
      MPI_Status status;
      const int count = static_cast<int>(std::min(chunk, bytes - at));
      mpiCheck(MPI_Recv(static_cast<char *>(buf) + at, count, MPI_BYTE, peer, kPipeTag, comm_, &status),
               "zrt_pipe_recv");
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (got != count)
        fatal("zrt_pipe_recv", "stage %d sent %d bytes, this stage expected %d: the stages disagree on the "
              "activation's shape", peer, got, count);
      if (bytes == 0)
        break;
    }
  }
  /// Posted now (MPI_Irecv, by pieces of at most maxCount bytes): MPI matches a peer's messages
  /// to the receives posted for them in the order they were posted.
  int64_t recvStart(void *buf, int64_t bytes, int peer) override {
    checkPeer(peer, "zrt_pipe_recv_start");
    reapSends();
    Started r{startedCount_++, peer, {}, {}};
    const int64_t chunk = maxCount();
    for (int64_t at = 0; at < bytes || (at == 0 && bytes == 0); at += chunk) {
      const int count = static_cast<int>(std::min(chunk, bytes - at));
      MPI_Request request;
      mpiCheck(MPI_Irecv(static_cast<char *>(buf) + at, count, MPI_BYTE, peer, kPipeTag, comm_, &request),
               "zrt_pipe_recv_start");
      r.requests.push_back(request);
      r.counts.push_back(count);
      if (bytes == 0)
        break;
    }
    started_.push_back(std::move(r));
    return started_.back().handle;
  }
  void recvWait(int64_t handle) override {
    if (started_.empty() || started_.front().handle != handle)
      fatal("zrt_pipe_recv_wait", "receive %lld waited for out of order", static_cast<long long>(handle));
    Started r = std::move(started_.front());
    started_.pop_front();
    std::vector<MPI_Status> status(r.requests.size());
    mpiCheck(MPI_Waitall(static_cast<int>(r.requests.size()), r.requests.data(), status.data()), "zrt_pipe_recv_wait");
    for (size_t i = 0; i < status.size(); ++i) {
      int got = 0;
      MPI_Get_count(&status[i], MPI_BYTE, &got);
      if (got != r.counts[i])
        fatal("zrt_pipe_recv_wait", "stage %d sent %d bytes, this stage expected %d: the stages disagree on the "
              "activation's shape", r.peer, got, r.counts[i]);
    }
  }
  void flushSends() override {
    for (Pending &p : pending_)
      mpiCheck(MPI_Waitall(static_cast<int>(p.requests.size()), p.requests.data(), MPI_STATUSES_IGNORE),
               "zrt_pipe_flush");
    pending_.clear();
  }

  [[noreturn]] void abortAll(int exitCode) override { abortHook(exitCode); }

  void finalize() override {
    flushSends();
    if (!owner_) {
      MPI_Comm_free(&comm_);
      return;
    }
    MPI_Op_free(&bf16SumOp_);
    MPI_Finalize();
  }

private:
  static constexpr int kPipeTag = 21;
  struct Pending {
    std::vector<char> bytes;
    std::vector<MPI_Request> requests;
  };
  struct Started { // a receive posted ahead (recvStart), oldest first
    int64_t handle;
    int peer;
    std::vector<MPI_Request> requests;
    std::vector<int> counts;
  };
  std::deque<Started> started_;
  int64_t startedCount_ = 0;
  // A rank may message itself: ZB-V's rank P - 1 hands its first chunk's output to its second
  // (MPI matches a rank's own sends; the bytes were copied out at the send).
  void checkPeer(int peer, const char *call) const {
    if (peer < 0 || peer >= size_)
      fatal(call, "stage %d is not a stage of this pipeline (of %d)", peer, size_);
  }
  void reapSends() {
    while (!pending_.empty()) {
      int done = 0;
      Pending &p = pending_.front();
      mpiCheck(MPI_Testall(static_cast<int>(p.requests.size()), p.requests.data(), &done, MPI_STATUSES_IGNORE),
               "zrt_pipe_send");
      if (!done)
        return;
      pending_.pop_front();
    }
  }
  std::deque<Pending> pending_;
  int rank_ = 0, size_ = 1;
  MPI_Comm comm_ = MPI_COMM_WORLD;
  MPI_Op bf16SumOp_ = MPI_OP_NULL;
  bool owner_ = true; // the world's: initializes and finalizes MPI
};
} // namespace

std::unique_ptr<Communicator> createMpiCommunicator(int *argc, char ***argv) {
  return std::make_unique<MpiCommunicator>(argc, argv);
}

} // namespace zrt
