//===- Simulator.cpp - one training step of a compiled plan, on a cluster -===//

#include "sim/Simulator.h"

#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "runtime/main/PipelineSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::zc;
using namespace zcc::sim;

void Breakdown::add(const Breakdown &o, double times) {
  compute += times * o.compute;
  recompute += times * o.recompute;
  optimizer += times * o.optimizer;
  bubble += times * o.bubble;
  offload += times * o.offload;
  exposedData += times * o.exposedData;
  exposedTensor += times * o.exposedTensor;
  exposedContext += times * o.exposedContext;
  exposedPipeline += times * o.exposedPipeline;
  exposedExpert += times * o.exposedExpert;
}

std::vector<Breakdown::Named> Breakdown::named() const {
  return {{"compute", "compute", "compute", compute},
          {"recompute", "recompute", "recomputation", recompute},
          {"exposed_comm_data", "exposed comm: data", "exposed data-parallel communication", exposedData},
          {"exposed_comm_tensor", "exposed comm: tensor", "exposed tensor-parallel communication", exposedTensor},
          {"exposed_comm_context", "exposed comm: context", "exposed context-parallel communication", exposedContext},
          {"exposed_comm_pipeline", "exposed comm: pipeline", "exposed pipeline sends", exposedPipeline},
          {"exposed_comm_expert", "exposed comm: expert", "exposed expert-parallel all-to-alls", exposedExpert},
          {"pipeline_bubble", "pipeline bubble", "pipeline bubble", bubble},
          {"offload", "offload", "offload transfers", offload},
          {"optimizer", "optimizer", "optimizer step", optimizer}};
}

namespace {

double bytesOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t ? double(tensorBytes(t)) : 0;
}

/// A collective op's kind, axis, group and bytes per rank (see ClusterCost::collectiveSeconds).
struct CollectiveCall {
  Collective kind;
  MeshAxis axis = MeshAxis::data;
  int64_t ranks = 1;
  double bytes = 0;
  bool async = false;
};

MeshAxis axisOf(Operation *op) {
  if (auto axis = op->getAttrOfType<MeshAxisAttr>("axis"))
    return axis.getValue();
  return MeshAxis::data;
}

int64_t ranksOf(Operation *op) {
  auto ranks = op->getAttrOfType<IntegerAttr>("ranks");
  return ranks ? ranks.getInt() : 1;
}

std::optional<CollectiveCall> collectiveOf(Operation *op) {
  auto call = [&](Collective kind, double bytes, bool async) {
    return CollectiveCall{kind, axisOf(op), ranksOf(op), bytes, async};
  };
  if (isa<AllGatherStartOp>(op))
    return call(Collective::AllGather, bytesOf(op->getOperand(0).getType()), true);
  if (isa<AllGatherOp>(op))
    return call(Collective::AllGather, bytesOf(op->getOperand(0).getType()), false);
  if (auto o = dyn_cast<ReduceScatterStartOp>(op))
    return call(Collective::ReduceScatter, bytesOf(o.getInput().getType()), true);
  if (auto o = dyn_cast<ReduceScatterOp>(op))
    return call(Collective::ReduceScatter, bytesOf(o.getInput().getType()), false);
  if (auto o = dyn_cast<AllReduceStartOp>(op))
    return call(Collective::AllReduce, bytesOf(o.getInput().getType()), true);
  if (auto o = dyn_cast<AllReduceOp>(op))
    return call(Collective::AllReduce, bytesOf(o.getInput().getType()), false);
  if (auto o = dyn_cast<AllToAllOp>(op)) // ZeRO++'s quantized gradient hops
    return call(Collective::AllToAll, bytesOf(o.getInput().getType()), false);
  if (auto o = dyn_cast<AllToAllStartOp>(op))
    return call(Collective::AllToAll, bytesOf(o.getInput().getType()), true);
  // Expert parallelism: the counts' all-gather, and the rows' all-to-alls at a balanced routing
  // (each rank receives the rows it dispatched: zc.ep_counts' `dispatched`).
  if (auto counts = dyn_cast<EpCountsOp>(op))
    return CollectiveCall{Collective::AllGather, MeshAxis::expert, ranksOf(op),
                          bytesOf(counts.getOffsets().getType()), false};
  if (isExpertExchange(op)) {
    RankedTensorType local = expertLocalRows(op);
    const double rows = double(expertBalancedRows(op));
    return CollectiveCall{Collective::AllToAll, MeshAxis::expert, ranksOf(op),
                          rows * local.getDimSize(1) * local.getElementTypeBitWidth() / 8,
                          isa<EpDispatchStartOp, EpCombineStartOp>(op)};
  }
  if (isa<CpToHeadsOp, CpToTokensOp>(op))
    return CollectiveCall{Collective::AllToAll, MeshAxis::context, ranksOf(op), bytesOf(op->getOperand(0).getType()),
                          false};
  if (isa<GatherParamOp, AllGatherParamOp>(op)) {
    auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, op->getAttrOfType<FlatSymbolRefAttr>("param"));
    ParamSharding s = ParamSharding::of(param);
    return CollectiveCall{Collective::AllGather, MeshAxis::data, s.ranks,
                          double(s.shardElements()) * param.getTensorType().getElementTypeBitWidth() / 8, false};
  }
  return std::nullopt;
}

