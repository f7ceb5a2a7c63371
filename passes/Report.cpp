//===- Report.cpp - per-rank memory and communication of the training plan ===//

#include "passes/CostModel.h"
#include "passes/LinkModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "passes/ReportPredict.h"
#include "runtime/main/PipelineSchedule.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCREPORT
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;
using namespace mlir::zc::report;

namespace {

struct Plan {
  int64_t paramTensors = 0, paramBytes = 0, gradBytes = 0, optimizerBytes = 0, gatheredPeakBytes = 0;
  int64_t allGathers = 0, reduceScatters = 0, allReduces = 0, allToAlls = 0, commBytes = 0;
  // Of those, the tensor axis': region all-reduces and the vocabulary-parallel loss' two.
  int64_t tensorAllReduces = 0, tensorAllGathers = 0, tensorReduceScatters = 0, tensorCommBytes = 0;
  // Of those, sequence parallelism's additions to the traffic the regions' all-reduces had: the
  // backward's second gather of a region's input, and the gradient sums of the parameters the
  // split ops read (norm gains, biases).
  int64_t regatherBytes = 0, gradSumBytes = 0;
  // Context parallelism's exchanges (Ulysses' all-to-alls over the context group; the
  // load-balancing losses' statistics all-reduced over it).
  int64_t contextAllToAlls = 0, contextAllReduces = 0, contextCommBytes = 0;
  // Expert parallelism: its all-to-alls and the counts' all-gathers, at a balanced routing (each
  // rank receives what it dispatches; the real bytes follow the routing).
  int64_t expertAllToAlls = 0, expertAllGathers = 0, expertCommBytes = 0;
  // Pipeline stages: activations and their gradients sent, the tied parameters' gradient sums.
  int64_t pipelineSends = 0, pipelineBytes = 0;
  // hpZ's secondary parameter shards (zcc-zero-pp), not optimizer state.
  int64_t secondaryBytes = 0;
  int64_t maskBytes = 0; // compression training's pruning masks (whole on every rank)
  // Over all ranks, per step, by the link the bytes cross (LinkModel; -1: not modelled).
  int64_t inNodeBytes = -1, crossNodeBytes = -1;
};

/// Counts the collectives of `fn`, `times` runs of it, with the bytes a rank sends
/// under ring algorithms (what the runtime's counters add up).
void countCollectives(func::FuncOp fn, int64_t times, Plan &plan, const std::optional<LinkModel> &links) {
  auto add = [&](LinkModel::Bytes b) {
    plan.inNodeBytes += b.inNode;
    plan.crossNodeBytes += b.crossNode;
  };
  // The data axis' (and ZeRO++'s groups') ring bytes by link.
  auto onLinks = [&](MeshAxis axis, int64_t perRank) {
    if (links && axis != MeshAxis::tensor && axis != MeshAxis::context && axis != MeshAxis::pipeline)
      add(links->ring(axis, perRank));
  };
  auto allReduce = [&](RankedTensorType t, int64_t n, MeshAxis axis = MeshAxis::data) {
    int64_t bytes = times * 2 * (n - 1) * t.getNumElements() * elementBytes(t) / n;
    plan.allReduces += times;
    plan.commBytes += bytes;
    onLinks(axis, bytes);
    if (axis == MeshAxis::tensor) {
      plan.tensorAllReduces += times;
      plan.tensorCommBytes += bytes;
    }
    return bytes;
  };
  // The vocabulary-parallel loss and its gradient each all-gather one f32 per row (the row
  // maxima) and all-reduce two (sums of exponentials, labels' logits) over the tensor axis.
  auto vocabLoss = [&](Value logits, std::optional<uint64_t> shards) {
    if (!shards || *shards < 2)
      return;
    const int64_t n = static_cast<int64_t>(*shards), rows = tensorOf(logits).getNumElements() / tensorOf(logits).getShape().back();
    const int64_t gathered = times * (n - 1) * rows * 4, reduced = times * 2 * (n - 1) * (2 * rows) * 4 / n;
    plan.allGathers += times;
    plan.allReduces += times;
    plan.commBytes += gathered + reduced;
    plan.tensorAllGathers += times;
    plan.tensorAllReduces += times;
    plan.tensorCommBytes += gathered + reduced;
  };
  auto shardWise = [&](int64_t &counter, RankedTensorType shard, int64_t n) {
    counter += times;
    plan.commBytes += times * (n - 1) * shard.getNumElements() * elementBytes(shard);
    return times * (n - 1) * shard.getNumElements() * elementBytes(shard);
  };
  auto onTensor = [&](Operation *op, int64_t &counter, RankedTensorType shard, int64_t n) {
    int64_t bytes = shardWise(counter, shard, n);
    plan.tensorCommBytes += bytes;
    if (op->hasAttr(kRegatherAttr) || op->hasAttr(kRecomputedAttr))
      plan.regatherBytes += bytes;
  };
  fn.walk([&](Operation *op) {
    if (auto ring = op->getAttrOfType<IntegerAttr>(kContextRingAttr); ring && isa<CausalAttentionOp, CausalAttentionGradOp>(op)) {
      // Ring attention: the forward sends its key/value block on C - 1 times; the gradient
      // recomputes that, then sends the block with its f32 key/value gradients C times (home).
      const int64_t ranks = ring.getInt();
      RankedTensorType key = tensorOf(op->getOperand(isa<CausalAttentionOp>(op) ? 1 : 2));
      const int64_t kv = 2 * key.getNumElements(), block = kv * elementBytes(key);
      int64_t bytes = (ranks - 1) * block;
      if (isa<CausalAttentionGradOp>(op))
        bytes += ranks * (block + kv * 4);
      plan.contextCommBytes += times * bytes;
      plan.commBytes += times * bytes;
    } else if (auto pooled = op->getAttrOfType<IntegerAttr>(kContextPooledAttr);
               pooled && isa<MoeAuxLossOp, MoeAuxLossGradOp>(op)) {
      // The choices' counts and score sums [2E] in f32, summed over the context ranks.
      const int64_t experts = tensorOf(op->getOperand(isa<MoeAuxLossOp>(op) ? 0 : 1)).getShape().back();
      auto stats = RankedTensorType::get({2 * experts}, Float32Type::get(op->getContext()));
      const int64_t bytes = allReduce(stats, pooled.getInt(), MeshAxis::context);
      plan.contextAllReduces += times;
      plan.contextCommBytes += bytes;
    } else if (auto counts = dyn_cast<EpCountsOp>(op)) { // every rank's offsets, one int32 each
      const int64_t ranks = static_cast<int64_t>(counts.getRanks());
      const int64_t bytes = times * (ranks - 1) * tensorOf(counts.getOffsets()).getNumElements() * 4;
      plan.allGathers += times;
      plan.expertAllGathers += times;
      plan.commBytes += bytes;
      plan.expertCommBytes += bytes;
    } else if (isExpertExchange(op)) { // the rows of the other ranks' experts, balanced
      const int64_t ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
      RankedTensorType local = expertLocalRows(op);
      const int64_t rows = expertBalancedRows(op);
      const int64_t bytes = times * (ranks - 1) * rows / ranks * local.getDimSize(1) * elementBytes(local);
      plan.allToAlls += times;
      plan.expertAllToAlls += times;
      plan.commBytes += bytes;
      plan.expertCommBytes += bytes;
    } else if (isa<CpToHeadsOp, CpToTokensOp>(op)) { // each rank sends all but its own of `ranks` blocks
      auto ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
      RankedTensorType in = tensorOf(op->getOperand(0));
      int64_t bytes = times * (ranks - 1) * in.getNumElements() / ranks * elementBytes(in);
      plan.allToAlls += times;
      plan.contextAllToAlls += times;
      plan.commBytes += bytes;
      plan.contextCommBytes += bytes;
    } else if (auto o = dyn_cast<AllReduceOp>(op)) {
      int64_t bytes = allReduce(tensorOf(o.getInput()), static_cast<int64_t>(o.getRanks()), o.getAxis());
      if (o->hasAttr(kGradSumAttr))
        plan.gradSumBytes += bytes;
    } else if (auto o = dyn_cast<AllReduceStartOp>(op)) {
      int64_t bytes = allReduce(tensorOf(o.getInput()), static_cast<int64_t>(o.getRanks()), o.getAxis());
      if (o->hasAttr(kGradSumAttr))
        plan.gradSumBytes += bytes;
    } else if (auto o = dyn_cast<AllGatherOp>(op); o && o.getAxis() == MeshAxis::tensor) {
      onTensor(op, plan.tensorAllGathers, tensorOf(o.getInput()), static_cast<int64_t>(o.getRanks()));
      plan.allGathers += times;
    } else if (auto o = dyn_cast<ReduceScatterOp>(op); o && o.getAxis() == MeshAxis::tensor) {
      onTensor(op, plan.tensorReduceScatters, tensorOf(o.getResult()), static_cast<int64_t>(o.getRanks()));
      plan.reduceScatters += times;
    } else if (auto o = dyn_cast<PipeSendOp>(op)) {
      plan.pipelineSends += times;
      plan.pipelineBytes += times * tensorBytes(tensorOf(o.getInput()));
      plan.commBytes += times * tensorBytes(tensorOf(o.getInput()));
    } else if (auto o = dyn_cast<CrossEntropyOp>(op)) {
      vocabLoss(o.getLogits(), o.getVocabShards());
    } else if (auto o = dyn_cast<CrossEntropyGradOp>(op)) {
      vocabLoss(o.getLogits(), o.getVocabShards());
    } else if (auto o = dyn_cast<ReduceScatterOp>(op)) {
      onLinks(o.getAxis(), shardWise(plan.reduceScatters, tensorOf(o.getResult()), static_cast<int64_t>(o.getRanks())));
    } else if (auto o = dyn_cast<ReduceScatterStartOp>(op)) {
      onLinks(MeshAxis::data,
              shardWise(plan.reduceScatters, awaitedType(o.getHandle()), static_cast<int64_t>(o.getRanks())));
    } else if (auto o = dyn_cast<AllGatherStartOp>(op)) {
      onLinks(o.getAxis(), shardWise(plan.allGathers, tensorOf(o.getInput()), static_cast<int64_t>(o.getRanks())));
    } else if (isa<GatherParamOp, AllGatherParamOp>(op)) {
      auto name = op->getAttrOfType<FlatSymbolRefAttr>("param");
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, name);
      ParamSharding s = ParamSharding::of(param);
      const int64_t bytes = times * (s.ranks - 1) * s.shardElements() * elementBytes(param.getTensorType());
      plan.allGathers += times;
      plan.commBytes += bytes;
      onLinks(MeshAxis::data, bytes);
    } else if (isa<AllToAllOp, AllToAllStartOp>(op)) { // ZeRO++'s hops: each peer its block
      RankedTensorType t = tensorOf(op->getOperand(0));
      const int64_t ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
      const int64_t block = (t.getNumElements() / ranks) * elementBytes(t);
      plan.allToAlls += times;
      plan.commBytes += times * (ranks - 1) * block;
      if (links)
        add(links->allToAll(op->getAttrOfType<MeshAxisAttr>("axis").getValue(), ranks, times * block));
    } else if (auto o = dyn_cast<AllGatherOp>(op)) {
      RankedTensorType shard = tensorOf(o.getInput());
      const int64_t bytes = times * (static_cast<int64_t>(o.getRanks()) - 1) * shard.getNumElements() * elementBytes(shard);
      plan.allGathers += times;
      plan.commBytes += bytes;
      onLinks(o.getAxis(), bytes);
    }
  });
}

