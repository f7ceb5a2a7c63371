//===- Pipeline.cpp - a pipeline stage's forward ---------------------------===//
//
// Pipeline parallelism (GPipe, PipeDream's 1F1B as Megatron-LM and DeepSpeed's
// PipelineEngine run it): the forward is cut into `stages` consecutive stages,
// each rank of the mesh's pipeline axis running one. The pass keeps stage
// `stage` of the forward and drops the rest, so every stage is compiled by the
// rest of the pipeline as a model of its own (zcc compiles each stage and links
// them all into the executable, which runs its rank's).
//
//  - Cuts: a cut may fall only where exactly one activation crosses (between
//    blocks, the residual stream; never inside a block, where several values
//    do). Among those, the cuts are chosen to minimize the costliest stage: a
//    stage costs its forward's estimated FLOPs three times (the forward, the
//    backward's two products) plus 16 bytes' worth per parameter value (the
//    update and the memory it holds), so the embedding and the language-model
//    head weigh in.
//  - A stage's input is an argument of its step (`zc.input = "activation"`),
//    wrapped in zc.stage_input whose gradient autodiff sends back to the
//    previous stage. A stage other than the last differentiates zc.stage_output
//    of its output against the output's gradient, another argument (`zc.input
//    = "activation_grad"`).
//  - The forward that only runs forward (the 1F1B schedule's "F") is a second
//    zc.forward, `@<model>_stage_forward` with `zc.forward_only`: the same ops,
//    then zc.pipe_send of the output to the next stage. The last stage has
//    none: its forward runs as part of its step. After autodiff,
//    zcc-pipeline-keep makes F the step's forward, which keeps what the
//    backward reads for each micro-batch in flight, and the step the backward
//    alone (PipelineKeep.cpp).
//  - A parameter read by two stages (a tied embedding and head) is kept by
//    both, marked `zc.pipeline_tied`: train.bin sums its gradient over the
//    first and last stages before the update (Megatron's embedding group);
//    only those two may share one.
//  - The module records the plan: `zc.pipeline = {stage, stages, cuts,
//    stage_flops, slots, predicted_bubble}` (slots: the micro-batches in
//    flight, min(K, P - s); the 1F1B schedule simulated with each stage's
//    cost: F = 1 forward, B = 2 (the last stage's step: 3, its forward with
//    it)).
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/ModelDescription.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallSet.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCPIPELINESTAGE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// Ops any stage may recompute for itself rather than receive: parameter reads.
bool isFree(Operation *op) { return isa<ParamRefOp>(op); }

/// The plan of the whole forward: where each stage begins and what it costs.
struct Partition {
  SmallVector<int64_t> begin;      // stage s: ops [begin[s], begin[s + 1]) (begin.back() = ops)
  SmallVector<Value> crossing;     // crossing[s]: the activation stage s hands to s + 1
  SmallVector<double> cost, flops; // per stage
};

/// For each cut before op i (0 < i < ops), the single activation crossing it, or null where
/// none or several do: one sweep over the ops with each value's last use.
SmallVector<Value> crossings(ArrayRef<Operation *> ops, const DenseMap<Operation *, int64_t> &index) {
  const int64_t n = ops.size();
  SmallVector<SmallVector<Value>> endingAfter(n + 1); // values whose last use is op i - 1
  for (int64_t j = 0; j < n; ++j) {
    if (isFree(ops[j]))
      continue;
    for (Value r : ops[j]->getResults()) {
      int64_t lastUse = -1;
      for (Operation *user : r.getUsers())
        if (auto it = index.find(user); it != index.end())
          lastUse = std::max(lastUse, it->second);
      if (lastUse > j)
        endingAfter[lastUse + 1].push_back(r);
    }
  }
  SmallVector<Value> result(n + 1);
  llvm::SetVector<Value> live;
  for (int64_t i = 1; i < n; ++i) {
    if (!isFree(ops[i - 1]))
      for (Value r : ops[i - 1]->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) {
              auto it = index.find(u);
              return it != index.end() && it->second >= i;
            }))
          live.insert(r);
    for (Value r : endingAfter[i])
      live.remove(r);
    if (live.size() == 1) {
      auto type = dyn_cast<RankedTensorType>(live.front().getType());
      if (type && isa<FloatType>(type.getElementType()))
        result[i] = live.front();
    }
  }
  return result;
}

