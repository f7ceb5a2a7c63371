// The process-level half of the C ABI on the CPU backend: start-up and world-size check, the
// arena, counters, and collectives issued on the communication stream.
#include "zrt/zrt.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <thread>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <string>

#include <omp.h>

#include "core/Arena.h"
#include "core/CommStream.h"
#include "core/Communicator.h"
#include "core/StartedReceives.h"
#include "core/Error.h"
#include "core/Tiers.h"
#include "core/Trace.h"
#include "cpu/IsaKernels.h"
#include "cpu/Matmul.h"
#include "cpu/RingAttention.h"

using namespace zrt;

namespace {

struct RuntimeState {
  std::unique_ptr<Communicator> comm; // the world
  // The mesh axes' groups (zrt_set_mesh), by zrt_axis; null: the data axis is the world and
  // the others are this rank alone.
  std::unique_ptr<Communicator> axes[3];
  std::unique_ptr<Communicator> pipelineEnds; // ZRT_AXIS_PIPELINE_ENDS; null: alone in it
  // The pipeline group again, for the gradients' messages (the group's own carries the
  // activations): one ordered channel per kind of zrt_pipe_send. Null without a pipeline.
  std::unique_ptr<Communicator> pipeGradients;
  // Pipeline receives started ahead (zrt_pipe_recv_start): each handle's channel and its handle there.
  StartedReceives<std::pair<Communicator *, int64_t>> pipeReceives;
  std::unique_ptr<Communicator> context;      // ZRT_AXIS_CONTEXT (zrt_set_context); null: alone in it
  // ZeRO++'s groups inside the data axis (zrt_set_hierarchy): ZRT_AXIS_NODE, _CROSS, _HPZ.
  std::unique_ptr<Communicator> node, cross, hpz;
  // Expert parallelism's groups inside the data axis (zrt_set_experts): ZRT_AXIS_EXPERT and
  // ZRT_AXIS_EXPERT_DATA. Null: this rank alone, and the data axis.
  std::unique_ptr<Communicator> expert, expertData;
  // The world ranks of each group's members, by group rank (the link counters' nodes), and the
  // world ranks per physical node.
  std::unordered_map<const Communicator *, std::vector<int>> members;
  int linkNodeSize = 0;
  int meshRank[3] = {0, 0, 0}, meshSize[3] = {1, 1, 1};
  std::unique_ptr<Communicator> alone; // a one-rank group
  std::unique_ptr<CommStream> stream;
  Arena arena;
  zrt_counters counters{};
  // Collectives issued on each group so far: its members compare them (pipeline stages issue
  // different collectives, so one count over all groups would differ between ranks).
  std::unordered_map<const Communicator *, int64_t> sequence;
  bool checkAgreement = true;
  std::vector<std::vector<char>> inputs; // zrt_input_buffer's, by index
  std::vector<float> stepGates;          // zrt_set_step_gates' values
  // The collective running now (on the stream thread or inline), for the watchdog.
  std::atomic<int64_t> runningSequence{0};
  std::atomic<const char *> runningName{nullptr};
  std::atomic<double> runningSince{0};
  std::atomic<double> timeoutSeconds{0};
  std::thread watchdog;
  // zrt_finalize sets it and wakes the watchdog at once: a sleeping watchdog held every rank's
  // exit for up to half a second.
  std::mutex stopMutex;
  std::condition_variable stopSignal;
  bool stopping = false;
};

double monotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Checks twice a second that the running collective has not stalled past the timeout.
void watch(RuntimeState *s) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(s->stopMutex);
      if (s->stopSignal.wait_for(lock, std::chrono::milliseconds(500), [s] { return s->stopping; }))
        return;
    }
    double timeout = s->timeoutSeconds.load();
    int64_t sequence = s->runningSequence.load();
    if (timeout <= 0 || sequence == 0)
      continue;
    double stalled = monotonicSeconds() - s->runningSince.load();
    if (stalled > timeout && s->runningSequence.load() == sequence)
      fatal(s->runningName.load(),
            "collective #%lld made no progress for %.0f s (--comm-timeout): a rank died, is stuck, or "
            "issued another collective; stopping every rank",
            static_cast<long long>(sequence), stalled);
  }
}

RuntimeState *state = nullptr;

RuntimeState &current(const char *call) {
  if (!state)
    fatal(call, "zrt_init was not called");
  return *state;
}

