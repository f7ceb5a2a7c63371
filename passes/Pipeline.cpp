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
//    stage_flops, schedule, slots, held_slots, predicted_bubble}` and, interleaved,
//    `chunks` (schedule: `1f1b`, `zb-h1`, `interleaved-1f1b` or `zbv`; slots: the
//    micro-batches in flight at this stage, min(K, P - s) under 1F1B, min(K, P)
//    under ZB-H1, interleaved what its rank's table holds per chunk; held_slots:
//    the buffers of an input held from F to B, from F to W, from B to W, during F
//    and during B (zcc::pipeline::heldSlots; pipelineInputHold says which an
//    input is); the
//    schedule's table, the one train.bin runs, timed with each stage's cost: F =
//    1 forward, B = 2 (under ZB-H1 B = 1 and W = 1; the last stage's F is part of
//    its B)).
//  - Interleaved 1F1B and ZB-V (`chunks` V > 1): `stages` counts the P x V
//    virtual stages the forward is cut into; stage s is chunk s / P of pipeline
//    rank s mod P (ZB-V: rank s or 2P - 1 - s, a V), its zc.pipe_send naming
//    the neighbouring virtual stage (lowered to that stage's rank: ZB-V's
//    stage P - 1 sends to its own rank).
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/ModelDescription.h"
#include "passes/Passes.h"
#include "runtime/main/PipelineSchedule.h"

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
  SmallVector<double> weightFlops; // per stage: what its weight gradients' products cost
};

