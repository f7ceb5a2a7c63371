// Collectives on the CUDA backend: NCCL on the communication stream, ordered with compute by
// events, among the ranks of one axis of the device mesh (zrt_set_mesh: NCCL's and MPI's
// communicators split per axis), and the host collectives train.bin uses, through MPI.
#include <cstdlib>
#include <cstring>

#include "core/Error.h"
#include "cuda/CudaCheck.h"
#include "cuda/CommChoice.h"
#include "cuda/HostStagedCommunicator.h"
#include "cuda/NcclCommunicator.h"
#include "cuda/PipeColors.h"
#include "cuda/RuntimeState.h"

namespace zrt::cuda::abi {
namespace {

/// One rank: the collective is a copy (padding zero-filled).
void runAlone(const CollectiveArgs &a, cudaStream_t s) {
  const size_t eb = dtypeSize(a.dtype);
  int64_t valid = a.kind == Collective::ReduceScatter && a.total >= 0 ? a.total : a.count;
  if (a.send != a.recv)
    ZRT_CUDA_CHECK(cudaMemcpyAsync(a.recv, a.send, valid * eb, cudaMemcpyDeviceToDevice, s));
  if (valid < a.count)
    ZRT_CUDA_CHECK(cudaMemsetAsync(static_cast<char *>(a.recv) + valid * eb, 0, (a.count - valid) * eb, s));
}

/// The node of each of `group`'s ranks, by group rank; empty where this rank is alone.
std::vector<int> groupNodes(CudaRuntime &r, const Communicator *group, int ranks) {
  int perNode = r.linkNodeSize > 0 ? r.linkNodeSize : launcherLocalRanks();
  if (perNode <= 0)
    perNode = r.ranks;
  std::vector<int> nodes;
  auto it = group ? r.members.find(group) : r.members.end();
  if (it != r.members.end())
    for (int world : it->second)
      nodes.push_back(world / perNode);
  else if (ranks == r.ranks) // the world
    for (int w = 0; w < r.ranks; ++w)
      nodes.push_back(w / perNode);
  return nodes;
}

/// The link counters (zrt_counters.bytes_in_node / _cross_node) of one collective.
void countLinks(CudaRuntime &r, const Communicator *group, const CollectiveArgs &a, int ranks, int rank) {
  const std::vector<int> nodes = groupNodes(r, group, ranks);
  if (nodes.empty())
    return; // alone: nothing sent
  const LinkBytes links = linkBytesSent(a, nodes.data(), ranks, rank);
  r.counters.bytes_in_node += links.inNode;
  r.counters.bytes_cross_node += links.crossNode;
}

/// Records the world rank of each member of a group split with (color, key) from the world.
/// Collective on the world: every rank calls it, a rank in no group (null) with nothing to record.
void recordMembers(CudaRuntime &r, const Communicator *group, int color, int key) {
  MPI_Comm host;
  MPI_Comm_split(MPI_COMM_WORLD, group ? color : MPI_UNDEFINED, key, &host);
  if (host == MPI_COMM_NULL)
    return;
  std::vector<int> world(group->size());
  MPI_Allgather(&r.rank, 1, MPI_INT, world.data(), 1, MPI_INT, host);
  MPI_Comm_free(&host);
  r.members[group] = std::move(world);
}

} // namespace

Communicator *axisGroup(CudaRuntime &r, int32_t axis) {
  return axis == ZRT_AXIS_WORLD || (axis == ZRT_AXIS_DATA && !r.axes[axis]) ? (r.ranks > 1 ? r.comm.get() : nullptr)
         : axis == ZRT_AXIS_PIPELINE_ENDS                                    ? r.pipelineEnds.get()
         : axis == ZRT_AXIS_CONTEXT                                          ? r.context.get()
         : axis == ZRT_AXIS_NODE                                             ? r.node.get()
         : axis == ZRT_AXIS_CROSS                                            ? r.cross.get()
         : axis == ZRT_AXIS_HPZ                                              ? r.hpz.get()
         : axis == ZRT_AXIS_EXPERT                                           ? r.expert.get()
         : axis == ZRT_AXIS_EXPERT_DATA ? (r.expertData ? r.expertData.get() : axisGroup(r, ZRT_AXIS_DATA))
                                        : r.axes[axis].get();
}

int64_t exchangeOnAxis(int32_t axis, const char *call, const std::vector<PeerMessage> &sends,
                       const std::vector<PeerMessage> &recvs, int64_t unitBytes, void *zero, int64_t zeroBytes,
                       bool async) {
  CudaRuntime &r = current(call);
  if (r.capturing >= 0)
    fatal(call, "an exchange whose counts the host reads cannot be captured in a CUDA graph");
  Communicator *group = axisGroup(r, axis);
  const int ranks = group ? group->size() : 1, me = group ? group->rank() : 0;
  const std::vector<int> nodes = groupNodes(r, group, ranks);
  std::vector<PeerMessage> toOthers, fromOthers, toSelf, fromSelf;
  int64_t sent = 0;
  for (const PeerMessage &m : sends) {
    if (m.peer < 0 || m.peer >= ranks || m.units < 0)
      fatal(call, "a message of %lld units to rank %d of a group of %d", static_cast<long long>(m.units), m.peer,
            ranks);
    (m.peer == me ? toSelf : toOthers).push_back(m);
    if (m.peer == me)
      continue;
    const int64_t bytes = m.units * unitBytes;
    sent += bytes;
    if (!nodes.empty())
      (nodes[m.peer] == nodes[me] ? r.counters.bytes_in_node : r.counters.bytes_cross_node) += bytes;
  }
  for (const PeerMessage &m : recvs) {
    if (m.peer < 0 || m.peer >= ranks || m.units < 0)
      fatal(call, "a message of %lld units from rank %d of a group of %d", static_cast<long long>(m.units), m.peer,
            ranks);
    (m.peer == me ? fromSelf : fromOthers).push_back(m);
  }
  if (toSelf.size() != fromSelf.size())
    fatal(call, "%zu messages to itself and %zu from itself", toSelf.size(), fromSelf.size());
  const int kind = static_cast<int>(Collective::AllToAll);
  r.counters.calls[kind] += 1;
  r.counters.bytes_sent[kind] += sent;
  joinHostWork(r);
  r.device->commWaitsForCompute();
  {
    GpuScope transfer(call, r.device->comm(), TraceTrack::Communication, sent);
    if (zeroBytes > 0)
      ZRT_CUDA_CHECK(cudaMemsetAsync(zero, 0, zeroBytes, r.device->comm()));
    for (size_t k = 0; k < toSelf.size(); ++k) {
      if (toSelf[k].units != fromSelf[k].units)
        fatal(call, "message %zu to itself has %lld units, its receive %lld", k,
              static_cast<long long>(toSelf[k].units), static_cast<long long>(fromSelf[k].units));
      ZRT_CUDA_CHECK(cudaMemcpyAsync(const_cast<void *>(fromSelf[k].buf), toSelf[k].buf, toSelf[k].units * unitBytes,
                                     cudaMemcpyDeviceToDevice, r.device->comm()));
    }
    if (!toOthers.empty() || !fromOthers.empty())
      static_cast<StreamCommunicator *>(group)->exchange(toOthers, fromOthers, unitBytes);
  }
  if (async)
    return inFlight(r, commDone(r));
  computeWaits(commDone(r));
  return 0;
}

cudaEvent_t issue(const CollectiveArgs &a) {
  CudaRuntime &r = current(collectiveName(a.kind));
  if (a.dtype != 0 && a.dtype != 1 && a.dtype != 2)
    fatal(collectiveName(a.kind), "unknown dtype %d (0 = f32, 1 = bf16, 2 = i8)", a.dtype);
  if (a.dtype == 2 && (a.kind == Collective::ReduceScatter || a.kind == Collective::AllReduce))
    fatal(collectiveName(a.kind), "bytes (dtype 2) are moved, never reduced: dequantize first");
  if (a.axis < 0 || a.axis > ZRT_AXIS_EXPERT_DATA)
    fatal(collectiveName(a.kind), "unknown mesh axis %d (0 data, 1 tensor, 2 pipeline, 3 world, 4 pipeline ends, "
                                  "5 context, 6 node, 7 cross, 8 hpz, 9 expert, 10 expert data)", a.axis);
  // The axis' group; a group of one rank copies.
  Communicator *group = axisGroup(r, a.axis);
  const int ranks = group ? group->size() : 1, rank = group ? group->rank() : 0;
  int kind = static_cast<int>(a.kind);
  r.counters.calls[kind] += 1;
  r.counters.bytes_sent[kind] += ringBytesSent(a, ranks, rank);
  countLinks(r, group, a, ranks, rank);
  joinHostWork(r); // a collective's input may be what the host-side optimizer wrote back
  r.device->commWaitsForCompute();
  {
    GpuScope transfer(collectiveName(a.kind), r.device->comm(), TraceTrack::Communication,
                      ringBytesSent(a, ranks, rank));
    if (ranks > 1)
      group->run(a); // averages itself (ncclAvg)
    else
      runAlone(a, r.device->comm());
  }
  return commDone(r);
}

cudaEvent_t commDone(CudaRuntime &r) {
  cudaEvent_t done;
  if (r.pool.empty()) {
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  } else {
    done = r.pool.back();
    r.pool.pop_back();
  }
  ZRT_CUDA_CHECK(cudaEventRecord(done, r.device->comm()));
  return done;
}

int64_t inFlight(CudaRuntime &r, cudaEvent_t done) {
  r.inFlight[++r.lastHandle] = done;
  return r.lastHandle;
}

void computeWaits(cudaEvent_t done) {
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(compute(), done, 0));
  rt->pool.push_back(done);
}