/// The communicator of `axis`'s group (zrt_axis).
Communicator *groupOf(RuntimeState &s, int32_t axis, const char *call) {
  if (axis == ZRT_AXIS_WORLD)
    return s.comm.get();
  if (axis == ZRT_AXIS_PIPELINE_ENDS)
    return s.pipelineEnds ? s.pipelineEnds.get() : s.alone.get();
  if (axis == ZRT_AXIS_NODE || axis == ZRT_AXIS_CROSS || axis == ZRT_AXIS_HPZ) {
    const std::unique_ptr<Communicator> &g = axis == ZRT_AXIS_NODE ? s.node : axis == ZRT_AXIS_CROSS ? s.cross : s.hpz;
    return g ? g.get() : s.alone.get();
  }
  if (axis == ZRT_AXIS_CONTEXT)
    return s.context ? s.context.get() : s.alone.get();
  if (axis == ZRT_AXIS_EXPERT)
    return s.expert ? s.expert.get() : s.alone.get();
  if (axis == ZRT_AXIS_EXPERT_DATA && s.expertData)
    return s.expertData.get();
  if (axis == ZRT_AXIS_EXPERT_DATA)
    axis = ZRT_AXIS_DATA;
  if (axis < 0 || axis > ZRT_AXIS_PIPELINE)
    fatal(call, "unknown mesh axis %d (0 data, 1 tensor, 2 pipeline, 3 world, 4 pipeline ends, 5 context, 6 node, "
                "7 cross, 8 hpz, 9 expert, 10 expert data)", axis);
  if (s.axes[axis])
    return s.axes[axis].get();
  return axis == ZRT_AXIS_DATA ? s.comm.get() : s.alone.get();
}

void checkBuffer(const char *call, const char *what, const void *p, int64_t elements,
                 size_t elementSize) {
  if (elements > 0 && !p)
    fatal(call, "%s is null", what);
  if (reinterpret_cast<uintptr_t>(p) % elementSize != 0)
    fatal(call, "%s %p is not aligned to its %zu-byte elements", what, p, elementSize);
}

/// World ranks per physical node for the link counters: zrt_set_hierarchy's, else the
/// launcher's local rank count, else all on one node.
int linkNodeSize(const RuntimeState &s) {
  if (s.linkNodeSize > 0)
    return s.linkNodeSize;
  const int local = launcherLocalRanks();
  return local > 0 ? local : s.comm->size();
}

/// The node of each member of `comm`, by group rank.
std::vector<int> nodesOf(RuntimeState &s, const Communicator *comm) {
  const int perNode = linkNodeSize(s);
  std::vector<int> nodes;
  auto it = s.members.find(comm);
  if (it == s.members.end()) { // the world, or a group of this rank alone
    if (comm == s.comm.get())
      for (int r = 0; r < comm->size(); ++r)
        nodes.push_back(r / perNode);
    else if (comm->size() == 1)
      nodes.push_back(s.comm->rank() / perNode);
    else // every split records its members (recordMembers): one that does not is a runtime bug
      fatal("zrt collective", "a group of %d ranks whose members were never recorded", comm->size());
    return nodes;
  }
  for (int world : it->second)
    nodes.push_back(world / perNode);
  return nodes;
}

/// Records the world rank of each member of a group just split off (collective on it).
void recordMembers(RuntimeState &s, Communicator *group) {
  if (!group)
    return;
  std::vector<int> world(group->size());
  const int mine = s.comm->rank();
  group->run(CollectiveArgs{Collective::AllGather, ZRT_DTYPE_F32, &mine, world.data(), 1, false, 0, -1, 0});
  s.members[group] = std::move(world);
}

