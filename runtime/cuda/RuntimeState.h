// The CUDA backend's process state, shared by the files of its C ABI: Abi.cu (start-up, the
// arena, kernels), Collectives.cu (NCCL collectives on the mesh's axes), StepGraphs.cu (CUDA
// graphs of the step and the update), GpuTrace.cu (--trace on the device) and
// VocabParallel.cu (tensor parallelism's vocabulary-parallel embedding and loss).
#ifndef ZRT_CUDA_RUNTIMESTATE_H
#define ZRT_CUDA_RUNTIMESTATE_H

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/Communicator.h"
#include "core/StartedReceives.h"
#include "core/Trace.h"
#include "cuda/Device.h"
#include "cuda/HostOptimizer.h"
#include "cuda/StreamCommunicator.h"
#include "zrt/KernelMath.h"
#include "zrt/zrt.h"

namespace zrt::cuda::abi {

struct CudaRuntime {
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> comm; // NCCL or MPI over host buffers (CommChoice.h), or the single-rank one
  bool mpi = false;
  // Whether the step's collectives may be captured into a CUDA graph (not the host-staged ones),
  // and the start-up line's words for the transport and why it was chosen.
  bool commCapturable = true;
  std::string commDescription = "single-rank";
  int rank = 0, ranks = 1;
  // The device mesh (zrt_set_mesh), by zrt_axis: each axis' NCCL group (null: the data axis is
  // the world, the others this rank alone) and its MPI group for host collectives.
  std::unique_ptr<Communicator> axes[3];
  std::unique_ptr<Communicator> pipelineEnds; // ZRT_AXIS_PIPELINE_ENDS; null: alone in it
  std::unique_ptr<Communicator> context;      // ZRT_AXIS_CONTEXT (zrt_set_context); null: alone in it
  // ZeRO++'s groups inside the data axis (zrt_set_hierarchy); null: alone in it.
  std::unique_ptr<Communicator> node, cross, hpz;
  // Expert parallelism's groups inside the data axis (zrt_set_experts): ZRT_AXIS_EXPERT and
  // ZRT_AXIS_EXPERT_DATA, and their MPI groups for host collectives. Null: this rank alone, and
  // the data axis.
  std::unique_ptr<Communicator> expert, expertData;
  MPI_Comm hostExpert = MPI_COMM_NULL, hostExpertData = MPI_COMM_NULL;
  // The world ranks of each group's members by group rank (the link counters), and the world
  // ranks per physical node (0: the launcher's count).
  std::unordered_map<const Communicator *, std::vector<int>> members;
  int linkNodeSize = 0;
  MPI_Comm hostAxes[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  // The pipeline's point to point, by kind (activations, gradients) and by way (this rank's
  // sends, its receives): each on its own stream, so that no message waits behind another whose
  // peer waits for it. An NCCL send of more than its buffer waits until the peer's receive runs:
  // on one FIFO stream, a stage's send of micro-batch m + 1's activation would wait for the next
  // stage, which first sends m's gradient, queued behind it; interleaved (chunks per rank) a rank
  // sends activations to the next rank and receives them from the previous one, and P ranks each
  // sending first would wait for each other round the ring. The ways' streams share no
  // communicator: messages travel on the communicator of their sender's colour (pipeColor), and
  // neighbouring ranks' colours differ, so a rank's sends (its colour) and receives (its
  // neighbours') are on different communicators, each used on one stream only.
  std::vector<std::unique_ptr<Communicator>> pipeComms[2]; // [kind][sender's colour]: the whole pipeline group
  cudaStream_t pipeStreams[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}}; // [kind][0 send, 1 receive]
  // Pipeline sends: each from its own device copy (the compute stream may overwrite the
  // activation at once), freed once the send's event completed.
  struct PipeSend {
    void *staging;
    cudaEvent_t done;
  };
  std::vector<PipeSend> pipeSends;
  // Messages a rank sends itself (ZB-V's turn at rank P - 1), by kind, oldest first: each copy
  // and the event its copy-out recorded, received by a device copy (no NCCL call: NCCL pairs a
  // send to self with its receive only inside one group).
  std::vector<PipeSend> selfMessages[2];
  // Pipeline receives started ahead (zrt_pipe_recv_start): enqueued on the receive stream with
  // the event the compute waits for at zrt_pipe_recv_wait, or (a message to itself, a transport
  // whose receive blocks the host) deferred to the wait.
  struct StartedReceive {
    void *buf;
    int64_t bytes;
    int32_t stage, kind;
    cudaEvent_t done; // null: deferred
  };
  StartedReceives<StartedReceive> pipeReceives;
  int meshRank[3] = {0, 0, 0}, meshSize[3] = {1, 1, 1}; // the data axis: the world until set
  bool meshSet = false;
  zrt_counters counters{};
  std::vector<void *> inputs;
  std::unordered_map<const void *, void *> constants; // zrt_constant: host global -> device copy
  std::vector<int64_t> inputBytes;
  // zrt_set_step_gates' values in device memory (grown outside captures only).
  float *stepGates = nullptr;
  int64_t stepGateCount = 0, stepGateCapacity = 0;
  int *errors = nullptr; // device: [0] a label out of range, [1] an id out of range, [2] all_finite, [3] a MoE row
  int *finiteFlags = nullptr; // device: zrt_arena_first_nonfinite's flag per tensor
  // zrt_grad_norm's device buffers: kGradNormBlocks partial sums per tensor, this rank's and the
  // world's sums, and the last norm (zrt_last_grad_norm reads it; a replayed update rewrites it).
  double *gradNormPartials = nullptr;
  size_t gradNormPartialCount = 0;
  float *gradNormScalars = nullptr; // [local, total, kept norm]
  double *gradNormSum = nullptr;    // this rank's sum in f64, over zrt_grad_norm_add's calls
  bool gradNormAdding = false;      // an add since the last reduce: the next one adds to it
  bool gradNormReduced = false;     // a reduce since the last add: zrt_grad_norm_finish may read it
  bool gradNormComputed = false;
  size_t finiteFlagCount = 0;
  // Async collectives: the event of each handle in flight; waited events go back to the
  // pool, so steady-state steps create none.
  std::unordered_map<int64_t, cudaEvent_t> inFlight;
  std::vector<cudaEvent_t> pool;
  int64_t lastHandle = 0;
  // Step graphs, by region: the first run is eager (it sizes the scratch, cuBLASLt's
  // workspaces and NCCL's buffers: nothing may allocate inside a capture), the second is
  // captured, every later one replays. The host calls a replay skips do not count the
  // collectives: each replay adds what the capture counted.
  // A traced kernel or transfer (--trace): timing events around it.
  struct GpuEvent {
    const char *name;
    TraceTrack track;
    int64_t bytes;
    cudaEvent_t begin, end;
  };
  struct StepGraph {
    int64_t eagerRuns = 0;
    bool eagerOnly = false; // its capture could not be replayed (an SGD update: lr is an argument)
    cudaGraphExec_t exec = nullptr;
    const void *loss = nullptr; // where the captured step writes its loss; none in an update
    zrt_counters counted{};     // the collectives the captured run issued
    std::vector<GpuEvent> traced; // its kernels' and transfers' events (--trace)
  };
  // The captured update's AdamW constants: one slot per zrt_adamw call, in pinned host memory
  // copied to the device by the graph's first node, rewritten for each step by
  // zrt_graph_scalars from the hyperparameters each call was captured with.
  struct UpdateSlots {
    static constexpr int kCapacity = 16384;
    math::AdamWStep *host = nullptr, *device = nullptr;
    struct Hyper {
      double beta1, beta2, eps, weightDecay;
    };
    std::vector<Hyper> hyper;
    bool copyCaptured = false;
  } slots;
  bool captureReplayable = true; // false once the capture issued work with per-step host arguments
  // --trace: device time of every kernel and transfer, from timing events around the work
  // (GpuScope), turned into trace records at the next wait for the device. Inside a graph the
  // events are the graph's event nodes: each replay records them again.
  std::vector<GpuEvent> traced;         // recorded eagerly since the last wait
  std::vector<GpuEvent> tracedReplays;  // the events of the graphs launched since the last wait
  std::vector<cudaEvent_t> freeEvents;  // timing events to reuse
  size_t tracedAtCapture = 0;           // traced.size() when the capture began
  cudaEvent_t traceOrigin = nullptr;    // device time 0 of the trace ...
  double traceOriginMicros = 0;         // ... at this host time
  std::vector<StepGraph> graphs;
  int capturing = -1; // the region being captured
  int eagerRegion = -1; // the region running eagerly (zrt_graph_begin .. zrt_graph_end), if any
  // ZeRO-Offload (HostOffload.cu): updates of optimizer state in the host tier run on the CPU,
  // fed and drained by two side streams; the compute stream waits for them lazily (compute()).
  struct HostSide {
    bool pinned = false;                    // the host tier is page-locked (cudaHostRegister)
    cudaStream_t toHost = nullptr;          // gradients (and fp32 shards) copied to pinned memory
    cudaStream_t onHost = nullptr;          // the host functions updating, then the copies back
    cudaEvent_t done = nullptr;             // recorded after the last work on onHost
    bool pending = false;                   // work the compute stream has not waited for yet
    struct Mirror {
      void *host = nullptr;
      int64_t bytes = 0;
    };
    std::unordered_map<const void *, Mirror> mirrors; // pinned copies, by the device buffer
  } hostSide;
  // ZeRO-Infinity's NVMe swaps into the arena's swap slots (NvmeSwap.cu): the store reads and
  // writes page-locked staging copies of each slot range, moved to and from the device in
  // compute-stream order.
  struct SwapSide {
    struct Staging {
      char *host = nullptr;      // 4 KiB aligned (O_DIRECT), page-locked
      int64_t bytes = 0;
      cudaEvent_t copied = nullptr; // recorded after the last device copy reading or writing it
      bool copyPending = false;
    };
    std::unordered_map<const void *, Staging> staging; // by the slot range's device address
    struct Transfer {
      void *device;
      Staging *staging;
      int64_t offset, bytes;
    };
    std::unordered_map<int, std::vector<Transfer>> reads, writes; // by slot, until zrt_swap_wait
  } swapSide;
  const void *capturedLoss = nullptr;
  zrt_counters beforeCapture{};
};

extern CudaRuntime *rt;

/// The runtime, or a fatal error naming `call` before zrt_init.
CudaRuntime &current(const char *call);
/// The compute stream, after the host-side optimizer work enqueued so far (joinHostWork).
cudaStream_t compute();

/// ZeRO-Offload (HostOffload.cu). The host tier page-locked (zrt_tier_open) and released
/// (zrt_finalize); whether `p` points into it.
void pinHostTier(CudaRuntime &r);
void unpinHostTier(CudaRuntime &r);
bool inHostTier(const void *p);
/// The host does work of its own here (a CPU update, NVMe I/O), which a CUDA graph could not
/// replay: the region being run (its first run is eager) stays eager from now on.
void runsEagerly(CudaRuntime &r, const char *call);
/// Enqueues an update whose states are in the host tier: the gradient (and a device fp32
/// shard) copied to pinned memory once the compute stream produced it, the update run by the
/// CPU, what it wrote for the device copied back; chunk by chunk, so copies and updates overlap.
void enqueueHostUpdate(CudaRuntime &r, const char *call, const HostUpdateChunk &whole);
/// The compute stream waits for the host-side work enqueued so far (no host block). Every
/// stream that takes work after the compute stream's (compute(), collectives) calls this first.
void joinHostWork(CudaRuntime &r);
/// Blocks the host until the host-side work is done (before the host tier is read or written).
void drainHostWork(CudaRuntime &r);
/// NVMe swaps (NvmeSwap.cu): zrt_swap_read/write/wait on device slots, and the staging's release.
void swapRead(CudaRuntime &r, int slot, void *device, int64_t offset, int64_t bytes);
void swapWrite(CudaRuntime &r, int slot, const void *device, int64_t offset, int64_t bytes);
void swapWait(CudaRuntime &r, int slot);
void releaseSwapStaging(CudaRuntime &r);

/// The device time of the work enqueued on `stream` while the scope lives, for --trace.
/// ZRT_CUDA_SYNC=1 also waits for the scope's stream when it ends (outside a capture) and stops
/// at the first entry point whose kernel fails, naming it: CUDA reports a kernel's illegal
/// address at some later call otherwise, as CUDA_LAUNCH_BLOCKING does without a name.
class GpuScope {
public:
  GpuScope(const char *name, cudaStream_t stream, TraceTrack track = TraceTrack::Compute, int64_t bytes = -1);
  ~GpuScope();
  GpuScope(const GpuScope &) = delete;
  GpuScope &operator=(const GpuScope &) = delete;

private:
  static cudaEvent_t take(CudaRuntime &r);
  const char *name_;
  cudaStream_t stream_;
  CudaRuntime::GpuEvent event_{};
  bool active_ = false;
};

/// After a wait for the device: the traced events since the last one become trace records.
void resolveTrace();

/// Collectives (Collectives.cu): `issue` enqueues `a` on the communication stream of its axis'
/// group after the compute issued so far and returns the event that completes with it.
CollectiveArgs args(Collective kind, int32_t dtype, const void *send, void *recv, int64_t count, int32_t average = 0,
                    int32_t root = 0, int64_t total = -1, int32_t axis = ZRT_AXIS_DATA);
cudaEvent_t issue(const CollectiveArgs &a);
/// The group of a mesh axis (zrt_axis); null where this rank is alone in it.
Communicator *axisGroup(CudaRuntime &r, int32_t axis);
/// Point-to-point messages among the ranks of `axis`' group as one step on the communication
/// stream (StreamCommunicator::exchange), after the compute issued so far, with `zeroBytes` at
/// `zero` cleared there too (the rows past the received ones). Messages a rank lists to itself are
/// device copies, paired in order. Counted as one all-to-all: the bytes sent to the other ranks, by
/// link. Blocking (the compute waits for it; returns 0) or started (returns zrt_wait's handle).
int64_t exchangeOnAxis(int32_t axis, const char *call, const std::vector<PeerMessage> &sends,
                       const std::vector<PeerMessage> &recvs, int64_t unitBytes, void *zero, int64_t zeroBytes,
                       bool async);
/// An event (from the pool) recorded after the work enqueued so far on the communication stream.
cudaEvent_t commDone(CudaRuntime &r);
/// `done` as a handle in flight, for zrt_wait.
int64_t inFlight(CudaRuntime &r, cudaEvent_t done);
/// The compute stream waits for `done` (no host block); the event is reusable after.
void computeWaits(cudaEvent_t done);
void runBlocking(const CollectiveArgs &a);
int64_t start(const CollectiveArgs &a);
/// The world's communicator (zrt_init) over `control`, the MPI or single-rank one: with several ranks
/// NCCL or MPI over host buffers, as --comm chooses (CommChoice.h).
void startCommunicator(CudaRuntime &r, std::unique_ptr<Communicator> control);
/// Ends the mesh's groups (zrt_finalize, before the world's communicator).
void finalizeMesh(CudaRuntime &r);

/// Waits for the device, reports data errors the kernels flagged, and reads the loss (Abi.cu).
double readLossAfter(const void *loss);

} // namespace zrt::cuda::abi

#endif // ZRT_CUDA_RUNTIMESTATE_H