/// Interleaved pipelines: ": rank R's chunk C" of a virtual stage; "" otherwise.
std::string chunkText(ModuleOp module, DictionaryAttr stage) {
  const int64_t chunks = pipelineChunks(module);
  if (chunks < 2)
    return "";
  const StagePlace place = stagePlace(module, stage.getAs<IntegerAttr>("stage").getInt());
  return ": rank " + std::to_string(place.rank) + "'s chunk " + std::to_string(place.chunk);
}

/// A pipeline stage's plan (zcc-pipeline-stage), or null. `table`: the stage's work in the
/// order train.bin runs it ("F0 F1 B0 W0 ...", the schedule's table, runtime/main/PipelineSchedule.h).
llvm::json::Value pipelineJson(ModuleOp module, const Plan &plan, int64_t microBatches) {
  auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline");
  if (!stage)
    return nullptr;
  const int64_t s = stage.getAs<IntegerAttr>("stage").getInt(), P = stage.getAs<IntegerAttr>("stages").getInt();
  // Interleaved: stage s is one of its rank's chunks (stagePlace); its table is that rank's, the
  // work of each of its chunks ("F3.1": micro-batch 3 on chunk 1).
  const int64_t chunks = pipelineChunks(module), ranks = P / chunks;
  std::string table;
  const std::vector<std::vector<zcc::pipeline::Action>> stages =
      zcc::pipeline::table(pipelineSchedule(module), ranks, microBatches, chunks);
  for (const zcc::pipeline::Action &a : stages[stagePlace(module, s).rank])
    table += (table.empty() ? "" : " ") + zcc::pipeline::actionText(a, chunks > 1);
  llvm::json::Array flops;
  for (Attribute f : stage.getAs<ArrayAttr>("stage_flops"))
    flops.push_back(cast<FloatAttr>(f).getValueAsDouble());
  return llvm::json::Object{{"stage", stage.getAs<IntegerAttr>("stage").getInt()},
                            {"stages", stage.getAs<IntegerAttr>("stages").getInt()},
                            {"cuts", llvm::json::Array(stage.getAs<DenseI64ArrayAttr>("cuts").asArrayRef())},
                            {"stage_forward_flops", std::move(flops)},
                            {"schedule", stage.getAs<StringAttr>("schedule").getValue()},
                            {"chunks", chunks},
                            {"table", table},
                            {"predicted_bubble", stage.getAs<FloatAttr>("predicted_bubble").getValueAsDouble()},
                            {"sends", plan.pipelineSends},
                            {"comm_bytes", plan.pipelineBytes},
                            {"slots", stage.getAs<IntegerAttr>("slots").getInt()},
                            {"held_slots", pipelineHeldSlotsJson(module)},
                            {"inputs", pipelineInputsJson(module)},
                            {"in_flight_input_bytes", pipelineSlotBytes(module)},
                            {"kept_activation_bytes", pipelineSlotBytes(module, "stash")}};
}