/// Validates `a` on the calling thread (so errors name the caller's call), counts it,
/// and returns the work that runs it (on the communication stream or inline).
std::function<void()> prepare(const CollectiveArgs &a, bool counted = true) {
  const char *call = collectiveName(a.kind);
  RuntimeState &s = current(call);
  Communicator *comm = groupOf(s, a.axis, call);
  const int ranks = comm->size();
  if (a.dtype != ZRT_DTYPE_F32 && a.dtype != ZRT_DTYPE_BF16 && a.dtype != ZRT_DTYPE_I8)
    fatal(call, "unknown dtype %d (0 = f32, 1 = bf16, 2 = i8)", a.dtype);
  if (a.dtype == ZRT_DTYPE_I8 && (a.kind == Collective::ReduceScatter || a.kind == Collective::AllReduce))
    fatal(call, "bytes (dtype 2) are moved, never reduced: dequantize first");
  if (a.count < 0)
    fatal(call, "negative element count %lld", static_cast<long long>(a.count));
  const size_t elementSize = dtypeSize(a.dtype);
  if (a.kind == Collective::ReduceScatter && a.total > a.count * ranks)
    fatal(call, "%lld valid elements do not fit %d shards of %lld", static_cast<long long>(a.total),
          ranks, static_cast<long long>(a.count));
  int64_t sendElements = a.kind == Collective::ReduceScatter
                             ? (a.total >= 0 ? a.total : a.count * ranks)
                             : a.count;
  if (a.kind == Collective::AllToAll)
    sendElements = a.count * ranks;
  int64_t recvElements = a.kind == Collective::AllGather || a.kind == Collective::AllToAll ? a.count * ranks : a.count;
  if (a.kind != Collective::Broadcast)
    checkBuffer(call, "send buffer", a.send, sendElements, elementSize);
  checkBuffer(call, "receive buffer", a.recv, recvElements, elementSize);
  auto *sendBegin = static_cast<const char *>(a.send);
  auto *recvBegin = static_cast<const char *>(a.recv);
  // In place: this rank's slice of the gathered buffer is its contribution.
  bool inPlaceGather = a.kind == Collective::AllGather &&
                       sendBegin == recvBegin + comm->rank() * a.count * elementSize;
  if ((a.kind == Collective::AllGather || a.kind == Collective::ReduceScatter || a.kind == Collective::AllToAll) &&
      a.count > 0 &&
      !inPlaceGather) {
    if (sendBegin < recvBegin + recvElements * elementSize &&
        recvBegin < sendBegin + sendElements * elementSize)
      fatal(call, "send and receive buffers overlap");
  }
  if (a.kind == Collective::Broadcast && (a.root < 0 || a.root >= ranks))
    fatal(call, "root %d is outside [0, %d)", a.root, ranks);

  int kind = static_cast<int>(a.kind);
  if (counted) {
    s.counters.calls[kind] += 1;
    s.counters.bytes_sent[kind] += ringBytesSent(a, ranks, comm->rank());
    const LinkBytes links = linkBytesSent(a, nodesOf(s, comm).data(), ranks, comm->rank());
    s.counters.bytes_in_node += links.inNode;
    s.counters.bytes_cross_node += links.crossNode;
  }
  const int64_t sequence = ++s.sequence[comm];
  const bool check = s.checkAgreement && ranks > 1;
  RuntimeState *st = &s;
  return [a, sequence, comm, check, ranks, st] {
    st->runningName.store(collectiveName(a.kind));
    st->runningSince.store(monotonicSeconds());
    st->runningSequence.store(sequence);
    struct Done {
      RuntimeState *st;
      ~Done() { st->runningSequence.store(0); }
    } done{st};
    if (check)
      comm->checkAgreement(a, sequence);
    {
      TraceScope trace(collectiveName(a.kind), TraceTrack::Communication,
                       a.count * static_cast<int64_t>(dtypeSize(a.dtype)));
      comm->run(a);
    }
    if (a.average && ranks > 1) {
      // reduce_scatter: the shard; all_reduce: the buffer
      cpu::isaKernels().scale(a.dtype, a.recv, a.recv, a.count, 1.0 / ranks);
    }
  };
}

/// Queues `a` on the communication stream; returns its handle for zrt_wait.
int64_t issue(const CollectiveArgs &a) {
  std::function<void()> work = prepare(a);
  return current(collectiveName(a.kind)).stream->enqueue(std::move(work));
}

/// Runs `a` on the calling thread after the collectives issued before it.
void runBlocking(const CollectiveArgs &a, bool counted = true) {
  std::function<void()> work = prepare(a, counted);
  RuntimeState &s = current(collectiveName(a.kind));
  TraceScope trace("blocking collective", TraceTrack::Compute);
  s.counters.wait_seconds += s.stream->runInline(work);
}

void waitFor(int64_t handle, const char *call) {
  RuntimeState &s = current(call);
  TraceScope trace("zrt_wait", TraceTrack::Compute);
  s.counters.wait_seconds += s.stream->wait(handle, call);
}

CollectiveArgs args(Collective kind, int32_t dtype, const void *send, void *recv, int64_t count,
                    int32_t average = 0, int32_t root = 0, int64_t total = -1, int32_t axis = ZRT_AXIS_DATA) {
  return CollectiveArgs{kind, dtype, send, recv, count, average != 0, root, total, axis};
}

} // namespace

