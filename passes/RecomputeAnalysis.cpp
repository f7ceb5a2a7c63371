//===- RecomputeAnalysis.cpp - what zcc-recompute may recompute, and cloning ===//
//
// See RecomputeAnalysis.h.
//
//===----------------------------------------------------------------------===//

#include "passes/RecomputeAnalysis.h"

#include "passes/CostModel.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"

#include <functional>

using namespace mlir;
using namespace mlir::zc;

StepAnalysis::StepAnalysis(func::FuncOp step, bool layers, bool rerunReductions)
    : step(step), layers(layers), rerunReductions(rerunReductions) {
  for (Operation &op : step.getBody().front()) {
    if (auto c = dyn_cast<arith::ConstantOp>(op); c && c->hasAttr(kBackwardSeedAttr))
      seed = c;
    ops.push_back(&op);
  }
  // A pipeline stage before the last has no loss: its backward pass starts from the
  // received gradient, right after zc.stage_output.
  if (!seed)
    for (Operation *op : ops)
      if (isa<StageOutputOp>(op) && op->getNextNode())
        seed = op->getNextNode();
}

bool StepAnalysis::hasBackwardUse(Value v) const {
  return llvm::any_of(v.getUsers(), [&](Operation *user) {
    return isBackward(user) && !user->hasTrait<OpTrait::IsTerminator>();
  });
}

bool StepAnalysis::recomputable(Operation *op) const {
  // Sequence parallelism's gathered tokens: gathered again (every rank does the same) rather
  // than kept whole.
  if (auto gather = dyn_cast<AllGatherOp>(op); gather && gather.getAxis() == MeshAxis::tensor)
    return !isBackward(op);
  // A row-parallel product's partial sums, reduced again where a whole layer re-runs (every rank
  // of the tensor group clones the same reductions in the same order).
  if (rerunReductions && isa<AllReduceOp, ReduceScatterOp>(op))
    return !isBackward(op) && (isa<AllReduceOp>(op) ? cast<AllReduceOp>(op).getAxis()
                                                    : cast<ReduceScatterOp>(op).getAxis()) == MeshAxis::tensor;
  return !isBackward(op) && isPure(op) && op->getNumResults() != 0 &&
         op->getName().getDialectNamespace() == ZcDialect::getDialectNamespace() && !isa<ParamRefOp>(op);
}

bool StepAnalysis::recomputesFromKept(Value v, double flopsPerByte,
                                      const DenseSet<Operation *> *alsoRecomputed) const {
  Operation *def = v.getDefiningOp();
  for (Value u : def->getOperands()) {
    Operation *producer = u.getDefiningOp();
    if (!producer || isa<ParamRefOp, arith::ConstantOp>(producer) || hasBackwardUse(u))
      continue;
    if (isa<ReshapeOp>(producer) || (alsoRecomputed && alsoRecomputed->contains(producer)) ||
        (recomputable(producer) && estimatedFlops(producer) / double(tensorBytes(tensorOf(u))) <= flopsPerByte)) {
      if (recomputesFromKept(u, flopsPerByte, alsoRecomputed))
        continue;
    }
    return false;
  }
  return true;
}

std::vector<Candidate> StepAnalysis::candidates() const {
  std::vector<Candidate> result;
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (!recomputable(op) || isa<ReshapeOp>(op)) // views hold no bytes of their own
      continue;
    for (OpResult r : op->getResults())
      if (isa<RankedTensorType>(r.getType()) && hasBackwardUse(r))
        result.push_back({static_cast<int64_t>(i), r.getResultNumber(), tensorBytes(tensorOf(r)),
                          estimatedFlops(op)});
  }
  return result;
}

int64_t StepAnalysis::blockOf(int64_t index) const {
  ArrayRef<int64_t> c = checkpointOps();
  return llvm::lower_bound(c, index) - c.begin();
}