void runBlocking(const CollectiveArgs &a) { computeWaits(issue(a)); }

int64_t start(const CollectiveArgs &a) {
  CudaRuntime &r = current(collectiveName(a.kind));
  return inFlight(r, issue(a));
}

CollectiveArgs args(Collective kind, int32_t dtype, const void *send, void *recv, int64_t count, int32_t average,
                    int32_t root, int64_t total, int32_t axis) {
  return CollectiveArgs{kind, dtype, send, recv, count, average != 0, root, total, axis};
}

void startCommunicator(CudaRuntime &r, std::unique_ptr<Communicator> control) {
  if (r.ranks == 1) {
    r.comm = std::move(control);
    return;
  }
  int devices = 0;
  ZRT_CUDA_CHECK(cudaGetDeviceCount(&devices));
  const CommChoice choice = chooseComm(std::getenv("ZRT_COMM"), launcherLocalRanks(), devices, /*ncclBuilt=*/true);
  if (choice.transport == CommTransport::Nccl) {
    r.comm = createNcclCommunicator(std::move(control), r.device->comm());
    r.commDescription = "NCCL (" + choice.why + ")";
  } else {
    r.comm = createHostStagedCommunicator(std::move(control), r.device->comm());
    r.commCapturable = false;
    r.commDescription = "MPI over pinned host buffers, steps not captured as CUDA graphs (" + choice.why + ")";
  }
}