namespace zrt::cpu {
// For the vocabulary-parallel loss (VocabParallel.cpp): its collectives, in issue order.
void meshAllGather(int32_t axis, const float *send, float *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, ZRT_DTYPE_F32, send, recv, count, 0, 0, -1, axis));
}
void meshAllReduce(int32_t axis, float *buffer, int64_t count) {
  runBlocking(args(Collective::AllReduce, ZRT_DTYPE_F32, buffer, buffer, count, 0, 0, -1, axis));
}
// For expert parallelism (ExpertParallel.cpp): `move` exchanges rows of `rowBytes` among the
// ranks of `axis` (Communicator::allToAllv), after the collectives issued before it, counted as an
// all-to-all of sendRows[p] rows to each other rank p, by link. Inline (returns 0) or queued on the
// communication stream (returns the handle zrt_wait takes).
int64_t meshExchange(int32_t axis, const char *call, const std::vector<int64_t> &sendRows, int64_t rowBytes,
                     std::function<void(Communicator &)> move, bool async) {
  RuntimeState &s = current(call);
  Communicator *comm = groupOf(s, axis, call);
  const int ranks = comm->size(), me = comm->rank();
  const std::vector<int> nodes = nodesOf(s, comm);
  int64_t sent = 0;
  for (int p = 0; p < ranks; ++p) {
    if (p == me)
      continue;
    const int64_t bytes = sendRows[p] * rowBytes;
    sent += bytes;
    (nodes[p] == nodes[me] ? s.counters.bytes_in_node : s.counters.bytes_cross_node) += bytes;
  }
  const int kind = static_cast<int>(Collective::AllToAll);
  s.counters.calls[kind] += 1;
  s.counters.bytes_sent[kind] += sent;
  const int64_t sequence = ++s.sequence[comm];
  const bool check = s.checkAgreement && ranks > 1;
  auto work = [comm, check, sequence, rowBytes, axis, call, sent, move = std::move(move)] {
    if (check) // the same call on every rank of the group (the counts differ: the row size agrees)
      comm->checkAgreement(CollectiveArgs{Collective::AllToAll, ZRT_DTYPE_I8, nullptr, nullptr, rowBytes, false, 0,
                                          -1, axis},
                           sequence);
    TraceScope trace(call, TraceTrack::Communication, sent);
    move(*comm);
  };
  // On the compute track: the issue (a started exchange) or the whole blocking one.
  TraceScope issued(call, TraceTrack::Compute);
  if (async)
    return s.stream->enqueue(std::move(work));
  s.counters.wait_seconds += s.stream->runInline(work);
  return 0;
}
} // namespace zrt::cpu