const StepAnalysis::Checkpoints &StepAnalysis::found() const {
  if (checkpointCache)
    return *checkpointCache;
  checkpointCache.emplace();
  DenseSet<Value> &kept = checkpointCache->values;
  // Last forward use of every forward value.
  DenseMap<Value, int64_t> lastForwardUse;
  int64_t seedIndex = llvm::find(ops, seed) - ops.begin();
  for (int64_t i = 0; i < seedIndex; ++i)
    for (Value operand : ops[i]->getOperands())
      lastForwardUse[operand] = i;
  for (int64_t i = 0; i < seedIndex; ++i) {
    if (!recomputable(ops[i]) || isa<ReshapeOp>(ops[i]))
      continue;
    for (Value r : ops[i]->getResults()) {
      int64_t forwardReaders = llvm::count_if(r.getUsers(), [&](Operation *u) { return !isBackward(u); });
      if (forwardReaders < 2)
        continue;
      bool alone = true;
      for (int64_t j = 0; j < i && alone; ++j) {
        if (!recomputable(ops[j]) && !isa<ReshapeOp>(ops[j]))
          continue; // inputs, parameters, constants: always there
        for (Value older : ops[j]->getResults())
          if (lastForwardUse.lookup(older) > i)
            alone = false;
      }
      if (alone)
        kept.insert(r);
    }
  }
  for (auto [i, op] : llvm::enumerate(ops))
    if (llvm::any_of(op->getResults(), [&](Value r) { return kept.contains(r); }))
      checkpointCache->ops.push_back(static_cast<int64_t>(i));
  if (layers)
    keepLayerInputsOnly(seedIndex);
  return *checkpointCache;
}

void StepAnalysis::keepLayerInputsOnly(int64_t seedIndex) const {
  // A transformer layer is two spans between checkpoints: one with the attention, then the MLP
  // (or the experts) without. The residual between them is not a layer's input: drop each
  // checkpoint that ends a span with an attention and starts one without (the last layer's
  // output starts the head's span, which has none, but ends the MLP's: it stays).
  std::vector<int64_t> &at = checkpointCache->ops;
  auto hasAttention = [&](int64_t from, int64_t to) { // ops in (from, to]
    for (int64_t i = from + 1; i <= to; ++i)
      if (isa<CausalAttentionOp>(ops[i]))
        return true;
    return false;
  };
  std::vector<int64_t> layerInputs;
  for (size_t k = 0; k < at.size(); ++k) {
    const int64_t before = k == 0 ? -1 : at[k - 1], after = k + 1 < at.size() ? at[k + 1] : seedIndex - 1;
    if (hasAttention(before, at[k]) && !hasAttention(at[k], after)) {
      for (Value r : ops[at[k]]->getResults())
        checkpointCache->values.erase(r);
      continue;
    }
    layerInputs.push_back(at[k]);
  }
  at = std::move(layerInputs);
}

double mlir::zc::applyRecompute(func::FuncOp step, ArrayRef<Candidate> chosen, const Closure &closure,
                                DenseSet<int64_t> *cloned) {
  StepAnalysis a(step, /*layers=*/false, closure.rerunReductions);
  DenseMap<Operation *, int64_t> indexOf;
  for (auto [i, op] : llvm::enumerate(a.ops))
    indexOf[op] = static_cast<int64_t>(i);
  DenseSet<Value> recompute;
  for (const Candidate &c : chosen)
    recompute.insert(a.valueOf(c));
  auto follows = [&](Value u) {
    Operation *def = u.getDefiningOp();
    if (!def || a.isBackward(def) || recompute.contains(u))
      return recompute.contains(u);
    if (isa<ReshapeOp>(def)) // a view: recompute it when its source is
      return recompute.contains(cast<ReshapeOp>(def).getInput());
    if (!a.recomputable(def) || a.hasBackwardUse(u) || closure.checkpointOps.contains(indexOf.lookup(def)))
      return false;
    return closure.fullOps.contains(indexOf.lookup(def)) ||
           estimatedFlops(def) / double(tensorBytes(tensorOf(u))) <= closure.flopsPerByte;
  };

  double flops = 0;
  DenseMap<Value, Value> clones;
  std::function<Value(Value, Operation *)> materialize = [&](Value v, Operation *before) -> Value {
    if (Value c = clones.lookup(v))
      return c;
    if (!follows(v))
      return v;
    recompute.insert(v);
    Operation *def = v.getDefiningOp();
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, materialize(operand, before));
    OpBuilder b(before);
    Operation *clone = b.clone(*def, mapping);
    clone->setAttr(kRecomputedAttr, b.getUnitAttr());
    if (cloned)
      cloned->insert(indexOf.lookup(def));
    if (!isa<ReshapeOp>(clone))
      flops += estimatedFlops(clone);
    for (auto [original, copy] : llvm::zip(def->getResults(), clone->getResults()))
      clones[original] = copy;
    return clones.lookup(v);
  };
  for (Operation *op : a.ops) {
    if (!a.isBackward(op))
      continue;
    if (op->hasTrait<OpTrait::IsTerminator>())
      continue;
    for (OpOperand &use : op->getOpOperands())
      if (follows(use.get()))
        use.set(materialize(use.get(), op));
  }
  return flops;
}