void finalizeMesh(CudaRuntime &r) {
  for (std::vector<CudaRuntime::PipeSend> &unread : r.selfMessages) { // none after a whole step
    r.pipeSends.insert(r.pipeSends.end(), unread.begin(), unread.end());
    unread.clear();
  }
  for (CudaRuntime::PipeSend &send : r.pipeSends) {
    cudaEventSynchronize(send.done);
    cudaEventDestroy(send.done);
    cudaFree(send.staging);
  }
  r.pipeSends.clear();
  for (std::unique_ptr<Communicator> &axis : r.axes)
    if (axis)
      axis->finalize();
  for (std::unique_ptr<Communicator> *pipe : {&r.pipelineEnds, &r.context, &r.expert, &r.expertData})
    if (*pipe)
      (*pipe)->finalize();
  for (std::vector<std::unique_ptr<Communicator>> &kind : r.pipeComms)
    for (std::unique_ptr<Communicator> &comm : kind)
      if (comm)
        comm->finalize();
  for (auto &kind : r.pipeStreams)
    for (cudaStream_t stream : kind)
      if (stream)
        cudaStreamDestroy(stream);
  for (MPI_Comm &host : r.hostAxes)
    if (host != MPI_COMM_NULL)
      MPI_Comm_free(&host);
  for (MPI_Comm *host : {&r.hostExpert, &r.hostExpertData})
    if (*host != MPI_COMM_NULL)
      MPI_Comm_free(host);
}