extern "C" {

void *zrt_init(int64_t expectedWorldSize, int64_t arenaBytes) {
  if (state)
    fatal("zrt_init", "called twice");
  state = new RuntimeState();
  state->comm = launchedByMpi() ? createMpiCommunicator(nullptr, nullptr) : createLocalCommunicator();
  state->alone = createLocalCommunicator();
  const int ranks = state->comm->size(), rank = state->comm->rank();
  if (expectedWorldSize != ranks) {
    // Every rank sees the same mismatch: each reports it and leaves cleanly,
    // before any collective could wait for a rank that is not there.
    std::fprintf(stderr,
                 "zrt: rank %d: zrt_init: this program was compiled for %lld ranks but started "
                 "with %d; run it with mpirun -np %lld\n",
                 rank, static_cast<long long>(expectedWorldSize), ranks,
                 static_cast<long long>(expectedWorldSize));
    state->comm->finalize();
    std::exit(1);
  }
  // The CPU paths are chosen here, so a forced one this CPU cannot run (ZRT_ISA,
  // ZRT_BF16_MATMUL) stops every rank before the first step, not in the middle of one.
  zrt::cpu::isaKernels();
  zrt::cpu::describeMatmulPaths("zrt_init");
  if (const char *checks = std::getenv("ZRT_COLLECTIVE_CHECKS"))
    state->checkAgreement = std::strcmp(checks, "0") != 0;
  state->stream = std::make_unique<CommStream>();
  if (const char *timeout = std::getenv("ZRT_COMM_TIMEOUT"))
    state->timeoutSeconds = std::atof(timeout);
  state->watchdog = std::thread(watch, state);
  state->arena.allocate(arenaBytes);
  state->counters.arena_bytes = arenaBytes;
  return arenaBytes > 0 ? state->arena.at(0, 0, "zrt_init") : nullptr;
}

void zrt_finalize() {
  RuntimeState &s = current("zrt_finalize");
  s.stream->drain();
  trace::write(s.comm->rank());
  {
    std::lock_guard<std::mutex> lock(s.stopMutex);
    s.stopping = true;
  }
  s.stopSignal.notify_one();
  s.watchdog.join();
  s.stream.reset();
  for (std::unique_ptr<Communicator> &axis : s.axes)
    if (axis)
      axis->finalize();
  for (std::unique_ptr<Communicator> *group : {&s.node, &s.cross, &s.hpz})
    if (*group)
      (*group)->finalize();
  if (s.pipelineEnds)
    s.pipelineEnds->finalize();
  if (s.pipeGradients)
    s.pipeGradients->finalize();
  if (s.context)
    s.context->finalize();
  tiers().release(); // every swap done, the store's file closed (and so removed)
  s.comm->finalize();
  delete state;
  state = nullptr;
}

void zrt_set_comm_timeout(double seconds) { current("zrt_set_comm_timeout").timeoutSeconds = seconds; }

void zrt_set_mesh(int32_t tp, int32_t pp) {
  RuntimeState &s = current("zrt_set_mesh");
  const int world = s.comm->size(), rank = s.comm->rank();
  if (tp < 1 || pp < 1 || world % (tp * pp) != 0)
    fatal("zrt_set_mesh", "a mesh of tp %d x pp %d does not divide the %d ranks", tp, pp, world);
  if (s.axes[0])
    fatal("zrt_set_mesh", "called twice");
  s.stream->drain(); // splitting is collective on the world: nothing may be in flight
  const int dp = world / (tp * pp);
  // Rank = (pipeline x dp + data) x tp + tensor.
  const int t = rank % tp, d = rank / tp % dp, p = rank / (tp * dp);
  s.meshRank[ZRT_AXIS_DATA] = d, s.meshRank[ZRT_AXIS_TENSOR] = t, s.meshRank[ZRT_AXIS_PIPELINE] = p;
  s.meshSize[ZRT_AXIS_DATA] = dp, s.meshSize[ZRT_AXIS_TENSOR] = tp, s.meshSize[ZRT_AXIS_PIPELINE] = pp;
  // Each group: the ranks equal in the other two coordinates, ordered by their own.
  s.axes[ZRT_AXIS_DATA] = s.comm->split(p * tp + t, d);
  s.axes[ZRT_AXIS_TENSOR] = s.comm->split(p * dp + d, t);
  s.axes[ZRT_AXIS_PIPELINE] = s.comm->split(d * tp + t, p);
  for (std::unique_ptr<Communicator> &axis : s.axes)
    recordMembers(s, axis.get());
  const bool end = pp > 1 && (p == 0 || p == pp - 1);
  s.pipelineEnds = s.comm->split(end ? d * tp + t : -1, p);
  recordMembers(s, s.pipelineEnds.get());
  s.pipeGradients = s.comm->split(pp > 1 ? d * tp + t : -1, p);
}
void zrt_set_context(int32_t cp) {
  RuntimeState &s = current("zrt_set_context");
  Communicator *data = groupOf(s, ZRT_AXIS_DATA, "zrt_set_context");
  if (cp < 1 || data->size() % cp != 0)
    fatal("zrt_set_context", "%d context-parallel ranks do not divide the %d ranks of the data axis", cp,
          data->size());
  if (s.context)
    fatal("zrt_set_context", "called twice");
  s.stream->drain(); // splitting is collective: nothing may be in flight
  // The data axis' coordinate is data x cp + context (context faster): the context group is the
  // ranks of one data-parallel coordinate.
  const int coordinate = data->rank();
  s.context = data->split(coordinate / cp, coordinate % cp);
  recordMembers(s, s.context.get());
}
void zrt_set_experts(int32_t ep) {
  RuntimeState &s = current("zrt_set_experts");
  Communicator *data = groupOf(s, ZRT_AXIS_DATA, "zrt_set_experts");
  if (ep < 1 || data->size() % ep != 0)
    fatal("zrt_set_experts", "%d expert-parallel ranks do not divide the %d ranks of the data axis", ep, data->size());
  if (s.expert || s.expertData)
    fatal("zrt_set_experts", "called twice");
  if (ep == 1)
    return;
  s.stream->drain(); // splitting is collective: nothing may be in flight
  // Consecutive data coordinates form an expert group (DeepSpeed-MoE's and Megatron-Core's
  // order: expert parallelism inside data parallelism).
  const int d = data->rank();
  s.expert = data->split(d / ep, d % ep);
  s.expertData = data->split(d % ep, d / ep);
  recordMembers(s, s.expert.get());
  recordMembers(s, s.expertData.get());
}
void zrt_set_hierarchy(int32_t nodeSize, int32_t hpz, int32_t linkNodeSize) {
  RuntimeState &s = current("zrt_set_hierarchy");
  Communicator *data = groupOf(s, ZRT_AXIS_DATA, "zrt_set_hierarchy");
  const int dp = data->size(), d = data->rank();
  if (nodeSize < 1 || dp % nodeSize != 0 || hpz < 1 || dp % hpz != 0 || linkNodeSize < 0)
    fatal("zrt_set_hierarchy", "nodes of %d and hpZ groups of %d ranks must divide the %d data-parallel ranks",
          nodeSize, hpz, dp);
  if (s.node || s.cross || s.hpz)
    fatal("zrt_set_hierarchy", "called twice");
  s.stream->drain(); // splitting is collective: nothing may be in flight
  s.linkNodeSize = linkNodeSize;
  if (nodeSize > 1) {
    s.node = data->split(d / nodeSize, d % nodeSize);
    s.cross = data->split(d % nodeSize, d / nodeSize);
    recordMembers(s, s.node.get());
    recordMembers(s, s.cross.get());
  }
  if (hpz > 1) {
    s.hpz = data->split(d / hpz, d % hpz);
    recordMembers(s, s.hpz.get());
  }
}
int64_t zrt_ring_exchange_start(int32_t axis, const void *send, void *recv, int64_t bytes, int32_t to,
                                int32_t from) {
  RuntimeState &s = current("zrt_ring_exchange_start");
  Communicator *group = groupOf(s, axis, "zrt_ring_exchange_start");
  if (bytes < 0 || to < 0 || to >= group->size() || from < 0 || from >= group->size())
    fatal("zrt_ring_exchange_start", "%lld bytes to rank %d from rank %d of a group of %d", static_cast<long long>(bytes),
          to, from, group->size());
  if (to == group->rank() && from == group->rank()) // a ring of one: the block stays
    return s.stream->enqueue([=] { std::memmove(recv, send, static_cast<size_t>(bytes)); });
  s.counters.calls[ZRT_COUNTER_RING] += 1;
  s.counters.bytes_sent[ZRT_COUNTER_RING] += bytes;
  // On the communication thread: the send is copied out, then the receive waits for the peer's.
  return s.stream->enqueue([=] {
    TraceScope trace("zrt_ring_exchange", TraceTrack::Communication, bytes);
    group->sendRecv(send, recv, bytes, to, from);
  });
}
int64_t zrt_all_gather_on_start(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count) {
  return issue(args(Collective::AllGather, dtype, send, recv, count, 0, 0, -1, axis));
}
int64_t zrt_all_to_all_on_start(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count) {
  return issue(args(Collective::AllToAll, dtype, send, recv, count, 0, 0, -1, axis));
}
void zrt_all_to_all_on(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllToAll, dtype, send, recv, count, 0, 0, -1, axis));
}
/// The channel of a pipeline message's kind: the pipeline group, or its twin for gradients.
Communicator *pipeChannel(RuntimeState &s, int32_t kind, const char *call) {
  if (kind != ZRT_PIPE_ACTIVATION && kind != ZRT_PIPE_GRADIENT)
    fatal(call, "kind %d is neither an activation (%d) nor a gradient (%d)", kind, ZRT_PIPE_ACTIVATION,
          ZRT_PIPE_GRADIENT);
  Communicator *pipe = groupOf(s, ZRT_AXIS_PIPELINE, call);
  return kind == ZRT_PIPE_GRADIENT && s.pipeGradients ? s.pipeGradients.get() : pipe;
}
void zrt_pipe_send(const void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  RuntimeState &s = current("zrt_pipe_send");
  Communicator *pipe = pipeChannel(s, kind, "zrt_pipe_send");
  TraceScope trace("zrt_pipe_send", TraceTrack::Communication, bytes);
  s.counters.calls[ZRT_COUNTER_PIPE] += 1;
  s.counters.bytes_sent[ZRT_COUNTER_PIPE] += bytes;
  // After the collectives queued before it, on this thread: MPI sees one caller at a time.
  s.counters.wait_seconds += s.stream->runInline([&] { pipe->sendAsync(buf, bytes, stage); });
}
void zrt_pipe_recv(void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  RuntimeState &s = current("zrt_pipe_recv");
  Communicator *pipe = pipeChannel(s, kind, "zrt_pipe_recv");
  TraceScope trace("zrt_pipe_recv", TraceTrack::Communication, bytes);
  s.counters.wait_seconds += s.stream->runInline([&] { pipe->recv(buf, bytes, stage); });
}
int64_t zrt_pipe_recv_start(void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  RuntimeState &s = current("zrt_pipe_recv_start");
  Communicator *pipe = pipeChannel(s, kind, "zrt_pipe_recv_start");
  TraceScope trace("zrt_pipe_recv_start", TraceTrack::Communication, bytes);
  int64_t started = 0;
  s.counters.wait_seconds += s.stream->runInline([&] { started = pipe->recvStart(buf, bytes, stage); });
  return s.pipeReceives.add({pipe, started});
}
void zrt_pipe_recv_wait(int64_t handle) {
  RuntimeState &s = current("zrt_pipe_recv_wait");
  const std::pair<Communicator *, int64_t> started = s.pipeReceives.take(handle);
  TraceScope trace("zrt_pipe_recv_wait", TraceTrack::Communication, 0);
  s.counters.wait_seconds += s.stream->runInline([&] { started.first->recvWait(started.second); });
}
void zrt_pipe_flush() {
  RuntimeState &s = current("zrt_pipe_flush");
  Communicator *pipe = groupOf(s, ZRT_AXIS_PIPELINE, "zrt_pipe_flush");
  s.counters.wait_seconds += s.stream->runInline([&] {
    pipe->flushSends();
    if (s.pipeGradients)
      s.pipeGradients->flushSends();
  });
}
int32_t zrt_mesh_rank(int32_t axis) {
  RuntimeState &s = current("zrt_mesh_rank");
  return axis == ZRT_AXIS_WORLD ? s.comm->rank() : groupOf(s, axis, "zrt_mesh_rank")->rank();
}
int32_t zrt_mesh_size(int32_t axis) {
  RuntimeState &s = current("zrt_mesh_size");
  return axis == ZRT_AXIS_WORLD ? s.comm->size() : groupOf(s, axis, "zrt_mesh_size")->size();
}