/// The vocabulary-parallel loss' own exchanges over the tensor axis (row maxima gathered, two
/// sums per row all-reduced), run inside the op.
double vocabLossSeconds(Operation *op, const ClusterCost &cost) {
  std::optional<uint64_t> shards;
  Value logits;
  if (auto o = dyn_cast<CrossEntropyOp>(op)) {
    shards = o.getVocabShards();
    logits = o.getLogits();
  } else if (auto o = dyn_cast<CrossEntropyGradOp>(op)) {
    shards = o.getVocabShards();
    logits = o.getLogits();
  }
  if (!shards || *shards < 2)
    return 0;
  RankedTensorType t = tensorOf(logits);
  double rows = double(t.getNumElements()) / t.getShape().back();
  int64_t n = static_cast<int64_t>(*shards);
  return cost.collectiveSeconds(Collective::AllGather, MeshAxis::tensor, n, rows * 4) +
         cost.collectiveSeconds(Collective::AllReduce, MeshAxis::tensor, n, rows * 8);
}

/// Ring attention's key/value blocks around the context ranks: the forward sends its block on
/// C - 1 times; the gradient sends the block with its f32 gradients C times.
double ringExchangeSeconds(Operation *op, const ClusterCost &cost) {
  auto ring = op->getAttrOfType<IntegerAttr>(kContextRingAttr);
  if (!ring || !isa<CausalAttentionOp, CausalAttentionGradOp>(op))
    return 0;
  const int64_t ranks = ring.getInt();
  RankedTensorType key = tensorOf(op->getOperand(isa<CausalAttentionOp>(op) ? 1 : 2));
  double block = 2 * bytesOf(key);
  if (isa<CausalAttentionOp>(op))
    return (ranks - 1) * cost.collectiveSeconds(Collective::Send, MeshAxis::context, 2, block);
  return ranks * cost.collectiveSeconds(Collective::Send, MeshAxis::context, 2, block + 2.0 * key.getNumElements() * 4);
}

bool inHostTier(Operation *op) {
  for (Attribute symbol : namedSymbols(op))
    if (Operation *def = SymbolTable::lookupNearestSymbolFrom(op, cast<StringAttr>(symbol)))
      if (Offload::tierOf(def) == "host")
        return true;
  return false;
}

double swapBytes(Operation *op) {
  std::optional<Offload::Swapped> t = Offload::lookup(op, op->getAttrOfType<FlatSymbolRefAttr>("state"));
  return Offload::swapBytes(op->getAttrOfType<IntegerAttr>("count").getInt(), t ? t->elementBytes : 4);
}