namespace {
/// The MPI communicator of `axis` for host collectives; null for a one-rank group.
MPI_Comm hostGroup(CudaRuntime &r, int32_t axis, const char *call) {
  if ((axis < 0 || axis > ZRT_AXIS_WORLD) && axis != ZRT_AXIS_EXPERT && axis != ZRT_AXIS_EXPERT_DATA)
    fatal(call, "unknown mesh axis %d for a host collective (0 data, 1 tensor, 2 pipeline, 3 world, 9 expert, "
                "10 expert data)", axis);
  if (!r.mpi || r.ranks == 1)
    return MPI_COMM_NULL;
  if (axis == ZRT_AXIS_EXPERT)
    return r.hostExpert; // null: alone in it
  if (axis == ZRT_AXIS_EXPERT_DATA && r.hostExpertData != MPI_COMM_NULL)
    return r.hostExpertData;
  if (axis == ZRT_AXIS_EXPERT_DATA)
    axis = ZRT_AXIS_DATA;
  if (axis == ZRT_AXIS_WORLD || r.hostAxes[axis] == MPI_COMM_NULL)
    return axis == ZRT_AXIS_WORLD || axis == ZRT_AXIS_DATA ? MPI_COMM_WORLD : MPI_COMM_NULL;
  return r.hostAxes[axis];
}

void hostCollective(int32_t axis, const void *send, void *recv, int64_t count, bool gather, bool average) {
  CudaRuntime &r = current("zrt_host collective");
  MPI_Comm comm = hostGroup(r, axis, "zrt_host collective");
  if (comm == MPI_COMM_NULL) {
    if (send != recv)
      std::memmove(recv, send, count * sizeof(float));
    return;
  }
  if (gather) {
    MPI_Allgather(send, static_cast<int>(count), MPI_FLOAT, recv, static_cast<int>(count), MPI_FLOAT, comm);
    return;
  }
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
  if (average)
    for (int64_t i = 0; i < count; ++i)
      static_cast<float *>(recv)[i] /= static_cast<float>(size);
}
} // namespace

} // namespace zrt::cuda::abi

using namespace zrt;
using namespace zrt::cuda::abi;