int32_t zrt_rank() { return current("zrt_rank").comm->rank(); }
int32_t zrt_world_size() { return current("zrt_world_size").comm->size(); }

void *zrt_arena_ptr(int64_t offset, int64_t bytes) {
  RuntimeState &s = current("zrt_arena_ptr");
  void *p = s.arena.at(offset, bytes, "zrt_arena_ptr");
  s.counters.arena_high_water = s.arena.highWater();
  return p;
}

void zrt_get_counters(void *out) {
  zrt_counters &c = current("zrt_get_counters").counters;
  const NvmeStore &nvme = tiers().nvme;
  c.swap_read_bytes = nvme.bytesRead;
  c.swap_write_bytes = nvme.bytesWritten;
  c.swap_wait_seconds = nvme.waitSeconds;
  c.ring_attention_scores = zrt::cpu::ringAttentionScores();
  std::memcpy(out, &c, sizeof(zrt_counters));
}

void zrt_describe_backend(void *text, int64_t capacity) {
  current("zrt_describe_backend");
  const std::string line = std::string("cpu: kernels ") + zrt::cpu::isaKernels().isa +
                           (std::getenv("ZRT_ISA") ? " (ZRT_ISA)" : "") + ", " +
                           zrt::cpu::describeMatmulPaths("zrt_describe_backend") + ", " +
                           std::to_string(omp_get_max_threads()) + " OpenMP thread(s) per rank" +
                           (tiers().nvme.isOpen() ? ", " + tiers().nvme.describe() : std::string());
  if (capacity > 0)
    std::snprintf(static_cast<char *>(text), static_cast<size_t>(capacity), "%s", line.c_str());
}