struct ZccReportPass : zc::impl::ZccReportBase<ZccReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Plan plan;
    int64_t expertRanks = 1;
    if (auto ep = module->getAttrOfType<DictionaryAttr>("zc.expert_parallel"))
      expertRanks = ep.getAs<IntegerAttr>("ranks").getInt();
    int64_t contextRanks = 1;
    std::string contextMode = "none";
    if (auto cp = module->getAttrOfType<DictionaryAttr>("zc.context_parallel")) {
      contextRanks = cp.getAs<IntegerAttr>("ranks").getInt();
      contextMode = cp.getAs<StringAttr>("mode").getValue().str();
    }
    for (ParamOp param : module.getOps<ParamOp>()) {
      ParamSharding s = ParamSharding::of(param);
      plan.paramTensors += 1;
      plan.paramBytes += s.paramStorage() * elementBytes(param.getTensorType());
      plan.gradBytes += s.gradStorage() * elementBytes(param.getTensorType());
    }
    for (StateOp state : module.getOps<StateOp>())
      (state.getSecondary() ? plan.secondaryBytes : state.getMaskKeepAttr() ? plan.maskBytes : plan.optimizerBytes) +=
          state.getTensorType().getNumElements() * elementBytes(state.getTensorType());
    // Bytes by link, where the mesh is data-parallel ranks only.
    std::optional<LinkModel> links;
    if (contextRanks == 1 && tensorParallel == 1 && pipelineParallel == 1 && worldSize > 1 && ranksPerNode > 0) {
      int64_t hpz = 1;
      if (auto h = module->getAttrOfType<DictionaryAttr>("zc.hierarchy"))
        hpz = h.getAs<IntegerAttr>("hpz").getInt();
      links.emplace(worldSize, ranksPerNode, hpz);
      plan.inNodeBytes = plan.crossNodeBytes = 0;
    }
    // A parameter the first and last stages share: train.bin sums its gradient over the two
    // (an all-reduce of the stored gradient, ring bytes over 2 ranks).
    for (ParamOp param : module.getOps<ParamOp>())
      if (param->hasAttr("zc.pipeline_tied")) {
        int64_t bytes = ParamSharding::of(param).gradStorage() * elementBytes(param.getTensorType());
        plan.allReduces += 1;
        plan.commBytes += bytes;
        plan.pipelineBytes += bytes;
      }
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto role = fn->getAttrOfType<StringAttr>("zc.role");
      if (!role || role.getValue() == "eval") // validation runs between steps, not in them
        continue;
      bool isStep = role.getValue() == "step";
      // The step, and a pipeline stage's forward and weight gradients, run once per micro-batch.
      const bool perMicroBatch = isStep || role.getValue() == "forward" || role.getValue() == "weight";
      countCollectives(fn, perMicroBatch ? microBatches : 1, plan, links);
      if (!isStep)
        continue;
      // Gathered parameters live from their zc.gather_param to their zc.release.
      int64_t live = 0;
      DenseMap<Value, int64_t> gathered;
      auto gather = [&](Value whole, int64_t bytes) {
        gathered[whole] = bytes;
        live += bytes;
        plan.gatheredPeakBytes = std::max(plan.gatheredPeakBytes, live);
      };
      fn.walk([&](Operation *op) {
        if (auto g = dyn_cast<GatherParamOp>(op)) {
          auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(g, g.getParamAttr());
          gather(g.getResult(), ParamSharding::of(param).paddedElements() * elementBytes(param.getTensorType()));
        } else if (auto u = dyn_cast<UnpackOp>(op)) {
          // A parameter group's all-gather (zcc-bucket, zcc-schedule) unpacked into whole tensors.
          Operation *source = u.getInput().getDefiningOp();
          if (auto wait = dyn_cast_or_null<WaitOp>(source))
            source = wait.getHandle().getDefiningOp();
          if (isa_and_nonnull<AllGatherOp, AllGatherStartOp>(source))
            for (Value whole : u.getResults())
              gather(whole, tensorOf(whole).getNumElements() * elementBytes(tensorOf(whole)));
        } else if (auto r = dyn_cast<ReleaseOp>(op)) {
          live -= gathered.lookup(r.getInput());
        }
      });
    }

    // The arena (exactly what zcc-lower-to-llvm will allocate) and what is live at its peak.
    func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
    FailureOr<MemoryPlan> arena = planMemory(module, plannedFunctions(module));
    if (failed(arena))
      return signalPassFailure();
    const FunctionPlan *peak = arena->peakFunction();
    std::map<BufferKind, int64_t> breakdown = arena->liveAt(*peak, peak->peakIndex);
    // Activations alone peak where the backward pass starts, not necessarily at the arena's peak.
    int64_t activationPeak = arena->peakLiveBytes(BufferKind::Activation);
    // A pipeline stage's activations kept for its micro-batches in flight (zcc-pipeline-keep),
    // in train.bin's input slots: held through every function's peak.
    activationPeak += pipelineSlotBytes(module, "stash");
    // zcc-recompute's choice; the FLOPs it adds per optimizer step.
    std::string recomputePolicy = "none", recomputePlan = "none";
    int64_t recomputeFlops = 0, recomputeValues = 0;
    DictionaryAttr recomputeDecisions;
    // The step's own FLOPs (forward and backward), per optimizer step; the recomputation's
    // are taken out below (fusion merges recomputed ops with others, so they cannot be told
    // apart op by op).
    // A pipeline stage before the last runs its forward as a function of its own (1F1B's F,
    // zcc-pipeline-keep), and under a zero-bubble schedule its weight gradients too (W,
    // zcc-pipeline-split-backward): counted with the step they are part of.
    double stepFlops = 0;
    for (func::FuncOp fn : {step, functionWithRole(module, "forward"), functionWithRole(module, "weight")})
      if (fn)
        fn.walk([&](Operation *op) {
          if (isa_and_nonnull<ZcDialect>(op->getDialect()))
            stepFlops += estimatedFlops(op);
        });
    stepFlops *= microBatches;
    if (auto r = module->getAttrOfType<DictionaryAttr>("zc.recompute")) {
      if (auto p = r.getAs<StringAttr>("policy"))
        recomputePolicy = p.getValue().str();
      if (auto p = r.getAs<StringAttr>("plan"))
        recomputePlan = p.getValue().str();
      recomputeDecisions = r.getAs<DictionaryAttr>("decisions");
      if (auto f = r.getAs<IntegerAttr>("flops"))
        recomputeFlops = f.getInt() * microBatches;
      stepFlops = std::max(0.0, stepFlops - double(recomputeFlops));
      if (auto v = r.getAs<IntegerAttr>("values"))
        recomputeValues = v.getInt();
    }

    // Predicted communication time per optimizer step.
    std::string error;
    CostModel costs;
    if (!costModel.empty()) {
      FailureOr<CostModel> loaded = CostModel::load(costModel, error);
      if (failed(loaded)) {
        module.emitError("zcc-report: ") << error;
        return signalPassFailure();
      }
      costs = *loaded;
    }
    double computeSeconds = 0, commSeconds = 0, exposedSeconds = 0;
    predictTimeline(step, costs, microBatches, computeSeconds, commSeconds, exposedSeconds);
    predictTimeline(update, costs, 1, computeSeconds, commSeconds, exposedSeconds);
    const SwapPlan swaps = swapPlan(step, update, costs, *arena, microBatches);
    // Activations kept in host memory go out and come back once a step, in stream order (exposed).
    const double activationTransferSeconds = 2.0 * arena->offloadedActivationBytes / costs.hostCopyBytesPerSecond;

    auto file = openOutputFile(output, &error);
    if (!file) {
      module.emitError("zcc-report: ") << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = file->os();
    if (format == "json") {
      const int64_t dataParallel = worldSize / (tensorParallel * pipelineParallel * contextRanks);
      llvm::json::Object mesh{{"tp", static_cast<int64_t>(tensorParallel)},
                              {"pp", static_cast<int64_t>(pipelineParallel)},
                              {"dp", dataParallel}};
      if (contextRanks > 1)
        mesh["cp"] = contextRanks;
      llvm::json::Object report{
          {"mesh", std::move(mesh)},
          {"expert_parallel", llvm::json::Object{{"ranks", expertRanks},
                                                 {"all_to_all", plan.expertAllToAlls},
                                                 {"all_gather", plan.expertAllGathers},
                                                 {"comm_bytes", plan.expertCommBytes},
                                                 {"routing", "balanced"}}},
          {"context_parallel", llvm::json::Object{{"all_to_all", plan.contextAllToAlls},
                                                  {"all_reduce", plan.contextAllReduces},
                                                  {"comm_bytes", plan.contextCommBytes},
                                                  {"mode", contextMode}}},
          {"tensor_parallel",
           llvm::json::Object{{"all_reduce", plan.tensorAllReduces},
                              {"all_gather", plan.tensorAllGathers},
                              {"reduce_scatter", plan.tensorReduceScatters},
                              {"comm_bytes", plan.tensorCommBytes},
                              {"sequence_parallel", llvm::json::Object{{"regather_bytes", plan.regatherBytes},
                                                                       {"grad_sum_bytes", plan.gradSumBytes}}}}},
          {"pipeline", pipelineJson(module, plan, microBatches)},
          {"param_tensors", plan.paramTensors},
          {"param_bytes", plan.paramBytes},
          {"grad_bytes", plan.gradBytes},
          {"optimizer_bytes", plan.optimizerBytes},
          {"model_state_bytes", plan.paramBytes + plan.gradBytes + plan.optimizerBytes},
          {"gathered_param_peak_bytes", plan.gatheredPeakBytes},
          {"collectives", llvm::json::Object{{"all_gather", plan.allGathers},
                                             {"reduce_scatter", plan.reduceScatters},
                                             {"all_reduce", plan.allReduces}}},
          {"comm_bytes", plan.commBytes}};
      if (plan.secondaryBytes)
        report["hpz_secondary_bytes"] = plan.secondaryBytes;
      if (plan.maskBytes)
        report["pruning_mask_bytes"] = plan.maskBytes;
      if (plan.crossNodeBytes >= 0) // all ranks, per step
        report["links"] = llvm::json::Object{{"ranks_per_node", static_cast<int64_t>(ranksPerNode)},
                                             {"in_node_bytes", plan.inNodeBytes},
                                             {"cross_node_bytes", plan.crossNodeBytes}};
      llvm::json::Object peakJson;
      for (auto &[kind, bytes] : breakdown)
        peakJson[bufferKindName(kind)] = bytes;
      report["arena_bytes"] = arena->totalBytes();
      report["peak_breakdown"] = std::move(peakJson);
      report["peak_op"] = (peak->ops[peak->peakIndex]->getName().getStringRef() + " in @" +
                           func::FuncOp(peak->function).getSymName())
                              .str();
      report["activation_peak_bytes"] = activationPeak;
      // Every tier's bytes (zcc-offload): the arena is the device's; optimizer state may sit in
      // host memory or the NVMe store, swapped through the arena's slots.
      report["tiers"] = llvm::json::Object{{"device_bytes", arena->totalBytes()},
                                           {"host_bytes", arena->hostTierBytes},
                                           {"nvme_bytes", arena->nvmeTierBytes},
                                           {"offloaded_optimizer_bytes", arena->offloadedStateBytes},
                                           {"offloaded_param_bytes", arena->offloadedParamBytes},
                                           {"offloaded_activation_bytes", arena->offloadedActivationBytes},
                                           {"activation_transfer_s", activationTransferSeconds}};
      report["nvme_swap"] = llvm::json::Object{{"read_bytes", swaps.readBytes},
                                               {"gather_read_bytes", swaps.stepReadBytes},
                                               {"write_bytes", swaps.writeBytes},
                                               {"chunks", swaps.chunks},
                                               {"slots", swaps.slots},
                                               {"slot_bytes", swaps.slotBytes},
                                               {"predicted_transfer_s", swaps.transferSeconds},
                                               {"predicted_exposed_s", swaps.exposedSeconds}};
      llvm::json::Object decisions;
      if (recomputeDecisions)
        for (NamedAttribute kind : recomputeDecisions) {
          auto d = cast<DictionaryAttr>(kind.getValue());
          llvm::json::Object why;
          for (NamedAttribute reason : d.getAs<DictionaryAttr>("kept_because"))
            why[reason.getName().str()] = cast<IntegerAttr>(reason.getValue()).getInt();
          decisions[kind.getName().str()] = llvm::json::Object{
              {"recomputed", d.getAs<IntegerAttr>("recomputed").getInt()},
              {"recomputed_bytes", d.getAs<IntegerAttr>("recomputed_bytes").getInt()},
              {"kept", d.getAs<IntegerAttr>("kept").getInt()},
              {"kept_bytes", d.getAs<IntegerAttr>("kept_bytes").getInt()},
              {"flops_per_byte", d.getAs<FloatAttr>("flops_per_byte").getValueAsDouble()},
              {"kept_because", std::move(why)}};
        }
      report["recompute"] = llvm::json::Object{{"policy", recomputePolicy},
                                               {"plan", recomputePlan},
                                               {"values", recomputeValues},
                                               {"flops_per_step", recomputeFlops},
                                               {"step_flops", stepFlops},
                                               {"decisions", std::move(decisions)}};
      report["predicted"] = llvm::json::Object{{"compute_s", computeSeconds},
                                               {"comm_s", commSeconds},
                                               {"exposed_comm_s", exposedSeconds},
                                               {"cost_model", costs.source}};
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    } else {
      os << "zcc plan, per rank:\n";
      if (tensorParallel > 1 || pipelineParallel > 1 || contextRanks > 1)
      {
        if (contextRanks > 1)
          os << "  mesh                       tp " << tensorParallel << " x cp " << contextRanks << " x pp "
             << pipelineParallel << " x dp " << worldSize / (tensorParallel * pipelineParallel * contextRanks)
             << " (" << worldSize << " ranks; tensor fastest, then context, then data, then pipeline)\n"
             << "    context parallelism ("
             << (module->getAttrOfType<DictionaryAttr>("zc.context_parallel").getAs<StringAttr>("mode").getValue() ==
                         "ring"
                     ? "ring attention"
                     : "DeepSpeed-Ulysses")
             << "): all_to_all " << plan.contextAllToAlls
             << (plan.contextAllReduces ? ", all_reduce " + std::to_string(plan.contextAllReduces) : std::string())
             << ", comm_bytes " << plan.contextCommBytes << "\n";
        else
          os << "  mesh                       tp " << tensorParallel << " x pp " << pipelineParallel << " x dp "
             << worldSize / (tensorParallel * pipelineParallel) << " (" << worldSize
             << " ranks; tensor fastest, then data, then pipeline)\n";
      }
      if (expertRanks > 1)
        os << "  expert parallelism         ep " << expertRanks << " (groups of consecutive data-parallel ranks): "
           << "all_to_all " << plan.expertAllToAlls << ", all_gather " << plan.expertAllGathers << ", comm_bytes "
           << plan.expertCommBytes << " at a balanced routing\n";
      os
         << "  param_bytes                " << plan.paramBytes << "\n"
         << "  grad_bytes                 " << plan.gradBytes << "\n"
         << "  optimizer_bytes            " << plan.optimizerBytes << "\n"
         << "  model_state_bytes          " << plan.paramBytes + plan.gradBytes + plan.optimizerBytes << "\n"
         << "  gathered_param_peak_bytes  " << plan.gatheredPeakBytes << "\n"
         << "  per step: all_gather " << plan.allGathers << ", reduce_scatter " << plan.reduceScatters
         << ", all_reduce " << plan.allReduces << ", comm_bytes " << plan.commBytes << "\n";
      if (plan.secondaryBytes)
        os << "  hpz_secondary_bytes        " << plan.secondaryBytes << " (ZeRO++'s copy for in-group gathers)\n";
      if (plan.maskBytes)
        os << "  pruning_mask_bytes         " << plan.maskBytes << " (compression's sparse-pruning masks)\n";
      if (plan.crossNodeBytes >= 0)
        os << "  all ranks per step, by link (" << ranksPerNode << " ranks per node): in node " << plan.inNodeBytes
           << " B, across nodes " << plan.crossNodeBytes << " B\n";
      if (auto stage = module->getAttrOfType<DictionaryAttr>("zc.pipeline"))
        os << "    of which pipeline: " << plan.pipelineSends << " sends, " << plan.pipelineBytes
           << " bytes (stage " << stage.getAs<IntegerAttr>("stage").getInt() << " of "
           << stage.getAs<IntegerAttr>("stages").getInt() << chunkText(module, stage) << ", predicted "
           << stage.getAs<StringAttr>("schedule").getValue() << " bubble "
           << llvm::formatv("{0:F3}", stage.getAs<FloatAttr>("predicted_bubble").getValueAsDouble()) << " over "
           << microBatches << " micro-batches; inputs of the " << stage.getAs<IntegerAttr>("slots").getInt()
           << " micro-batches in flight: " << pipelineSlotBytes(module) << " B" << pipelineBuffersText(module)
           << ", of which activations kept for their backward " << pipelineSlotBytes(module, "stash") << " B)\n";
      if (tensorParallel > 1)
      {
        os << "    of which tensor-parallel: all_reduce " << plan.tensorAllReduces << ", all_gather "
           << plan.tensorAllGathers << ", reduce_scatter " << plan.tensorReduceScatters << ", comm_bytes "
           << plan.tensorCommBytes << "\n";
        if (plan.tensorReduceScatters)
          os << "      sequence parallelism: the regions' all-reduces as reduce-scatter + all-gather (same "
                "bytes), plus " << plan.regatherBytes << " B of backward re-gathers and " << plan.gradSumBytes
             << " B of norm/bias gradient sums\n";
      }
      os
         << "  arena_bytes                " << arena->totalBytes() << " (peak at "
         << peak->ops[peak->peakIndex]->getName() << " in @" << func::FuncOp(peak->function).getSymName()
         << ")\n";
      for (auto &[kind, bytes] : breakdown)
        os << "    " << llvm::left_justify(bufferKindName(kind), 24) << bytes << "\n";
      if (arena->hostTierBytes || arena->nvmeTierBytes) {
        os << "  tiers                      device " << arena->totalBytes() << ", host " << arena->hostTierBytes
           << ", nvme " << arena->nvmeTierBytes << " (optimizer state off the arena: " << arena->offloadedStateBytes
           << ", parameters: " << arena->offloadedParamBytes << ")\n";
        if (arena->offloadedActivationBytes)
          os << "  activations in host memory " << arena->offloadedActivationBytes << " B per step, "
             << arena->activationOffset.size() << " tensors (out after their last forward use, back before "
             << "their first backward use)"
             << llvm::formatv("; predicted transfer {0:F2} ms, all exposed (the copies are in stream order)\n",
                              activationTransferSeconds * 1e3);
        if (swaps.stepReadBytes)
          os << "  nvme gathers per step      read " << swaps.stepReadBytes << " (shards of every gather, "
             << arena->paramSwapSlots << " slots of " << arena->paramSwapSlotBytes << " B)\n";
        if (swaps.chunks)
          os << "  nvme swaps per step        read " << swaps.readBytes << ", written " << swaps.writeBytes << "; "
             << swaps.chunks << " chunks through " << swaps.slots << " slots of " << swaps.slotBytes
             << llvm::formatv(" B; predicted transfer {0:F2} ms, exposed {1:F2} ms\n", swaps.transferSeconds * 1e3,
                              swaps.exposedSeconds * 1e3);
      }
      os << "  activation_peak_bytes      " << activationPeak << "\n"
         << "  recompute                  " << recomputePolicy << ": " << recomputeValues << " values, "
         << recomputeFlops << " FLOPs per step"
         << llvm::formatv(" ({0:P} of the step's {1:E2})", recomputeFlops / std::max(stepFlops, 1.0), stepFlops);
      if (recomputePolicy == "auto")
        os << "; plan: " << recomputePlan;
      os << "\n";
      // What the policy did with each kind of value the backward pass reads, and why it kept some.
      if (recomputeDecisions)
        for (NamedAttribute kind : recomputeDecisions) {
          auto d = cast<DictionaryAttr>(kind.getValue());
          os << "    " << llvm::left_justify(kind.getName().getValue(), 22)
             << llvm::formatv("{0,6:F1} FLOP/B  recomputed {1,3} ({2} B), kept {3,3} ({4} B)",
                              d.getAs<FloatAttr>("flops_per_byte").getValueAsDouble(),
                              d.getAs<IntegerAttr>("recomputed").getInt(),
                              d.getAs<IntegerAttr>("recomputed_bytes").getInt(), d.getAs<IntegerAttr>("kept").getInt(),
                              d.getAs<IntegerAttr>("kept_bytes").getInt());
          auto why = d.getAs<DictionaryAttr>("kept_because");
          if (!why.empty()) {
            os << ":";
            for (NamedAttribute reason : why)
              os << " " << reason.getName().getValue() << " " << cast<IntegerAttr>(reason.getValue()).getInt();
          }
          os << "\n";
        }
      os << llvm::formatv("  predicted per step: compute {0:F2} ms, communication {1:F2} ms, exposed {2:F2} ms "
                          "({3})\n",
                          computeSeconds * 1e3, commSeconds * 1e3, exposedSeconds * 1e3, costs.source);
    }
    file->keep();
  }
};

} // namespace