extern "C" {

void zrt_set_mesh(int32_t tp, int32_t pp) {
  CudaRuntime &r = current("zrt_set_mesh");
  const int world = r.ranks, rank = r.rank;
  if (tp < 1 || pp < 1 || world % (tp * pp) != 0)
    fatal("zrt_set_mesh", "a mesh of tp %d x pp %d does not divide the %d ranks", tp, pp, world);
  if (r.meshSet)
    fatal("zrt_set_mesh", "called twice");
  r.meshSet = true;
  const int dp = world / (tp * pp);
  // Rank = (pipeline x dp + data) x tp + tensor.
  const int t = rank % tp, d = rank / tp % dp, p = rank / (tp * dp);
  r.meshRank[ZRT_AXIS_DATA] = d, r.meshRank[ZRT_AXIS_TENSOR] = t, r.meshRank[ZRT_AXIS_PIPELINE] = p;
  r.meshSize[ZRT_AXIS_DATA] = dp, r.meshSize[ZRT_AXIS_TENSOR] = tp, r.meshSize[ZRT_AXIS_PIPELINE] = pp;
  if (world == 1)
    return;
  // Each group: the ranks equal in the other two coordinates, ordered by their own.
  const int colors[3] = {p * tp + t, p * dp + d, d * tp + t}, keys[3] = {d, t, p};
  ZRT_CUDA_CHECK(cudaDeviceSynchronize()); // splitting is collective: nothing may be in flight
  for (int axis = 0; axis < 3; ++axis) {
    r.axes[axis] = r.comm->split(colors[axis], keys[axis]);
    MPI_Comm_split(MPI_COMM_WORLD, colors[axis], keys[axis], &r.hostAxes[axis]);
    recordMembers(r, r.axes[axis].get(), colors[axis], keys[axis]);
  }
  const bool end = pp > 1 && (p == 0 || p == pp - 1);
  r.pipelineEnds = r.comm->split(end ? d * tp + t : -1, p);
  recordMembers(r, r.pipelineEnds.get(), d * tp + t, p);
  if (pp > 1)
    for (int kind = 0; kind < 2; ++kind) {
      for (cudaStream_t &stream : r.pipeStreams[kind])
        ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      // One communicator of the whole pipeline group per colour: this rank's own on its send
      // stream, the others on its receive stream.
      for (int color = 0; color < zrt::cuda::pipeColors(pp); ++color)
        r.pipeComms[kind].push_back(zrt::cuda::splitOnStream(
            *r.comm, colors[ZRT_AXIS_PIPELINE], keys[ZRT_AXIS_PIPELINE],
            r.pipeStreams[kind][color == zrt::cuda::pipeColor(p, pp) ? 0 : 1]));
    }
}

void zrt_set_context(int32_t cp) {
  CudaRuntime &r = current("zrt_set_context");
  const int dataRanks = r.meshSize[ZRT_AXIS_DATA];
  if (cp < 1 || dataRanks % cp != 0)
    fatal("zrt_set_context", "%d context-parallel ranks do not divide the %d ranks of the data axis", cp, dataRanks);
  if (r.context)
    fatal("zrt_set_context", "called twice");
  if (cp == 1)
    return;
  // The data axis' coordinate is data x cp + context (context faster): the context group is the
  // ranks of one data-parallel coordinate (and the same tensor and pipeline coordinates).
  const int coordinate = r.meshRank[ZRT_AXIS_DATA];
  const int tp = r.meshSize[ZRT_AXIS_TENSOR];
  const int color = (r.meshRank[ZRT_AXIS_PIPELINE] * (dataRanks / cp) + coordinate / cp) * tp +
                    r.meshRank[ZRT_AXIS_TENSOR];
  ZRT_CUDA_CHECK(cudaDeviceSynchronize()); // splitting is collective: nothing may be in flight
  r.context = r.comm->split(color, coordinate % cp);
  recordMembers(r, r.context.get(), color, coordinate % cp);
}
void zrt_set_experts(int32_t ep) {
  CudaRuntime &r = current("zrt_set_experts");
  const int dp = r.meshSize[ZRT_AXIS_DATA], d = r.meshRank[ZRT_AXIS_DATA];
  if (ep < 1 || dp % ep != 0)
    fatal("zrt_set_experts", "%d expert-parallel ranks do not divide the %d ranks of the data axis", ep, dp);
  if (r.expert || r.expertData)
    fatal("zrt_set_experts", "called twice");
  if (ep == 1)
    return;
  // Consecutive data coordinates form an expert group, as the CPU backend's (DeepSpeed-MoE's and
  // Megatron-Core's order: expert parallelism inside data parallelism). Colours are the data
  // group's (its tensor and pipeline coordinates) refined by the data coordinate.
  const int dataGroup = r.meshRank[ZRT_AXIS_PIPELINE] * r.meshSize[ZRT_AXIS_TENSOR] + r.meshRank[ZRT_AXIS_TENSOR];
  const int expertColor = dataGroup * (dp / ep) + d / ep, expertDataColor = dataGroup * ep + d % ep;
  ZRT_CUDA_CHECK(cudaDeviceSynchronize()); // splitting is collective: nothing may be in flight
  r.expert = r.comm->split(expertColor, d % ep);
  recordMembers(r, r.expert.get(), expertColor, d % ep);
  r.expertData = r.comm->split(expertDataColor, d / ep);
  recordMembers(r, r.expertData.get(), expertDataColor, d / ep);
  MPI_Comm_split(MPI_COMM_WORLD, expertColor, d % ep, &r.hostExpert);
  MPI_Comm_split(MPI_COMM_WORLD, expertDataColor, d / ep, &r.hostExpertData);
  // The exchanges' row counts are known only once the routing ran: the host reads them
  // (ExpertParallel.cu), which a CUDA graph cannot replay.
  r.commCapturable = false;
  r.commDescription += "; expert parallelism's exchanges read their row counts on the host, steps not captured as "
                       "CUDA graphs";
}
void zrt_set_hierarchy(int32_t nodeSize, int32_t hpz, int32_t linkNodeSize) {
  CudaRuntime &r = current("zrt_set_hierarchy");
  const int dp = r.meshSize[ZRT_AXIS_DATA], d = r.meshRank[ZRT_AXIS_DATA];
  if (nodeSize < 1 || dp % nodeSize != 0 || hpz < 1 || dp % hpz != 0 || linkNodeSize < 0)
    fatal("zrt_set_hierarchy", "nodes of %d and hpZ groups of %d ranks must divide the %d data-parallel ranks",
          nodeSize, hpz, dp);
  if (r.node || r.cross || r.hpz)
    fatal("zrt_set_hierarchy", "called twice");
  r.linkNodeSize = linkNodeSize;
  if (r.ranks == 1)
    return;
  // Groups inside this rank's data group (the same tensor and pipeline coordinates).
  const int base = (r.meshRank[ZRT_AXIS_PIPELINE] * r.meshSize[ZRT_AXIS_TENSOR] + r.meshRank[ZRT_AXIS_TENSOR]) * dp;
  ZRT_CUDA_CHECK(cudaDeviceSynchronize()); // splitting is collective: nothing may be in flight
  if (nodeSize > 1) {
    r.node = r.comm->split(base + d / nodeSize, d % nodeSize);
    recordMembers(r, r.node.get(), base + d / nodeSize, d % nodeSize);
    r.cross = r.comm->split(base + d % nodeSize, d / nodeSize);
    recordMembers(r, r.cross.get(), base + d % nodeSize, d / nodeSize);
  }
  if (hpz > 1) {
    r.hpz = r.comm->split(base + d / hpz, d % hpz);
    recordMembers(r, r.hpz.get(), base + d / hpz, d % hpz);
  }
}
int64_t zrt_all_to_all_on_start(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count) {
  return start(args(Collective::AllToAll, dt, send, recv, count, 0, 0, -1, axis));
}
void zrt_all_to_all_on(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllToAll, dt, send, recv, count, 0, 0, -1, axis));
}