FailureOr<Partition> partition(ForwardOp forward, int64_t stages) {
  Block &body = forward.getBody().front();
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  const int64_t n = ops.size();
  // Cost of each op, and the valid cuts.
  SmallVector<double> prefix(n + 1, 0), flopPrefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    double flops = isFree(ops[i]) ? 0 : estimatedFlops(ops[i]);
    double params = 0;
    if (auto ref = dyn_cast<ParamRefOp>(ops[i]))
      params = 16.0 * tensorOf(ref.getResult()).getNumElements();
    prefix[i + 1] = prefix[i] + 3 * flops + params;
    flopPrefix[i + 1] = flopPrefix[i] + flops;
  }
  SmallVector<int64_t> cuts{0};
  DenseMap<int64_t, Value> crossing;
  SmallVector<Value> crossingAt = crossings(ops, index);
  for (int64_t i = 1; i < n; ++i)
    if (Value v = crossingAt[i]) {
      cuts.push_back(i);
      crossing[i] = v;
    }
  cuts.push_back(n);
  const int64_t m = cuts.size();
  if (m - 1 < stages)
    return forward.emitOpError("--pp ") << stages << ": the forward has only " << m - 2
                                        << " places where one activation crosses (between blocks); it cannot be "
                                           "cut into that many stages";
  // best[k][j]: the least costliest-stage cost of cutting ops [0, cuts[j]) into k stages.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(m, inf));
  std::vector<std::vector<int64_t>> from(stages + 1, std::vector<int64_t>(m, -1));
  best[0][0] = 0;
  for (int64_t k = 1; k <= stages; ++k)
    for (int64_t j = 1; j < m; ++j)
      for (int64_t i = 0; i < j; ++i) {
        if (best[k - 1][i] == inf)
          continue;
        double worst = std::max(best[k - 1][i], prefix[cuts[j]] - prefix[cuts[i]]);
        if (worst < best[k][j]) {
          best[k][j] = worst;
          from[k][j] = i;
        }
      }
  Partition p;
  SmallVector<int64_t> chosen;
  for (int64_t k = stages, j = m - 1; k > 0; --k) {
    chosen.push_back(j);
    j = from[k][j];
  }
  chosen.push_back(0);
  std::reverse(chosen.begin(), chosen.end());
  for (int64_t c : chosen)
    p.begin.push_back(cuts[c]);
  for (int64_t s = 0; s < stages; ++s) {
    p.cost.push_back(prefix[p.begin[s + 1]] - prefix[p.begin[s]]);
    p.flops.push_back(flopPrefix[p.begin[s + 1]] - flopPrefix[p.begin[s]]);
    if (s + 1 < stages)
      p.crossing.push_back(crossing.lookup(p.begin[s + 1]));
  }
  return p;
}

/// The 1F1B schedule of `microBatches` over stages whose forward takes `forward[s]` and whose
/// backward twice that (the last stage's step, its forward and backward, three times): the
/// bubble, the fraction of stage-time idle in the step.
double predictedBubble(ArrayRef<double> forward, int64_t microBatches) {
  const int64_t P = forward.size(), K = microBatches;
  // Each stage's list of work, in 1F1B order: warm-up forwards, then one forward and one
  // backward, then the remaining backwards.
  std::vector<std::vector<std::pair<bool, int64_t>>> order(P); // (isForward, micro-batch)
  for (int64_t s = 0; s < P; ++s) {
    int64_t warm = std::min(P - s - 1, K), f = 0, b = 0;
    for (; f < warm; ++f)
      order[s].push_back({true, f});
    while (b < K) {
      if (f < K)
        order[s].push_back({true, f++});
      order[s].push_back({false, b++});
    }
  }
  // Earliest finish of each item given its dependencies: F(s, m) after F(s-1, m); B(s, m)
  // after B(s+1, m) (and after F(s, m)); each stage one item at a time.
  std::vector<std::vector<double>> fDone(P, std::vector<double>(K, -1)), bDone(P, std::vector<double>(K, -1));
  std::vector<size_t> next(P, 0);
  std::vector<double> clock(P, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t s = 0; s < P; ++s) {
      while (next[s] < order[s].size()) {
        auto [isForward, mb] = order[s][next[s]];
        double ready;
        if (isForward) {
          if (s > 0 && fDone[s - 1][mb] < 0)
            break;
          ready = s > 0 ? fDone[s - 1][mb] : 0;
        } else {
          if (s + 1 < P && bDone[s + 1][mb] < 0)
            break;
          ready = s + 1 < P ? bDone[s + 1][mb] : 0;
        }
        double start = std::max(ready, clock[s]);
        // The last stage has no separate forward: its step runs the forward once.
        const bool last = s + 1 == P;
        double work = isForward ? (last ? 0 : forward[s]) : (last ? 3 : 2) * forward[s];
        clock[s] = start + work;
        (isForward ? fDone : bDone)[s][mb] = clock[s];
        ++next[s];
        progress = true;
      }
    }
  }
  double step = *std::max_element(clock.begin(), clock.end()), busy = 0;
  for (int64_t s = 0; s < P; ++s)
    busy += K * 3 * forward[s];
  return step > 0 ? 1.0 - busy / (P * step) : 0.0;
}

