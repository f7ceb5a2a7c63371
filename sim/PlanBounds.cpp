//===- PlanBounds.cpp - what a plan needs at least, before it is compiled -===//

#include "sim/PlanBounds.h"

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "runtime/main/PipelineSchedule.h"
#include "sim/Simulator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::zc;
using namespace zcc::sim;

namespace {

/// What each chunk of each pipeline rank holds at once, in micro-batches (the schedule's
/// heldSlots): from F to B, from F to its last piece of backward (F to B without W) and, under
/// zero-bubble, from B to W. One table per (schedule, p, K, v), shared by every plan that runs it.
struct HeldMicroBatches {
  double untilBackward = 0, fromForward = 0, fromBackward = 0;
  bool last = false; // the last virtual stage: its forward runs in its B, so nothing waits from F
};
const std::vector<HeldMicroBatches> &heldByChunk(const PlanChoice &c) {
  static std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, std::vector<HeldMicroBatches>> cache;
  const int64_t P = c.pp, K = c.microBatches, V = c.interleave;
  auto [it, added] = cache.try_emplace(std::make_tuple(c.schedule, P, K, V));
  if (!added)
    return it->second;
  std::vector<HeldMicroBatches> &chunks = it->second;
  std::optional<zcc::pipeline::Schedule> kind = zcc::pipeline::parseSchedule(c.schedule);
  if (!kind || !zcc::pipeline::problem(*kind, P, K, V).empty())
    return chunks;
  for (int64_t r = 0; r < P; ++r)
    for (int64_t chunk = 0; chunk < V; ++chunk) {
      HeldMicroBatches held;
      held.last = zcc::pipeline::stageOf(zcc::pipeline::placementOf(*kind), r, chunk, P) == P * V - 1;
      held.untilBackward =
          double(zcc::pipeline::heldSlots(*kind, r, P, K, V, chunk, zcc::pipeline::Hold::ForwardToBackward));
      held.fromForward =
          double(zcc::pipeline::heldSlots(*kind, r, P, K, V, chunk, zcc::pipeline::Hold::ForwardToWeight));
      if (zcc::pipeline::splitsBackward(*kind))
        held.fromBackward =
            double(zcc::pipeline::heldSlots(*kind, r, P, K, V, chunk, zcc::pipeline::Hold::BackwardToWeight));
      chunks.push_back(held);
    }
  return chunks;
}

} // namespace

ModelFacts zcc::sim::factsOf(ModuleOp model) {
  ModelFacts f;
  for (ForwardOp forward : model.getOps<ForwardOp>()) {
    if (auto tokens = dyn_cast<RankedTensorType>(forward.getArgumentTypes().front()); tokens && tokens.getRank() >= 2) {
      f.batch = tokens.getDimSize(0);
      f.context = tokens.getDimSize(1);
    }
    DenseSet<Value> counted; // an input two products read (a gate's and an up projection's) is kept once
    forward.walk([&](MoeRouteOp route) {
      const int64_t e = tensorOf(route.getOffsets()).getDimSize(0) - 1;
      f.experts = f.experts ? std::min(f.experts, e) : e;
    });
    forward.walk([&](Operation *op) {
      if (isa<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp, MatmulCrossEntropyLossOp, GroupedMatmulOp>(op)) {
        f.forwardMatmulFlops += estimatedFlops(op);
        const bool grouped = isa<GroupedMatmulOp>(op);
        if (counted.insert(op->getOperand(0)).second) {
          f.matmulInputElements += double(tensorOf(op->getOperand(0)).getNumElements());
          if (grouped)
            f.groupedInputElements += double(tensorOf(op->getOperand(0)).getNumElements());
        }
        if (auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType())) {
          f.matmulOutputElements += double(out.getNumElements());
          if (grouped)
            f.groupedOutputElements += double(out.getNumElements());
        }
      } else if (isa<CausalAttentionOp>(op)) {
        f.attentionFlops += ClusterCost::opFlops(op);
        ++f.blocks;
      }
    });
  }
  DenseSet<StringAttr> experts;
  model.walk([&](GroupedMatmulOp g) {
    if (auto ref = g.getWeight().getDefiningOp<ParamRefOp>())
      experts.insert(ref.getNameAttr().getAttr());
  });
  for (ParamOp param : model.getOps<ParamOp>()) {
    f.paramElements += double(param.getTensorType().getNumElements());
    if (experts.contains(param.getSymNameAttr()))
      f.expertParamElements += double(param.getTensorType().getNumElements());
  }
  f.modelFlops = modelFlopsPerStep(model);
  f.tokens = tokensPerStep(model);
  return f;
}

double zcc::sim::modelStateLowerBound(const PlanChoice &c, double params, double expertParams, bool bf16) {
  const double shards = double(c.dp * c.cp);
  // An expert weight (--ep): each rank E / ep of it, ZeRO's shards of that over dp / ep ranks,
  // so what ZeRO shards is 1/dp of it either way, and the rest 1/ep.
  auto perDevice = [&](double bytesPerElement, bool sharded) {
    const double dense = (params - expertParams) * (sharded ? bytesPerElement / shards : bytesPerElement);
    const double expert = expertParams * bytesPerElement / (sharded ? shards : double(c.ep));
    return (dense + expert) / double(c.tp * c.pp);
  };
  const double weight = bf16 ? 2 : 4, grad = bf16 ? 2 : 4, state = bf16 ? 12 : 8;
  double bytes = perDevice(weight, c.zeroStage >= 3) + perDevice(grad, c.zeroStage >= 2);
  if (c.offloadOptimizer == "none")
    bytes += perDevice(state, c.zeroStage >= 1);
  // hpZ's copy: the parameters over the ranks of a node (at least 1/dp of them).
  if (c.zeroPlusPlus)
    bytes += params / double(c.tp * c.pp) * (bf16 ? 2.0 : 4.0) / shards;
  return bytes;
}