int64_t zrt_all_gather_start(int32_t dtype, const void *send, void *recv, int64_t count) {
  return issue(args(Collective::AllGather, dtype, send, recv, count));
}
int64_t zrt_reduce_scatter_start(int32_t dtype, const void *send, void *recv, int64_t count,
                                 int32_t average) {
  return issue(args(Collective::ReduceScatter, dtype, send, recv, count, average));
}
int64_t zrt_reduce_scatter_padded_start(int32_t dtype, const void *send, void *recv, int64_t count,
                                        int64_t total, int32_t average) {
  if (total < 0)
    fatal("zrt_reduce_scatter_padded_start", "negative element count %lld", static_cast<long long>(total));
  return issue(args(Collective::ReduceScatter, dtype, send, recv, count, average, 0, total));
}
int64_t zrt_all_reduce_start(int32_t dtype, const void *send, void *recv, int64_t count,
                             int32_t average) {
  return issue(args(Collective::AllReduce, dtype, send, recv, count, average));
}
void zrt_wait(int64_t handle) { waitFor(handle, "zrt_wait"); }
int64_t zrt_all_reduce_on_start(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count,
                                int32_t average) {
  return issue(args(Collective::AllReduce, dtype, send, recv, count, average, 0, -1, axis));
}
void zrt_all_reduce_on(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::AllReduce, dtype, send, recv, count, average, 0, -1, axis));
}