struct ZccPipelineStagePass : zc::impl::ZccPipelineStageBase<ZccPipelineStagePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 1 || stage < 0 || stage >= stages || microBatches < 1) {
      module.emitError("zcc-pipeline-stage: stages must be positive, stage in [0, stages), micro-batches positive");
      return signalPassFailure();
    }
    if (stages == 1)
      return;
    SmallVector<ForwardOp> forwards(module.getOps<ForwardOp>());
    if (forwards.size() != 1) {
      module.emitError("zcc-pipeline-stage: expects one zc.forward, got ") << forwards.size();
      return signalPassFailure();
    }
    if (failed(keepStage(module, forwards.front())))
      return signalPassFailure();
  }

  LogicalResult keepStage(ModuleOp module, ForwardOp forward) {
    FailureOr<Partition> plan = partition(forward, stages);
    if (failed(plan))
      return failure();
    Block &body = forward.getBody().front();
    const int64_t s = stage, P = stages;
    const bool first = s == 0, last = s == P - 1;

    // The data arguments' roles and id ranges, fixed before the stage loses their users.
    SmallVector<StringAttr> given;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      given.push_back(forward.getArgAttrOfType<StringAttr>(i, "zc.input"));
    FailureOr<SmallVector<std::string>> roles = inferInputRoles(forward, forward.getArgumentTypes(), given);
    if (failed(roles))
      return failure();
    Builder b(module.getContext());
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      forward.setArgAttr(i, "zc.input", b.getStringAttr((*roles)[i]));
      for (Operation *user : body.getArgument(i).getUsers()) {
        int64_t classes = 0;
        if (auto e = dyn_cast<EmbeddingOp>(user))
          classes = tensorOf(e.getTable()).getDimSize(0) * static_cast<int64_t>(e.getVocabShards().value_or(1));
        else if (auto ce = dyn_cast<CrossEntropyOp>(user))
          classes = tensorOf(ce.getLogits()).getShape().back() * static_cast<int64_t>(ce.getVocabShards().value_or(1));
        if (classes)
          forward.setArgAttr(i, "zc.classes", b.getI64IntegerAttr(classes));
      }
    }

    // Which stage each op belongs to; which parameters each stage reads.
    SmallVector<Operation *> ops;
    DenseMap<Operation *, int64_t> index;
    for (Operation &op : body.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
    auto stageOf = [&](int64_t i) {
      return static_cast<int64_t>(std::upper_bound(plan->begin.begin(), plan->begin.end(), i) - plan->begin.begin()) - 1;
    };
    // The stage of an op of the forward (-1: an op this pass added).
    auto stageOfOp = [&](Operation *op) -> int64_t {
      auto it = index.find(op);
      return it == index.end() ? -1 : stageOf(it->second);
    };
    DenseMap<StringAttr, llvm::SmallSet<int64_t, 4>> readers;
    for (auto [i, op] : llvm::enumerate(ops))
      if (auto ref = dyn_cast<ParamRefOp>(op))
        for (Operation *user : ref->getUsers())
          readers[ref.getNameAttr().getAttr()].insert(stageOfOp(user));
    for (auto &[name, set] : readers)
      if (set.size() > 1 && !(set.size() == 2 && set.contains(0) && set.contains(P - 1)))
        return forward.emitOpError("--pp ") << P << ": parameter @" << name.getValue()
                                            << " is read by more than one stage other than the first and the last "
                                               "(only those may share one: the tied embedding and head)";

    // The stage's boundary: its input (an argument) and its objective.
    const int64_t lo = plan->begin[s], hi = plan->begin[s + 1];
    OpBuilder ob(forward.getContext());
    Value input;
    if (!first) {
      Value crossing = plan->crossing[s - 1];
      (void)forward.insertArgument(forward.getNumArguments(), crossing.getType(),
                                   b.getDictionaryAttr(b.getNamedAttr("zc.input", b.getStringAttr("activation"))),
                                   crossing.getLoc());
      BlockArgument arg = body.getArguments().back();
      ob.setInsertionPointToStart(&body);
      input = StageInputOp::create(ob, crossing.getLoc(), crossing.getType(), arg, static_cast<uint64_t>(s - 1));
      crossing.replaceUsesWithIf(input, [&](OpOperand &use) { return stageOfOp(use.getOwner()) == s; });
    }
    auto ret = cast<ReturnOp>(body.getTerminator());
    if (!last) {
      Value output = plan->crossing[s];
      (void)forward.insertArgument(
          forward.getNumArguments(), output.getType(),
          b.getDictionaryAttr(b.getNamedAttr("zc.input", b.getStringAttr("activation_grad"))), output.getLoc());
      BlockArgument grad = body.getArguments().back();
      ob.setInsertionPoint(ret);
      Value objective =
          StageOutputOp::create(ob, output.getLoc(), ret.getOperand(0).getType(), output, grad).getResult();
      ret->setOperand(0, objective);
    }
    // Parameter reads another stage's op made: this stage reads them again.
    for (int64_t i = 0; i < static_cast<int64_t>(ops.size()); ++i) {
      auto ref = dyn_cast<ParamRefOp>(ops[i]);
      if (!ref || stageOf(i) == s)
        continue;
      Operation *mine = nullptr;
      for (OpOperand &use : llvm::make_early_inc_range(ref->getUses())) {
        if (stageOfOp(use.getOwner()) != s)
          continue;
        if (!mine) {
          ob.setInsertionPoint(use.getOwner());
          mine = ob.clone(*ref);
        }
        use.set(mine->getResult(0));
      }
    }
    // Drop the other stages' ops (last use first), and this stage's parameter reads that only
    // another stage used.
    for (int64_t i = ops.size() - 1; i >= 0; --i) {
      if (i >= lo && i < hi && !(isFree(ops[i]) && ops[i]->use_empty()))
        continue;
      Operation *op = ops[i];
      if (!op->use_empty())
        return op->emitOpError("zcc-pipeline-stage: stage ") << s << " still reads this op of another stage";
      op->erase();
    }

    // The parameters this stage keeps.
    DenseSet<StringAttr> kept;
    forward.walk([&](ParamRefOp ref) { kept.insert(ref.getNameAttr().getAttr()); });
    for (ParamOp param : llvm::make_early_inc_range(module.getOps<ParamOp>())) {
      if (!kept.contains(param.getSymNameAttr())) {
        param.erase();
        continue;
      }
      if (readers.lookup(param.getSymNameAttr()).size() > 1)
        param->setAttr("zc.pipeline_tied", b.getUnitAttr());
    }

    // The forward-only twin: the same stage forward, then its output to the next stage.
    if (!last) {
      OpBuilder mb(forward);
      mb.setInsertionPointAfter(forward);
      auto twin = cast<ForwardOp>(mb.clone(*forward));
      twin.setSymName((forward.getSymName() + "_stage_forward").str());
      twin->setAttr("zc.forward_only", b.getUnitAttr());
      auto twinReturn = cast<ReturnOp>(twin.getBody().front().getTerminator());
      auto objective = twinReturn.getOperand(0).getDefiningOp<StageOutputOp>();
      ob.setInsertionPoint(twinReturn);
      PipeSendOp::create(ob, twinReturn.getLoc(), objective.getOutput(), static_cast<uint64_t>(s + 1));
    }

    // The plan, for the report and train.bin.
    SmallVector<double> forwardCost(plan->flops.begin(), plan->flops.end());
    double bubble = predictedBubble(forwardCost, microBatches);
    module->setAttr("zc.pipeline",
                    b.getDictionaryAttr({b.getNamedAttr("stage", b.getI64IntegerAttr(s)),
                                         b.getNamedAttr("stages", b.getI64IntegerAttr(P)),
                                         b.getNamedAttr("cuts", b.getDenseI64ArrayAttr(plan->begin)),
                                         b.getNamedAttr("stage_flops", b.getF64ArrayAttr(plan->flops)),
                                         b.getNamedAttr("slots", b.getI64IntegerAttr(std::min<int64_t>(microBatches, P - s))),
                                         b.getNamedAttr("predicted_bubble", b.getF64FloatAttr(bubble))}));
    return success();
  }
};

} // namespace