// Pipeline point to point (CUDA, compiled and linked, not run: no GPU in CI). A send copies the
// activation on its send stream after the compute so far, then sends the copy; a receive lands
// in its (device) input buffer and the compute stream waits for it.
/// A pipeline message's peer and kind checked; its channel: the kind's (activations' or
/// gradients') communicator of the sender's colour and this rank's stream for that way.
struct PipeChannel {
  Communicator *comm;
  cudaStream_t stream;
};
static PipeChannel pipeChannel(CudaRuntime &r, int32_t stage, int32_t kind, bool send, const char *call) {
  const int pp = r.meshSize[ZRT_AXIS_PIPELINE], self = r.meshRank[ZRT_AXIS_PIPELINE];
  if (r.pipeComms[0].empty() || stage < 0 || stage >= pp)
    fatal(call, "stage %d is not a stage of this rank's pipeline", stage);
  if (kind != ZRT_PIPE_ACTIVATION && kind != ZRT_PIPE_GRADIENT)
    fatal(call, "kind %d is neither an activation (%d) nor a gradient (%d)", kind, ZRT_PIPE_ACTIVATION,
          ZRT_PIPE_GRADIENT);
  const int k = kind == ZRT_PIPE_ACTIVATION ? 0 : 1;
  return {r.pipeComms[k][zrt::cuda::pipeColor(send ? self : stage, pp)].get(), r.pipeStreams[k][send ? 0 : 1]};
}
void zrt_pipe_send(const void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  CudaRuntime &r = current("zrt_pipe_send");
  const PipeChannel channel = pipeChannel(r, stage, kind, /*send=*/true, "zrt_pipe_send");
  cudaStream_t stream = channel.stream;
  GpuScope trace("zrt_pipe_send", stream, TraceTrack::Communication, bytes);
  r.counters.calls[ZRT_COUNTER_PIPE] += 1;
  r.counters.bytes_sent[ZRT_COUNTER_PIPE] += bytes;
  for (size_t i = 0; i < r.pipeSends.size();) { // reap the sends that completed
    if (cudaEventQuery(r.pipeSends[i].done) == cudaSuccess) {
      cudaEventDestroy(r.pipeSends[i].done);
      ZRT_CUDA_CHECK(cudaFree(r.pipeSends[i].staging));
      r.pipeSends.erase(r.pipeSends.begin() + i);
    } else {
      ++i;
    }
  }
  CudaRuntime::PipeSend send{};
  ZRT_CUDA_CHECK(cudaMalloc(&send.staging, bytes > 0 ? bytes : 1));
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&send.done, cudaEventDisableTiming));
  cudaEvent_t computed;
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
  ZRT_CUDA_CHECK(cudaEventRecord(computed, compute()));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(stream, computed, 0));
  ZRT_CUDA_CHECK(cudaEventDestroy(computed));
  ZRT_CUDA_CHECK(cudaMemcpyAsync(send.staging, buf, bytes, cudaMemcpyDeviceToDevice, stream));
  const bool toSelf = stage == r.meshRank[ZRT_AXIS_PIPELINE];
  if (!toSelf)
    channel.comm->sendAsync(send.staging, bytes, stage);
  ZRT_CUDA_CHECK(cudaEventRecord(send.done, stream));
  if (toSelf) // the receive copies it out and frees it
    r.selfMessages[kind == ZRT_PIPE_ACTIVATION ? 0 : 1].push_back(send);
  else
    r.pipeSends.push_back(send);
}
/// A message this rank sent itself, oldest of its kind first, into `buf`: its copy on the
/// receive stream after the send's copy-out and the buffer's readers, the compute after it.
static void receiveFromSelf(CudaRuntime &r, void *buf, int64_t bytes, int32_t kind, cudaStream_t stream) {
  std::vector<CudaRuntime::PipeSend> &queue = r.selfMessages[kind == ZRT_PIPE_ACTIVATION ? 0 : 1];
  if (queue.empty())
    fatal("zrt_pipe_recv", "this rank receives from itself, but sent itself nothing of this kind (%d)", kind);
  CudaRuntime::PipeSend message = queue.front();
  queue.erase(queue.begin());
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(stream, message.done, 0));
  ZRT_CUDA_CHECK(cudaMemcpyAsync(buf, message.staging, bytes, cudaMemcpyDeviceToDevice, stream));
  ZRT_CUDA_CHECK(cudaEventRecord(message.done, stream)); // reaped with the sends once copied
  r.pipeSends.push_back(message);
}
void zrt_pipe_recv(void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  CudaRuntime &r = current("zrt_pipe_recv");
  const PipeChannel channel = pipeChannel(r, stage, kind, /*send=*/false, "zrt_pipe_recv");
  cudaStream_t stream = channel.stream;
  GpuScope trace("zrt_pipe_recv", stream, TraceTrack::Communication, bytes);
  // The buffer's previous readers (an earlier call's kernels) are done before it is overwritten.
  cudaEvent_t free, done;
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&free, cudaEventDisableTiming));
  ZRT_CUDA_CHECK(cudaEventRecord(free, compute()));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(stream, free, 0));
  ZRT_CUDA_CHECK(cudaEventDestroy(free));
  if (stage == r.meshRank[ZRT_AXIS_PIPELINE])
    receiveFromSelf(r, buf, bytes, kind, stream);
  else
    channel.comm->recv(buf, bytes, stage);
  ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  ZRT_CUDA_CHECK(cudaEventRecord(done, stream));
  computeWaits(done);
}
int64_t zrt_pipe_recv_start(void *buf, int64_t bytes, int32_t stage, int32_t kind) {
  CudaRuntime &r = current("zrt_pipe_recv_start");
  const PipeChannel channel = pipeChannel(r, stage, kind, /*send=*/false, "zrt_pipe_recv_start");
  CudaRuntime::StartedReceive started{buf, bytes, stage, kind, nullptr};
  if (stage != r.meshRank[ZRT_AXIS_PIPELINE] && channel.comm->receivesWithoutBlocking()) {
    // Enqueued now, after the compute so far (the buffer's last readers, whose work the caller
    // has issued): the transfer overlaps the compute issued after it.
    GpuScope trace("zrt_pipe_recv_start", channel.stream, TraceTrack::Communication, bytes);
    cudaEvent_t free;
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&free, cudaEventDisableTiming));
    ZRT_CUDA_CHECK(cudaEventRecord(free, compute()));
    ZRT_CUDA_CHECK(cudaStreamWaitEvent(channel.stream, free, 0));
    ZRT_CUDA_CHECK(cudaEventDestroy(free));
    channel.comm->recv(buf, bytes, stage);
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&started.done, cudaEventDisableTiming));
    ZRT_CUDA_CHECK(cudaEventRecord(started.done, channel.stream));
  }
  return r.pipeReceives.add(started);
}
void zrt_pipe_recv_wait(int64_t handle) {
  CudaRuntime &r = current("zrt_pipe_recv_wait");
  const CudaRuntime::StartedReceive started = r.pipeReceives.take(handle);
  if (!started.done) { // deferred: the receive itself, now
    zrt_pipe_recv(started.buf, started.bytes, started.stage, started.kind);
    return;
  }
  computeWaits(started.done); // the compute waits for the transfer (the event goes back to the pool)
}
void zrt_pipe_flush() {
  CudaRuntime &r = current("zrt_pipe_flush");
  for (auto &kind : r.pipeStreams)
    for (cudaStream_t stream : kind)
      if (stream)
        ZRT_CUDA_CHECK(cudaStreamSynchronize(stream));
}
namespace {
struct MeshPlace {
  int32_t rank, size;
};
// This rank's place on one mesh axis. The pipeline ends' group and ZeRO++'s node, cross and hpZ
// groups as the CPU backend's: this rank alone (rank 0 of 1) where the group was not formed.
MeshPlace meshPlace(const char *call, int32_t axis) {
  CudaRuntime &r = current(call);
  // Expert parallelism's groups: without it (ep 1) this rank alone holds its experts (axisGroup:
  // none), and the ranks holding the same ones are the data axis.
  if (axis == ZRT_AXIS_EXPERT_DATA && !r.expertData)
    axis = ZRT_AXIS_DATA;
  if (axis < 0 || axis > ZRT_AXIS_EXPERT_DATA)
    fatal(call, "unknown mesh axis %d (0 data, 1 tensor, 2 pipeline, 3 world, 4 pipeline ends, 5 context, 6 node, "
                "7 cross, 8 hpz, 9 expert, 10 expert data)", axis);
  if (axis == ZRT_AXIS_WORLD)
    return {r.rank, r.ranks};
  if (axis <= ZRT_AXIS_PIPELINE)
    return {r.meshRank[axis], r.meshSize[axis]};
  Communicator *group = axisGroup(r, axis);
  return group ? MeshPlace{group->rank(), group->size()} : MeshPlace{0, 1};
}
} // namespace