/// One run of `fn` on one device: its time, where it went, and (if asked) its spans from `t0`.
struct FunctionTime {
  double seconds = 0;
  Breakdown parts;
  /// The stage's sends to its neighbour (zc.pipe_send): the runtime copies the activation and
  /// sends it on a stream of its own, so the sender goes on; the receiver waits for it.
  double sendSeconds = 0;
};

FunctionTime timeFunction(func::FuncOp fn, const ClusterCost &cost, bool isUpdate, std::vector<TraceEvent> *trace,
                          int pid, double t0) {
  FunctionTime result;
  if (!fn)
    return result;
  double clock = 0, stream = 0, io = 0;
  DenseMap<Value, std::pair<double, MeshAxis>> finish;
  Breakdown &parts = result.parts;
  auto expose = [&](MeshAxis axis, double seconds) {
    if (seconds <= 0)
      return;
    if (isUpdate) // the update's waits are the optimizer's
      parts.optimizer += seconds;
    else if (axis == MeshAxis::data || axis == MeshAxis::node || axis == MeshAxis::cross || axis == MeshAxis::hpz ||
             axis == MeshAxis::expert_data)
      parts.exposedData += seconds; // ZeRO++'s groups, and the experts' gradient groups, are the data axis'
    else if (axis == MeshAxis::expert)
      parts.exposedExpert += seconds;
    else if (axis == MeshAxis::tensor)
      parts.exposedTensor += seconds;
    else if (axis == MeshAxis::context)
      parts.exposedContext += seconds;
    else
      parts.exposedPipeline += seconds;
  };
  auto span = [&](Operation *op, int tid, double begin, double end, double bytes = -1) {
    if (trace && end > begin)
      trace->push_back({op->getName().getStringRef().str(), pid, tid, t0 + begin * 1e6, t0 + end * 1e6,
                        static_cast<int64_t>(bytes)});
  };
  for (Operation &op : fn.getBody().front()) {
    if (auto send = dyn_cast<PipeSendOp>(op)) {
      double bytes = bytesOf(send.getInput().getType());
      double seconds = cost.collectiveSeconds(Collective::Send, MeshAxis::pipeline, 2, bytes);
      span(&op, 1, clock, clock + seconds, bytes);
      result.sendSeconds += seconds;
      continue;
    }
    if (std::optional<CollectiveCall> c = collectiveOf(&op)) {
      double seconds = cost.collectiveSeconds(c->kind, c->axis, c->ranks, c->bytes);
      double begin = std::max(stream, clock);
      stream = begin + seconds;
      span(&op, 1, begin, stream, c->bytes);
      if (c->async && !cost.collectivesTakeCompute()) {
        finish[op.getResult(0)] = {stream, c->axis};
      } else { // the compute thread waits for the stream and the call (or shares its core with them)
        expose(c->axis, stream - clock);
        clock = stream;
      }
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      auto [done, axis] = finish.lookup(wait.getHandle());
      expose(axis, done - clock);
      clock = std::max(clock, done);
      continue;
    }
    // Offload: NVMe swaps on their own queue, awaited by zc.swap_wait; activations copied to
    // and from host memory in stream order.
    if (isa<SwapInOp, SwapOutOp>(op)) {
      bool read = isa<SwapInOp>(op);
      double seconds = swapBytes(&op) / (read ? cost.cluster().nvmeReadBytesPerSecond
                                              : cost.cluster().nvmeWriteBytesPerSecond) *
                       cost.cluster().devicesPerNode; // the node's drives are shared by its devices
      io = std::max(io, clock) + seconds;
      continue;
    }
    if (isa<SwapWaitOp>(op)) {
      parts.offload += std::max(0.0, io - clock);
      clock = std::max(clock, io);
      continue;
    }
    if (isa<OffloadActivationOp, ReloadActivationOp>(op)) {
      double seconds = bytesOf(op.getOperand(0).getType()) / cost.cluster().hostLinkBytesPerSecond;
      span(&op, 1, clock, clock + seconds);
      parts.offload += seconds;
      clock += seconds;
      continue;
    }
    double seconds = cost.opSeconds(&op);
    // The optimizer of a state in host memory runs on the host: the gradient and the updated
    // parameter cross the host link (DeepSpeed's CPU Adam keeps up with it).
    if (isUpdate && inHostTier(&op))
      seconds = (bytesOf(op.getOperand(0).getType()) * 2) / cost.cluster().hostLinkBytesPerSecond;
    span(&op, 0, clock, clock + seconds);
    clock += seconds;
    if (isUpdate)
      parts.optimizer += seconds;
    else if (op.hasAttr(kRecomputedAttr))
      parts.recompute += seconds;
    else
      parts.compute += seconds;
    // Exchanges inside the op: the vocabulary-parallel loss', ring attention's (overlapped with
    // the blocks' compute; what is longer than it shows).
    if (double vocab = vocabLossSeconds(&op, cost); vocab > 0) {
      expose(MeshAxis::tensor, vocab);
      clock += vocab;
    }
    if (double ring = ringExchangeSeconds(&op, cost); ring > seconds) {
      expose(MeshAxis::context, ring - seconds);
      clock += ring - seconds;
    }
  }
  // The function ends when its last transfer has landed.
  double end = std::max({clock, stream, io});
  if (end > clock) {
    if (isUpdate)
      parts.optimizer += end - clock;
    else
      parts.exposedData += end - clock;
  }
  result.seconds = end;
  return result;
}