void zrt_all_gather_on(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, dtype, send, recv, count, 0, 0, -1, axis));
}
void zrt_reduce_scatter_on(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count,
                           int32_t average) {
  runBlocking(args(Collective::ReduceScatter, dtype, send, recv, count, average, 0, -1, axis));
}
void zrt_reduce_scatter_padded_on(int32_t axis, int32_t dtype, const void *send, void *recv, int64_t count,
                                  int64_t total, int32_t average) {
  if (total < 0)
    fatal("zrt_reduce_scatter_padded_on", "negative element count %lld", static_cast<long long>(total));
  runBlocking(args(Collective::ReduceScatter, dtype, send, recv, count, average, 0, total, axis));
}
void zrt_take_shard(int32_t axis, int32_t dtype, const void *whole, void *part, int64_t count) {
  if (count < 0)
    fatal("zrt_take_shard", "negative element count %lld", static_cast<long long>(count));
  const int64_t rank = zrt_mesh_rank(axis);
  const size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  std::memcpy(part, static_cast<const char *>(whole) + rank * bytes, bytes);
}
void zrt_all_gather(int32_t dtype, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, dtype, send, recv, count));
}
void zrt_reduce_scatter(int32_t dtype, const void *send, void *recv, int64_t count,
                        int32_t average) {
  runBlocking(args(Collective::ReduceScatter, dtype, send, recv, count, average));
}
void zrt_reduce_scatter_padded(int32_t dtype, const void *send, void *recv, int64_t count,
                               int64_t total, int32_t average) {
  if (total < 0)
    fatal("zrt_reduce_scatter_padded", "negative element count %lld", static_cast<long long>(total));
  runBlocking(args(Collective::ReduceScatter, dtype, send, recv, count, average, 0, total));
}
void zrt_all_reduce(int32_t dtype, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::AllReduce, dtype, send, recv, count, average));
}
void zrt_arena_write(int64_t offset, const void *src, int64_t bytes) {
  std::memcpy(current("zrt_arena_write").arena.at(offset, bytes, "zrt_arena_write"), src, bytes);
}
void zrt_arena_read(int64_t offset, void *dst, int64_t bytes) {
  std::memcpy(dst, current("zrt_arena_read").arena.at(offset, bytes, "zrt_arena_read"), bytes);
}
void zrt_arena_fill(int64_t offset, int32_t byte, int64_t bytes) {
  std::memset(current("zrt_arena_fill").arena.at(offset, bytes, "zrt_arena_fill"), byte, bytes);
}
int32_t zrt_arena_all_finite(int32_t dtype, int64_t offset, int64_t count) {
  const size_t size = dtype == ZRT_DTYPE_BF16 ? 2 : 4;
  const void *p = current("zrt_arena_all_finite").arena.at(offset, count * static_cast<int64_t>(size),
                                                            "zrt_arena_all_finite");
  return zrt::cpu::isaKernels().allFinite(dtype, p, count) ? 1 : 0;
}
int64_t zrt_arena_first_nonfinite(int64_t count, const void *offsets, const void *elements, const void *dtypes) {
  for (int64_t i = 0; i < count; ++i)
    if (!zrt_arena_all_finite(static_cast<const int32_t *>(dtypes)[i], static_cast<const int64_t *>(offsets)[i],
                              static_cast<const int64_t *>(elements)[i]))
      return i;
  return -1;
}
void *zrt_input_buffer(int64_t index, int64_t bytes) {
  RuntimeState &s = current("zrt_input_buffer");
  if (index < 0 || bytes < 0)
    fatal("zrt_input_buffer", "index %lld and size %lld must be non-negative", static_cast<long long>(index),
          static_cast<long long>(bytes));
  if (static_cast<int64_t>(s.inputs.size()) <= index)
    s.inputs.resize(index + 1);
  if (static_cast<int64_t>(s.inputs[index].size()) < bytes)
    s.inputs[index].resize(bytes); // once, at start-up: steady-state steps allocate nothing
  return s.inputs[index].data();
}
void zrt_input_write(int64_t index, const void *src, int64_t bytes) {
  RuntimeState &s = current("zrt_input_write");
  if (index < 0 || index >= static_cast<int64_t>(s.inputs.size()) ||
      bytes > static_cast<int64_t>(s.inputs[index].size()))
    fatal("zrt_input_write", "input %lld has no buffer of %lld bytes", static_cast<long long>(index),
          static_cast<long long>(bytes));
  std::memcpy(s.inputs[index].data(), src, bytes);
}
void zrt_set_step_gates(int64_t count, const void *values) {
  RuntimeState &s = current("zrt_set_step_gates");
  if (count < 0 || (count > 0 && !values))
    fatal("zrt_set_step_gates", "%lld values at %p", static_cast<long long>(count), values);
  const float *v = static_cast<const float *>(values);
  s.stepGates.assign(v, v + count);
}
void zrt_step_gate(int64_t index, void *out) {
  RuntimeState &s = current("zrt_step_gate");
  if (index < 0 || index >= static_cast<int64_t>(s.stepGates.size()))
    fatal("zrt_step_gate", "gate %lld was never set (%zu set by zrt_set_step_gates)", static_cast<long long>(index),
          s.stepGates.size());
  *static_cast<float *>(out) = s.stepGates[index];
}
// The kernels run on the host: a constant is read where the executable keeps it.
void *zrt_constant(const void *data, int64_t) { return const_cast<void *>(data); }
double zrt_read_loss(const void *loss) { return *static_cast<const float *>(loss); }
// No graphs on the CPU: the step's host code is the work.
int32_t zrt_graph_begin(int32_t, int32_t) { return 1; }
double zrt_graph_end(int32_t, double hostLoss) { return hostLoss; }
void zrt_graph_scalars(double, int64_t) {}
void zrt_host_all_gather(int32_t axis, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, ZRT_DTYPE_F32, send, recv, count, 0, 0, -1, axis), /*counted=*/false);
}
void zrt_host_all_reduce(int32_t axis, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::AllReduce, ZRT_DTYPE_F32, send, recv, count, average, 0, -1, axis),
              /*counted=*/false);
}
void zrt_broadcast(int32_t dtype, void *buf, int64_t count, int32_t root) {
  runBlocking(args(Collective::Broadcast, dtype, buf, buf, count, 0, root));
}

} // extern "C"