int32_t zrt_mesh_rank(int32_t axis) { return meshPlace("zrt_mesh_rank", axis).rank; }
int32_t zrt_mesh_size(int32_t axis) { return meshPlace("zrt_mesh_size", axis).size; }

void zrt_host_all_gather(int32_t axis, const void *send, void *recv, int64_t count) {
  hostCollective(axis, send, recv, count, true, false);
}
void zrt_host_all_reduce(int32_t axis, const void *send, void *recv, int64_t count, int32_t average) {
  hostCollective(axis, send, recv, count, false, average != 0);
}

void zrt_all_gather(int32_t dt, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, dt, send, recv, count));
}
void zrt_reduce_scatter(int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::ReduceScatter, dt, send, recv, count, average));
}
void zrt_reduce_scatter_padded(int32_t dt, const void *send, void *recv, int64_t count, int64_t total,
                               int32_t average) {
  runBlocking(args(Collective::ReduceScatter, dt, send, recv, count, average, 0, total));
}
void zrt_all_reduce(int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::AllReduce, dt, send, recv, count, average));
}
void zrt_broadcast(int32_t dt, void *buf, int64_t count, int32_t root) {
  runBlocking(args(Collective::Broadcast, dt, buf, buf, count, 0, root));
}
int64_t zrt_all_gather_start(int32_t dt, const void *send, void *recv, int64_t count) {
  return start(args(Collective::AllGather, dt, send, recv, count));
}
int64_t zrt_reduce_scatter_start(int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  return start(args(Collective::ReduceScatter, dt, send, recv, count, average));
}
int64_t zrt_reduce_scatter_padded_start(int32_t dt, const void *send, void *recv, int64_t count, int64_t total,
                                        int32_t average) {
  return start(args(Collective::ReduceScatter, dt, send, recv, count, average, 0, total));
}
int64_t zrt_all_reduce_start(int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  return start(args(Collective::AllReduce, dt, send, recv, count, average));
}
void zrt_wait(int64_t handle) {
  CudaRuntime &r = current("zrt_wait");
  auto it = r.inFlight.find(handle);
  if (it == r.inFlight.end())
    fatal("zrt_wait", "handle %lld was never issued or is already waited on", static_cast<long long>(handle));
  computeWaits(it->second);
  r.inFlight.erase(it);
}
int64_t zrt_all_gather_on_start(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count) {
  return start(args(Collective::AllGather, dt, send, recv, count, 0, 0, -1, axis));
}
int64_t zrt_all_reduce_on_start(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count,
                                int32_t average) {
  return start(args(Collective::AllReduce, dt, send, recv, count, average, 0, -1, axis));
}
void zrt_all_reduce_on(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::AllReduce, dt, send, recv, count, average, 0, -1, axis));
}
void zrt_all_gather_on(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count) {
  runBlocking(args(Collective::AllGather, dt, send, recv, count, 0, 0, -1, axis));
}
void zrt_reduce_scatter_on(int32_t axis, int32_t dt, const void *send, void *recv, int64_t count, int32_t average) {
  runBlocking(args(Collective::ReduceScatter, dt, send, recv, count, average, 0, -1, axis));
}

} // extern "C"