/// A pipeline stage's inputs kept for the micro-batches in flight (the schedule's slots at that
/// rank: 1F1B keeps P - s), with the activations its forward keeps for its backward
/// (zcc-pipeline-keep's stash arguments); interleaved over `chunks` chunks, what chunk `chunk` of
/// the rank holds. Alike stages share one module, so the slots are the rank's chunk's, not the
/// module's.
int64_t inFlightInputs(ModuleOp module, zcc::pipeline::Schedule schedule, int64_t microBatches, int64_t pipelineRanks,
                       int64_t rank, int64_t chunks, int64_t chunk) {
  func::FuncOp step = functionWithRole(module, "step");
  if (!step || !module->getAttr("zc.pipeline"))
    return 0;
  // Each input's buffers for as long as it is held, in the table the stages run (which may not
  // be the one a module was compiled for: ZB-V's stages compile as zb-h1's).
  std::map<zcc::pipeline::Hold, int64_t> buffers; // each hold's, counted once
  int64_t bytes = 0;
  for (auto [i, t] : llvm::enumerate(step.getArgumentTypes())) {
    const zcc::pipeline::Hold hold = pipelineInputHold(module, static_cast<unsigned>(i));
    auto [it, added] = buffers.try_emplace(hold, 0);
    if (added)
      it->second = zcc::pipeline::heldSlots(schedule, rank, pipelineRanks, microBatches, chunks, chunk, hold);
    bytes += it->second * tensorBytes(cast<RankedTensorType>(t));
  }
  return bytes;
}

} // namespace