double zcc::sim::stashPerBlock(ArrayRef<ModuleOp> stages) {
  double least = 0;
  for (size_t k = 0; k + 1 < stages.size(); ++k) {
    func::FuncOp forward = functionWithRole(stages[k], "forward"), step = functionWithRole(stages[k], "step");
    if (!forward || !step)
      continue;
    int64_t blocks = 0;
    forward.walk([&](CausalAttentionOp) { ++blocks; });
    double bytes = 0;
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      if (auto role = step.getArgAttrOfType<StringAttr>(i, "zc.input"); role && role.getValue() == "stash")
        bytes += double(tensorBytes(cast<RankedTensorType>(step.getArgumentTypes()[i])));
    if (blocks > 0 && (least == 0 || bytes / double(blocks) < least))
      least = bytes / double(blocks);
  }
  return least;
}

double zcc::sim::activationLowerBound(const PlanChoice &c, const ModelFacts &facts, bool bf16, double keptPerBlock) {
  const double perMicroBatch = double(c.microBatchSize) * (bf16 ? 2 : 4) / double(facts.batch * c.tp * c.cp);
  const double inputs = facts.matmulInputElements * perMicroBatch, outputs = facts.matmulOutputElements * perMicroBatch;
  const double groupedInputs = facts.groupedInputElements * perMicroBatch;
  // What W reads of B's: the products' but the grouped ones' (ModelFacts).
  const double deferredInputs = inputs - groupedInputs,
               deferredOutputs = outputs - facts.groupedOutputElements * perMicroBatch;
  const bool full = c.recompute == "full" || c.recompute == "layer", none = c.recompute == "none";
  // One rank holds every block, and one micro-batch's activations of them all at once.
  if (c.pp == 1)
    return std::max(none ? inputs : 0.0, keptPerBlock * double(std::max<int64_t>(facts.blocks, 0)));
  const std::vector<HeldMicroBatches> &held = heldByChunk(c);
  if (held.empty())
    return 0;
  const int64_t V = c.interleave, chunks = c.pp * V, blocks = facts.blocks > 0 ? facts.blocks : chunks;
  // A chunk's bytes per block it holds.
  std::vector<double> perBlock;
  for (const HeldMicroBatches &h : held) {
    // The last stage's B computes what its W reads: all of it waits from B.
    const double fromW =
        h.fromBackward * (full || h.last ? deferredInputs + deferredOutputs : deferredOutputs) / double(blocks);
    const double products =
        none && !h.last ? (h.fromForward * deferredInputs + h.untilBackward * groupedInputs) / double(blocks) : 0.0;
    perBlock.push_back(fromW + std::max(products, h.last ? 0.0 : h.untilBackward * keptPerBlock));
  }
  const int64_t fewest = blocks / chunks;
  double byFewest = 0;
  for (int64_t r = 0; r < c.pp; ++r) {
    double rank = 0;
    for (int64_t chunk = 0; chunk < V; ++chunk)
      rank += perBlock[r * V + chunk] * double(fewest);
    byFewest = std::max(byFewest, rank);
  }
  std::vector<double> sorted = perBlock;
  std::sort(sorted.begin(), sorted.end());
  double all = 0;
  for (double b : sorted)
    all += b * double(fewest);
  for (int64_t i = 0; i < blocks - fewest * chunks; ++i)
    all += sorted[i];
  return std::max(byFewest, all / double(c.pp));
}

double zcc::sim::stepLowerBound(const PlanChoice &c, const ModelFacts &facts, double scale, const Cluster &cluster, bool bf16) {
  const double best = cluster.matmulCurve(bf16).best();
  const double again = c.recompute == "full" || c.recompute == "layer" ? 1 : 0, devices = double(c.tp * c.cp * c.pp * c.dp);
  const double peak = cluster.peakFlops(bf16);
  double seconds = facts.forwardMatmulFlops * scale * (3 + again) / devices / (peak * best);
  // Flash attention: the forward (again where recomputed) and its gradient, 2.5 forwards' FLOPs.
  // (at the best attention rate of the cluster: a lower bound at any call size).
  seconds += facts.attentionFlops * scale / devices *
             ((1 + again) / cluster.attentionForwardCurve.best(cluster.attentionForwardEfficiency) +
              2.5 / cluster.attentionBackwardCurve.best(cluster.attentionBackwardEfficiency)) /
             peak;
  // ZB-V: its table's idle time at unit costs, (p - 1) chunk-forwards of a sixth of a micro-batch's
  // work each (the fill; zrt-pipeline-schedule), as zb-h1's (p - 1)/3 is its own.
  const double bubble = c.schedule == "zbv"     ? double(c.pp - 1) / 6.0
                        : c.schedule == "zb-h1" ? double(c.pp - 1) / 3.0
                                                : double(c.pp - 1) / double(c.interleave);
  return seconds * (double(c.microBatches) + bubble) / double(c.microBatches);
}