/// Whether `v` is a parameter, seen through the casts and views a product reads it by.
bool isParameter(Value v) {
  for (int depth = 0; depth < 4 && v; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (isa<ParamRefOp>(def))
      return true;
    if (!isa<CastOp, ReshapeOp, TransposeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// The FLOPs of the weight gradients an op of the forward adds to the backward: each product of
/// a parameter costs its forward product again (dW = x^T dy), the language-model head's its
/// logits' product. What else a weight gradient reads (a gain's, a bias's column sums) is
/// memory-bound and left out, as the input gradients' elementwise work is.
double weightGradientFlops(Operation *op) {
  if (isa<MatmulOp, MatmulBiasOp, MatmulBiasGeluOp>(op)) {
    if (!isParameter(op->getOperand(0)) && !isParameter(op->getOperand(1)))
      return 0;
    return productFlops(op->getOperand(0), op->getResult(0));
  }
  if (auto head = dyn_cast<MatmulCrossEntropyLossOp>(op)) {
    if (!isParameter(head.getWeight()))
      return 0;
    double x = tensorOf(head.getInput()).getNumElements(), w = tensorOf(head.getWeight()).getNumElements();
    return 2 * (x / tensorOf(head.getInput()).getShape().back()) * w;
  }
  return 0;
}

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

/// `chunks`: interleaved, the stages are pp x chunks virtual stages (for the error's words only).
FailureOr<Partition> partition(ForwardOp forward, int64_t stages, int64_t chunks) {
  Block &body = forward.getBody().front();
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  const int64_t n = ops.size();
  // Cost of each op, and the valid cuts.
  SmallVector<double> prefix(n + 1, 0), flopPrefix(n + 1, 0), weightPrefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    double flops = isFree(ops[i]) ? 0 : estimatedFlops(ops[i]);
    weightPrefix[i + 1] = weightPrefix[i] + weightGradientFlops(ops[i]);
    double params = 0;
    if (auto ref = dyn_cast<ParamRefOp>(ops[i]))
      params = 16.0 * tensorOf(ref.getResult()).getNumElements();
    prefix[i + 1] = prefix[i] + 3 * flops + params;
    flopPrefix[i + 1] = flopPrefix[i] + flops;
  }
  SmallVector<int64_t> cuts{0};
  DenseMap<int64_t, Value> crossing;
  SmallVector<Value> crossingAt = crossings(ops, index);
  // Where the same value crosses several cuts in a row, only parameter reads lie between them: a
  // stage between two of them would compute nothing and hand on what it received (from a stage
  // that does not own it). Only the first of them is a cut.
  Value previous;
  for (int64_t i = 1; i < n; ++i)
    if (Value v = crossingAt[i]; v && v != previous) {
      cuts.push_back(i);
      crossing[i] = v;
      previous = v;
    }
  cuts.push_back(n);
  const int64_t m = cuts.size();
  if (m - 1 < stages)
    return forward.emitOpError(chunks > 1 ? "--pp " + std::to_string(stages / chunks) + " x --pp-interleave " +
                                                std::to_string(chunks) + " = " + std::to_string(stages) + " stages"
                                          : "--pp " + std::to_string(stages))
           << ": the forward has only " << m - 2
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
    p.weightFlops.push_back(weightPrefix[p.begin[s + 1]] - weightPrefix[p.begin[s]]);
    if (s + 1 < stages)
      p.crossing.push_back(crossing.lookup(p.begin[s + 1]));
  }
  // Few cut points (a value that every block feeds, such as a MoE load-balancing loss pooled over
  // all the layers, ties the blocks together) can leave one stage with most of the work: say so
  // rather than run a pipeline whose other ranks wait.
  double total = prefix[n], costliest = *std::max_element(p.cost.begin(), p.cost.end());
  if (stages > 1 && total > 0 && costliest > 1.5 * total / stages)
    forward.emitWarning() << (chunks > 1 ? "the " + std::to_string(stages) + " virtual stages"
                                         : "--pp " + std::to_string(stages))
                          << ": the costliest stage does "
                          << static_cast<int64_t>(std::lround(100 * costliest / total)) << "% of the work: the forward has only " << m - 2
                          << " places where one activation crosses (values that several blocks feed tie them "
                             "together; a MoE model: zcc-import --moe-aux-loss per-layer)";
  return p;
}

/// The schedule's bubble, the fraction of stage-time idle in the step, timed on the schedule
/// table train.bin runs (runtime/main/PipelineSchedule.h) with each stage's forward costing
/// `forward[s]` and its backward twice that: under 1F1B one B; under the zero-bubble schedules
/// W (the weights' gradients) what its products of parameters cost again (`weight[s]`) and B
/// (the input's gradient) the rest, which holds attention's backward: B is the larger (the
/// 8-layer d256 GPT at context 128: 1.17x W by FLOPs, 1.5x in CPU time traced on 2 cores). The first stage, whose input (the tokens) has no
/// gradient, has no B: its W is the whole backward. The last stage has no separate forward: its
/// B runs the forward too.
double predictedBubble(ArrayRef<double> forward, ArrayRef<double> weight, int64_t microBatches,
                       zcc::pipeline::Schedule schedule, int64_t chunks) {
  const int64_t P = forward.size(); // virtual stages when interleaved: costs[virtual stage]
  std::vector<zcc::pipeline::StageCosts> costs(P);
  const bool split = zcc::pipeline::splitsBackward(schedule);
  for (int64_t s = 0; s < P; ++s) {
    const bool last = s + 1 == P;
    costs[s].forward = last ? 0 : forward[s];
    const double inputGrad = !split ? 2 * forward[s] : s == 0 ? 0 : 2 * forward[s] - std::min(weight[s], forward[s]);
    costs[s].backward = inputGrad + (last ? forward[s] : 0);
    costs[s].weight = 2 * forward[s] - inputGrad; // none where B is the whole backward
  }
  return zcc::pipeline::timeTable(zcc::pipeline::table(schedule, P / chunks, microBatches, chunks), costs,
                                  zcc::pipeline::placementOf(schedule))
      .bubble;
}

/// The terms of the returned loss where it is a sum of 0-d losses (the cross-entropy and each MoE
/// layer's load-balancing and z-losses, added at the end): the sum's adds are erased, so no term
/// crosses a cut on its way to them, and the terms are returned for each stage to add its own.
/// One term (a dense model's loss) stays as it is.
SmallVector<Value> separateLossTerms(ForwardOp forward) {
  auto ret = cast<ReturnOp>(forward.getBody().front().getTerminator());
  SmallVector<Value> terms;
  SmallVector<Operation *> sums;
  lossSumTerms(ret.getOperand(0), terms, &sums);
  // A term read twice (x + x) stays one stage's twice; a term that is not a loss's 0-d f32 (a
  // block argument) keeps the sum whole.
  if (sums.empty() || llvm::any_of(terms, [](Value t) { return !t.getDefiningOp(); }))
    return {ret.getOperand(0)};
  ret->setOperand(0, terms.front());
  for (Operation *sum : sums) // the root first: each then has no user left
    sum->erase();
  // A router's losses written after the model's (an importer emits them where the sum needs them)
  // move up to right after what they read, so each falls in its layer's stage.
  for (Value term : terms) {
    Operation *loss = term.getDefiningOp();
    if (!isa<MoeAuxLossOp, MoeZLossOp>(loss))
      continue;
    Operation *latest = nullptr;
    for (Value operand : loss->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && (!latest || latest->isBeforeInBlock(def)))
        latest = def;
    if (latest && latest->getBlock() == loss->getBlock())
      loss->moveAfter(latest);
  }
  return terms;
}

struct ZccPipelineStagePass : zc::impl::ZccPipelineStageBase<ZccPipelineStagePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 1 || stage < 0 || stage >= stages || microBatches < 1) {
      module.emitError("zcc-pipeline-stage: stages must be positive, stage in [0, stages), micro-batches positive");
      return signalPassFailure();
    }
    if (!zcc::pipeline::parseSchedule(schedule)) {
      module.emitError("zcc-pipeline-stage: unknown schedule '")
          << schedule << "' (one of " << zcc::pipeline::scheduleNames() << ")";
      return signalPassFailure();
    }
    if (chunks < 1 || stages % chunks != 0) {
      module.emitError("zcc-pipeline-stage: chunks must be positive and divide the stages, got ")
          << chunks << " of " << stages;
      return signalPassFailure();
    }
    if (std::string problem =
            zcc::pipeline::problem(*zcc::pipeline::parseSchedule(schedule), stages / chunks, microBatches, chunks);
        !problem.empty()) {
      module.emitError("zcc-pipeline-stage: ") << problem;
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
    // The model's losses besides the last one's (a MoE layer's load-balancing and z-losses) are
    // each their stage's: summed into the returned loss at the end, they would cross every cut.
    SmallVector<Value> lossTerms = separateLossTerms(forward);
    FailureOr<Partition> plan = partition(forward, stages, chunks);
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
    // This stage's objective: the stage's output against its gradient (not the last), plus the
    // losses computed here. Each stage's step returns its own terms; train.bin adds the stages'.
    SmallVector<Value> objective;
    if (!last) {
      Value output = plan->crossing[s];
      (void)forward.insertArgument(
          forward.getNumArguments(), output.getType(),
          b.getDictionaryAttr(b.getNamedAttr("zc.input", b.getStringAttr("activation_grad"))), output.getLoc());
      BlockArgument grad = body.getArguments().back();
      ob.setInsertionPoint(ret);
      objective.push_back(
          StageOutputOp::create(ob, output.getLoc(), ret.getOperand(0).getType(), output, grad).getResult());
    }
    for (Value term : lossTerms)
      if (stageOfOp(term.getDefiningOp()) == s)
        objective.push_back(term);
    if (objective.empty())
      return forward.emitOpError("--pp ") << P << ": the last stage computes none of the model's losses";
    ob.setInsertionPoint(ret);
    Value total = objective.front();
    for (Value term : ArrayRef<Value>(objective).drop_front())
      total = AddOp::create(ob, term.getLoc(), total.getType(), total, term).getResult();
    ret->setOperand(0, total);
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
      StageOutputOp objective = stageObjective(twinReturn.getOperand(0));
      ob.setInsertionPoint(twinReturn);
      PipeSendOp::create(ob, twinReturn.getLoc(), objective.getOutput(), static_cast<uint64_t>(s + 1));
    }

    // The plan, for the report and train.bin.
    SmallVector<double> forwardCost(plan->flops.begin(), plan->flops.end());
    const zcc::pipeline::Schedule kind = *zcc::pipeline::parseSchedule(schedule);
    double bubble = predictedBubble(forwardCost, plan->weightFlops, microBatches, kind, chunks);
    // Interleaved: stage s is one of the chunks of a pipeline rank (placementOf: Megatron's loop
    // or ZB-V's V), its slots that chunk's.
    const int64_t ranks = P / chunks;
    const zcc::pipeline::Placement placement = zcc::pipeline::placementOf(kind);
    const int64_t rank = zcc::pipeline::rankOfStage(placement, s, ranks);
    const int64_t chunk = zcc::pipeline::chunkOfStage(placement, s, ranks);
    // Each hold's buffers (zcc::pipeline::Hold's order): what an input held for that span needs.
    SmallVector<int64_t> heldSlots;
    for (zcc::pipeline::Hold hold : {zcc::pipeline::Hold::ForwardToBackward, zcc::pipeline::Hold::ForwardToWeight,
                                     zcc::pipeline::Hold::BackwardToWeight, zcc::pipeline::Hold::Forward,
                                     zcc::pipeline::Hold::Backward})
      heldSlots.push_back(zcc::pipeline::heldSlots(kind, rank, ranks, microBatches, chunks, chunk, hold));
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr("stage", b.getI64IntegerAttr(s)),
        b.getNamedAttr("stages", b.getI64IntegerAttr(P)),
        b.getNamedAttr("cuts", b.getDenseI64ArrayAttr(plan->begin)),
        b.getNamedAttr("stage_flops", b.getF64ArrayAttr(plan->flops)),
        b.getNamedAttr("schedule", b.getStringAttr(schedule)),
        b.getNamedAttr("slots", b.getI64IntegerAttr(zcc::pipeline::slots(kind, rank, ranks, microBatches, chunks, chunk))),
        b.getNamedAttr("held_slots", b.getDenseI64ArrayAttr(heldSlots)),
        b.getNamedAttr("predicted_bubble", b.getF64FloatAttr(bubble))};
    if (chunks > 1)
      attrs.push_back(b.getNamedAttr("chunks", b.getI64IntegerAttr(chunks)));
    module->setAttr("zc.pipeline", b.getDictionaryAttr(attrs));
    return success();
  }
};

} // namespace