SimResult zcc::sim::simulate(ArrayRef<ModuleOp> stages, const Cluster &cluster, const SimRequest &request) {
  SimResult r;
  r.cluster = cluster.name;
  r.mesh = request.mesh;
  r.microBatches = request.microBatches;
  r.bf16 = request.bf16;
  r.tokensPerStep = request.tokensPerStep;
  r.modelFlopsPerStep = request.modelFlopsPerStep;
  r.peakFlopsPerDevice = cluster.peakFlops(request.bf16);
  r.deviceMemoryBytes = cluster.memoryBytes;
  const ClusterCost cost(cluster, request.mesh, request.attention, request.rowKernels);
  const int64_t p = request.mesh.pp, v = std::max<int64_t>(1, request.mesh.interleave), m = request.microBatches;
  const int64_t chunks = static_cast<int64_t>(stages.size());
  // The table the stages run (runtime/main/PipelineSchedule.h): the request's schedule (over
  // virtual stages compiled as a p x v pipeline of one chunk each, interleaved 1F1B or ZB-V);
  // without one, the schedule the stages were compiled for, or with chunks the interleaved
  // schedule whose stages compile that way. Virtual stage j runs on rank rankOf[j]: j mod p,
  // chunk j / p (Megatron's assignment), or ZB-V's V.
  const zcc::pipeline::Schedule compiled = pipelineSchedule(stages.front());
  std::optional<zcc::pipeline::Schedule> named = zcc::pipeline::parseSchedule(request.schedule);
  const zcc::pipeline::Schedule schedule =
      named && zcc::pipeline::interleaves(*named) == (v > 1) ? *named
      : v == 1                                              ? compiled
      : zcc::pipeline::splitsBackward(compiled)             ? zcc::pipeline::Schedule::ZeroBubbleV
                                                            : zcc::pipeline::Schedule::Interleaved1F1B;
  const zcc::pipeline::Placement placement = zcc::pipeline::placementOf(schedule);
  std::vector<int64_t> rankOf(chunks);
  for (int64_t j = 0; j < chunks; ++j)
    rankOf[j] = zcc::pipeline::rankOfStage(placement, j, p);

  // Each virtual stage's forward ("F"), step ("B"), weight gradients (a zero-bubble schedule's
  // "W") and update, per micro-batch.
  std::vector<FunctionTime> forward(chunks), step(chunks), weight(chunks), update(chunks);
  r.stages.assign(p, {});
  // Alike stages share one module (compileForSimulation): each module is timed and planned once.
  DenseMap<Operation *, int64_t> seen;
  std::vector<int64_t> arenaBytes(chunks, 0), activationPeak(chunks, 0);
  for (int64_t j = 0; j < chunks; ++j) {
    ModuleOp module = stages[j];
    if (auto it = seen.find(module.getOperation()); it != seen.end()) {
      int64_t k = it->second;
      forward[j] = forward[k];
      step[j] = step[k];
      weight[j] = weight[k];
      update[j] = update[k];
      arenaBytes[j] = arenaBytes[k];
      activationPeak[j] = activationPeak[k];
    } else {
      seen[module.getOperation()] = j;
      func::FuncOp fwd = chunks > 1 ? functionWithRole(module, "forward") : func::FuncOp();
      forward[j] = timeFunction(fwd, cost, false, nullptr, 0, 0);
      step[j] = timeFunction(functionWithRole(module, "step"), cost, false, nullptr, 0, 0);
      weight[j] = timeFunction(functionWithRole(module, "weight"), cost, false, nullptr, 0, 0);
      update[j] = timeFunction(functionWithRole(module, "update"), cost, true, nullptr, 0, 0);
      // A stage's step is its backward alone (zcc-pipeline-keep: the forward runs once, in F).
      // zcc-recompute's clones: fusion merges them with ops of the backward, so their share is
      // taken by FLOPs (the plan records them) rather than op by op.
      if (auto plan = module->getAttrOfType<DictionaryAttr>("zc.recompute"))
        if (auto flops = plan.getAs<IntegerAttr>("flops")) {
          double stepFlops = 0;
          functionWithRole(module, "step").walk([&](Operation *op) {
            if (isa_and_nonnull<ZcDialect>(op->getDialect()))
              stepFlops += estimatedFlops(op);
          });
          double share = stepFlops > 0 ? std::min(1.0, double(flops.getInt()) / stepFlops) : 0;
          double again = share * step[j].parts.compute;
          step[j].parts.compute -= again;
          step[j].parts.recompute += again;
        }
      FailureOr<MemoryPlan> arena = planMemory(module, plannedFunctions(module));
      arenaBytes[j] = succeeded(arena) ? arena->totalBytes() : 0;
      activationPeak[j] = succeeded(arena) ? arena->peakLiveBytes(BufferKind::Activation) : 0;
    }
    StageResult &device = r.stages[rankOf[j]];
    device.forwardSeconds += forward[j].seconds;
    device.stepSeconds += step[j].seconds + weight[j].seconds;
    device.updateSeconds += update[j].seconds;
    device.arenaBytes += arenaBytes[j];
    device.activationPeakBytes += activationPeak[j];
    device.inFlightInputBytes +=
        inFlightInputs(module, schedule, m, p, rankOf[j], v, zcc::pipeline::chunkOfStage(placement, j, p));
  }
  for (const StageResult &device : r.stages)
    r.memoryBytes = std::max(r.memoryBytes, device.arenaBytes + device.inFlightInputBytes);

  // The slowest device sets the pace; its parts per micro-batch, m times, and the update.
  int64_t slowest = 0;
  for (int64_t d = 0; d < p; ++d)
    if (r.stages[d].forwardSeconds + r.stages[d].stepSeconds >
        r.stages[slowest].forwardSeconds + r.stages[slowest].stepSeconds)
      slowest = d;
  const double busy = r.stages[slowest].forwardSeconds + r.stages[slowest].stepSeconds;
  double pipelineEnd = 0;
  if (p == 1 && v == 1) {
    pipelineEnd = m * busy;
  } else {
    // The schedule's table timed by its dependencies with each (virtual) stage's F, B (and W) as
    // priced here and its sends.
    std::vector<zcc::pipeline::StageCosts> costs(chunks);
    for (int64_t j = 0; j < chunks; ++j)
      costs[j] = {forward[j].seconds, step[j].seconds, weight[j].seconds, forward[j].sendSeconds,
                  step[j].sendSeconds};
    const zcc::pipeline::Timing timing =
        zcc::pipeline::timeTable(zcc::pipeline::table(schedule, p, m, v), costs, placement);
    if (request.trace)
      for (int64_t s = 0; s < p; ++s)
        for (const zcc::pipeline::Timed &t : timing.stages[s]) {
          std::string name = zcc::pipeline::actionText(t.action, v > 1);
          r.trace.push_back({name.substr(0, 1) + " " + name.substr(1), static_cast<int>(s), 2, t.start * 1e6,
                             t.end * 1e6, -1});
        }
    pipelineEnd = timing.span;
  }
  // Devices that share a node's cores (CPU ranks outnumbering them): a pipeline's waiting stage
  // gives its share of the cores to the others. The stages' times are those of every rank busy
  // at once; the step is then bounded by the critical path at a rank's solo rate (at most one
  // core each) and by the work of all ranks on all the cores.
  const int64_t ranksHere = request.mesh.world();
  double mbScale = 1;
  if (p > 1 && cluster.sharedCores > 0 && cluster.sharedCores < cluster.devicesPerNode &&
      ranksHere <= cluster.devicesPerNode) {
    const double solo = double(std::min(ranksHere, cluster.devicesPerNode)) / double(cluster.sharedCores);
    double work = 0;
    for (const StageResult &device : r.stages)
      work += m * (device.forwardSeconds + device.stepSeconds);
    const double shared = std::max(pipelineEnd / solo, work / double(p));
    if (shared < m * busy) // faster than the slowest stage's own work at the shared rate
      mbScale = shared / (m * busy);
    pipelineEnd = shared;
  }
  double updateSeconds = 0;
  for (const StageResult &device : r.stages)
    updateSeconds = std::max(updateSeconds, device.updateSeconds);
  r.stepSeconds = pipelineEnd + updateSeconds;
  for (int64_t j = 0; j < chunks; ++j) {
    if (rankOf[j] != slowest)
      continue;
    r.parts.add(forward[j].parts, m * mbScale);
    r.parts.add(step[j].parts, m * mbScale);
    r.parts.add(weight[j].parts, m * mbScale);
  }
  r.parts.bubble = std::max(0.0, pipelineEnd - m * busy * mbScale);
  // The update's time, priced as its own parts (the optimizer, and its waits).
  Breakdown longestUpdate;
  for (int64_t d = 0; d < p; ++d)
    if (r.stages[d].updateSeconds == updateSeconds) {
      for (int64_t j = 0; j < chunks; ++j)
        if (rankOf[j] == d)
          longestUpdate.add(update[j].parts);
      break;
    }
  r.parts.add(longestUpdate);

  if (request.trace) {
    // The ops of stage 0's first micro-batch (its forward, then its step) and its update,
    // op by op, on the compute and communication tracks; every stage's schedule above.
    double t0 = 0;
    if (p == 1 && v == 1)
      for (int64_t i = 0; i < m; ++i)
        r.trace.push_back({"B " + std::to_string(i), 0, 2, i * busy * 1e6, (i + 1) * busy * 1e6, -1});
    ModuleOp first = stages.front();
    if (chunks > 1) {
      timeFunction(functionWithRole(first, "forward"), cost, false, &r.trace, 0, t0);
      t0 += forward[0].seconds * 1e6;
    }
    timeFunction(functionWithRole(first, "step"), cost, false, &r.trace, 0, t0);
    timeFunction(functionWithRole(first, "update"), cost, true, &r.trace, 0, pipelineEnd * 1e6);
    r.trace.push_back({"update", 0, 2, pipelineEnd * 1e6, r.stepSeconds * 1e6, -1});
  }
  return r;
}

