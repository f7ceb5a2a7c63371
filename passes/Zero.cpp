//===- Zero.cpp - ZeRO stages 1-3: partitioned training state --------------===//
//
// Rewrites the step and update functions that autodiff and the optimizer wrote
// for one replica into their ZeRO-partitioned form, parameter by parameter. The
// layout decisions live on the symbols (ParamSharding: zc.shards, zc.shard_grad,
// zc.shard_param); the memory plan and the lowering size every buffer from them.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCZERO
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// The last of `users` and of the users of their views (a reshape aliases its
/// input's bytes, so the buffer lives as long as its views do).
Operation *lastUseThroughViews(ArrayRef<Operation *> users) {
  Operation *last = nullptr;
  SmallVector<Operation *> work(users.begin(), users.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!last || last->isBeforeInBlock(op))
      last = op;
    if (isa<ReshapeOp>(op))
      for (Operation *user : op->getUsers())
        work.push_back(user);
  }
  return last;
}

/// Stage 3: replaces the reads of `param` in the step function by two gathers,
/// one for the forward uses and one for the backward uses, each released after
/// its group's last use.
void gatherAroundUses(ParamOp param, func::FuncOp step, Operation *backwardStart) {
  SmallVector<ParamRefOp> refs;
  step.walk([&](ParamRefOp ref) {
    if (ref.getNameAttr().getAttr() == param.getSymNameAttr())
      refs.push_back(ref);
  });
  SmallVector<OpOperand *> forwardUses, backwardUses;
  for (ParamRefOp ref : refs)
    for (OpOperand &use : ref.getResult().getUses()) {
      bool backward = backwardStart && !use.getOwner()->isBeforeInBlock(backwardStart);
      (backward ? backwardUses : forwardUses).push_back(&use);
    }
  auto type = param.getTensorType();
  for (ArrayRef<OpOperand *> group : {ArrayRef(forwardUses), ArrayRef(backwardUses)}) {
    if (group.empty())
      continue;
    SmallVector<Operation *> users;
    Operation *first = nullptr;
    for (OpOperand *use : group) {
      users.push_back(use->getOwner());
      if (!first || use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    }
    Operation *last = lastUseThroughViews(users);
    OpBuilder b(first);
    Value gathered = GatherParamOp::create(b, param.getLoc(), type,
                                           FlatSymbolRefAttr::get(param.getSymNameAttr()));
    for (OpOperand *use : group)
      use->set(gathered);
    b.setInsertionPointAfter(last);
    ReleaseOp::create(b, param.getLoc(), gathered);
  }
  for (ParamRefOp ref : refs)
    ref.erase();
}

/// Stage >= 2: each micro-batch's gradient is reduce-scattered as soon as it is
/// final and only the shard is accumulated.
void reduceScatterWhenFinal(GradAccumulateOp acc, int64_t ranks, MeshAxis axis, RankedTensorType shardType) {
  Value grad = acc.getGrad();
  Operation *def = grad.getDefiningOp();
  OpBuilder b(acc);
  if (def && def->getBlock() == acc->getBlock())
    b.setInsertionPointAfter(def);
  Value shard = ReduceScatterOp::create(b, acc.getLoc(), shardType, ReduceKind::avg, grad,
                                        static_cast<uint64_t>(ranks), axis);
  GradAccumulateOp::create(b, acc.getLoc(), acc.getParamAttr(), shard, acc.getOverwriteAttr());
  acc.erase();
}

struct ZccZeroPass : zc::impl::ZccZeroBase<ZccZeroPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stage < 1 || stage > 3 || ranks < 1 || microBatches < 1 || persistenceThreshold < 0) {
      module.emitError("zcc-zero: stage must be 1, 2 or 3; ranks and micro-batches positive; "
                       "persistence-threshold non-negative");
      return signalPassFailure();
    }
    func::FuncOp step = functionWithRole(module, "step"), update = functionWithRole(module, "update");
    if (!step || !update) {
      module.emitError("zcc-zero: run zcc-autodiff and zcc-optimizer first");
      return signalPassFailure();
    }
    Operation *backwardStart = nullptr;
    step.walk([&](arith::ConstantOp c) {
      if (c->hasAttr(kBackwardSeedAttr))
        backwardStart = c;
    });

    DenseMap<StringAttr, GradAccumulateOp> accumulates;
    step.walk([&](GradAccumulateOp acc) { accumulates[acc.getParamAttr().getAttr()] = acc; });
    DenseMap<StringAttr, GradRefOp> gradRefs;
    DenseMap<StringAttr, Operation *> updates;
    update.walk([&](Operation *op) {
      if (auto ref = dyn_cast<GradRefOp>(op))
        gradRefs[ref.getParamAttr().getAttr()] = ref;
      else if (auto adamw = dyn_cast<AdamWOp>(op))
        updates[adamw.getParamAttr().getAttr()] = op;
      else if (auto sgd = dyn_cast<SgdOp>(op))
        updates[sgd.getParamAttr().getAttr()] = op;
    });

    Builder builder(&getContext());
    for (ParamOp param : module.getOps<ParamOp>()) {
      StringAttr name = param.getSymNameAttr();
      GradAccumulateOp acc = accumulates.lookup(name);
      GradRefOp ref = gradRefs.lookup(name);
      Operation *optimizerOp = updates.lookup(name);
      if (!acc || !ref || !optimizerOp)
        continue; // no gradient: the optimizer pass left it alone, so do we

      // An expert weight (zcc-expert-parallel) is sharded over the ranks holding the same
      // experts, and its average over them is the data-parallel mean times ep (zcc-data-parallel).
      const int64_t ep = expertRanksOf(param);
      if (ep > 1 && ranks % ep != 0) {
        param.emitOpError() << "--ep " << ep << " does not divide the " << ranks << " data-parallel ranks";
        return signalPassFailure();
      }
      const int64_t groupRanks = ranks / ep;
      const MeshAxis axis = ep > 1 ? MeshAxis::expert_data : MeshAxis::data;
      const double scale = 1.0 / static_cast<double>(microBatches * ep);
      if (groupRanks == 1) { // each expert on one rank of the data axis: nothing to partition
        ImplicitLocOpBuilder b(ref.getLoc(), ref->getBlock(), std::next(ref->getIterator()));
        optimizerOp->setOperand(0, ScaleOp::create(b, ref.getType(), ref.getResult(), b.getF64FloatAttr(scale)));
        continue;
      }

      // The layout decision.
      bool shardGrad = stage >= 2;
      bool shardParam = stage == 3 && param.getTensorType().getNumElements() > persistenceThreshold;
      param->setAttr(ParamSharding::kShards, builder.getI64IntegerAttr(groupRanks));
      if (shardGrad)
        param->setAttr(ParamSharding::kShardGrad, builder.getUnitAttr());
      if (shardParam)
        param->setAttr(ParamSharding::kShardParam, builder.getUnitAttr());
      ParamSharding sharding = ParamSharding::of(param);
      auto shardType = RankedTensorType::get({sharding.shardElements()},
                                             param.getTensorType().getElementType());
      auto stateShard = RankedTensorType::get({sharding.shardElements()}, builder.getF32Type());
      for (StateOp state : module.getOps<StateOp>())
        if (state.getParamAttr().getAttr() == name && !state.getMaskKeepAttr()) // a mask stays whole
          state.setTypeAttr(TypeAttr::get(stateShard));

      // The step function (and a pipeline stage's forward-only function: one gather).
      if (shardParam) {
        gatherAroundUses(param, step, backwardStart);
        for (func::FuncOp forward : forwardOnlyFunctions(module))
          gatherAroundUses(param, forward, nullptr);
      }
      if (shardGrad)
        reduceScatterWhenFinal(acc, groupRanks, axis, shardType);

      // The update: this rank's shard of the averaged gradient, then the optimizer on it.
      ImplicitLocOpBuilder b(ref.getLoc(), ref->getBlock(), std::next(ref->getIterator()));
      Value grad;
      if (shardGrad) {
        ref.getResult().setType(shardType);
        grad = ref.getResult();
      } else {
        grad = ReduceScatterOp::create(b, shardType, ReduceKind::avg, ref.getResult(),
                                       static_cast<uint64_t>(groupRanks), axis);
      }
      if (scale != 1.0) // the buffer holds the sum of K micro-batch means (and an expert's, x ep)
        grad = ScaleOp::create(b, shardType, grad, b.getF64FloatAttr(scale));
      optimizerOp->setOperand(0, grad);
      if (!shardParam) {
        b.setInsertionPointAfter(optimizerOp);
        AllGatherParamOp::create(b, FlatSymbolRefAttr::get(name));
      }
    }
  }
};

} // namespace