int64_t SimResult::activationBytes() const {
  int64_t most = 0;
  for (const StageResult &device : stages)
    most = std::max(most, device.activationPeakBytes + device.inFlightInputBytes);
  return most;
}

llvm::json::Value SimResult::toJson() const {
  llvm::json::Object breakdown;
  for (const Breakdown::Named &part : parts.named())
    breakdown[part.key] = part.seconds;
  llvm::json::Array perStage;
  for (const StageResult &s : stages)
    perStage.push_back(llvm::json::Object{{"forward_s", s.forwardSeconds},
                                          {"step_s", s.stepSeconds},
                                          {"update_s", s.updateSeconds},
                                          {"arena_bytes", s.arenaBytes},
                                          {"activation_peak_bytes", s.activationPeakBytes},
                                          {"in_flight_input_bytes", s.inFlightInputBytes}});
  return llvm::json::Object{
      {"cluster", cluster},
      {"mesh", llvm::json::Object{{"tp", mesh.tp},
                                  {"cp", mesh.cp},
                                  {"dp", mesh.dp},
                                  {"pp", mesh.pp},
                                  {"interleave", mesh.interleave},
                                  {"ep", mesh.ep},
                                  {"ranks", mesh.world()}}},
      {"micro_batches", microBatches},
      {"precision", bf16 ? "bf16" : "fp32"},
      {"step_s", stepSeconds},
      {"tokens_per_step", tokensPerStep},
      {"tokens_per_s", tokensPerSecond()},
      {"tokens_per_s_per_device", tokensPerSecond() / mesh.world()},
      {"model_flops_per_step", modelFlopsPerStep},
      {"mfu", mfu()},
      {"memory_bytes", memoryBytes},
      {"device_memory_bytes", deviceMemoryBytes},
      {"fits", fits()},
      {"breakdown_s", std::move(breakdown)},
      {"stages", std::move(perStage)}};
}

void SimResult::print(llvm::raw_ostream &os) const {
  const double gib = double(1 << 30);
  os << llvm::formatv("zcc simulation on {0}: tp {1} x cp {2} x pp {3}{4} x dp {5}{10} = {6} devices, {7}, {8} "
                      "micro-batch{9} per step\n",
                      cluster, mesh.tp, mesh.cp, mesh.pp,
                      mesh.interleave > 1 ? " (" + std::to_string(mesh.interleave) + " virtual stages)" : "", mesh.dp,
                      mesh.world(), bf16 ? "bf16" : "fp32", microBatches, microBatches == 1 ? "" : "es",
                      mesh.ep > 1 ? " (ep " + std::to_string(mesh.ep) + ")" : "");
  // Milliseconds for steps under a second (the models of the test suite, CPU runs).
  const bool ms = stepSeconds < 1;
  const double unit = ms ? 1e3 : 1;
  const char *name = ms ? "ms" : "s";
  os << llvm::formatv("  step                       {0:F3} {1}\n", stepSeconds * unit, name);
  auto line = [&](const char *what, double seconds) {
    if (seconds > 0)
      os << llvm::formatv("    {0,-24}{1,10:F4} {2}  {3,5:F1}%\n", what, seconds * unit, name,
                          100 * seconds / stepSeconds);
  };
  for (const Breakdown::Named &part : parts.named())
    line(part.label, part.seconds);
  os << llvm::formatv("  tokens/s                   {0:F0} ({1:F1} per device)\n", tokensPerSecond(),
                      tokensPerSecond() / mesh.world());
  os << llvm::formatv("  MFU                        {0:F1}% (model FLOPs {1:E3} per step, peak {2:E3} FLOP/s per "
                      "device)\n",
                      100 * mfu(), modelFlopsPerStep, peakFlopsPerDevice);
  os << llvm::formatv("  memory per device          {0:F2} GiB of {1:F2} GiB ({2})\n", memoryBytes / gib,
                      deviceMemoryBytes / gib, fits() ? "fits" : "does not fit");
}

llvm::Error SimResult::writeTrace(llvm::StringRef path) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError(ec, "cannot write the trace '" + path + "': " + ec.message());
  static const char *const tracks[3] = {"compute", "communication", "steps"};
  llvm::json::Array events;
  for (int64_t s = 0; s < mesh.pp; ++s) {
    events.push_back(llvm::json::Object{{"name", "process_name"}, {"ph", "M"}, {"pid", s},
                                        {"args", llvm::json::Object{{"name", "stage " + std::to_string(s) +
                                                                                 " (predicted)"}}}});
    for (int t = 0; t < 3; ++t)
      events.push_back(llvm::json::Object{
          {"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", t}, {"args", llvm::json::Object{{"name", tracks[t]}}}});
  }
  for (const TraceEvent &e : trace) {
    llvm::json::Object event{{"name", e.name}, {"ph", "X"}, {"pid", e.pid}, {"tid", e.tid}, {"ts", e.begin},
                             {"dur", e.end - e.begin}};
    if (e.bytes >= 0)
      event["args"] = llvm::json::Object{{"bytes", e.bytes}};
    events.push_back(std::move(event));
  }
  os << llvm::formatv("{0}", llvm::json::Value(llvm::json::Object{{"displayTimeUnit", "ms"},
                                                                  {"traceEvents", std::move(events)}}))
     << "\n";
  return llvm::Error::success();
}

double zcc::sim::modelFlopsPerStep(ModuleOp model) {
  double flops = 0;
  for (ForwardOp forward : model.getOps<ForwardOp>())
    forward.walk([&](Operation *op) {
      if (isa<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp, MatmulCrossEntropyLossOp, CausalAttentionOp,
              GroupedMatmulOp>(op))
        flops += estimatedFlops(op);
    });
  return 3 * flops;
}

double zcc::sim::tokensPerStep(ModuleOp model) {
  for (ForwardOp forward : model.getOps<ForwardOp>()) {
    auto tokens = dyn_cast<RankedTensorType>(forward.getArgumentTypes().front());
    if (tokens && tokens.getRank() >= 2)
      return double(tokens.getDimSize(0)) * tokens.getDimSize(1);
    if (tokens)
      return double(tokens.getNumElements());
  }
  return 0;
}
