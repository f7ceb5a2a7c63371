//===- GradClip.cpp - global gradient-norm clipping in the update ----------===//
//
// torch.nn.utils.clip_grad_norm_ (nanoGPT's grad_clip, torchtitan's max_norm,
// DeepSpeed's gradient_clipping) for a sharded update: the norm is the whole
// model's, computed from the pieces each rank's optimizer updates, each value of
// the gradient counted once (see Passes.td), and the optimizers read the
// clipped gradient through their `scale` operand (no scaled copy is written).
//
// The update is reordered into three phases: the gradients' reductions (every op
// the optimizers' gradients depend on, in their order), the norm, then the rest
// (the optimizers, gradient zeroing, ZeRO's parameter all-gathers) in their
// order. Moving those later is safe: no reduction reads what they write.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCGRADCLIP
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

struct ZccGradClipPass : zc::impl::ZccGradClipBase<ZccGradClipPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxNorm < 0 || dataRanks < 1 || tensorParallel < 1) {
      module.emitError("zcc-grad-clip: max-norm must be >= 0 and the ranks positive");
      return signalPassFailure();
    }
    func::FuncOp update = functionWithRole(module, "update");
    if (!update)
      return;
    Block &body = update.getBody().front();
    SmallVector<Operation *> optimizers;
    for (Operation &op : body)
      if (isa<AdamWOp, SgdOp>(op))
        optimizers.push_back(&op);
    if (optimizers.empty())
      return;

    // Each optimizer's gradient and its weight: 1 / the ranks that hold the same piece.
    SmallVector<Value> grads;
    SmallVector<Attribute> weights;
    Builder b(module.getContext());
    for (Operation *op : optimizers) {
      auto name = op->getAttrOfType<FlatSymbolRefAttr>("param");
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, name);
      if (!param) {
        op->emitOpError("zcc-grad-clip: no zc.param ") << name;
        return signalPassFailure();
      }
      double replicas = 1;
      if (!ParamSharding::of(param).partitioned()) // every data-parallel rank updates the whole tensor (an
        replicas *= static_cast<double>(dataRanks / expertRanksOf(param)); // expert weight: those with its experts
      if (!param->hasAttr("zc.tp_split"))
        replicas *= static_cast<double>(tensorParallel); // every tensor-parallel rank keeps it whole
      if (param->hasAttr("zc.pipeline_tied"))
        replicas *= 2; // the first and the last stage both update it with the summed gradient
      grads.push_back(op->getOperand(0));
      weights.push_back(b.getF64FloatAttr(1.0 / replicas));
    }

    // Phase 1: what the gradients depend on.
    llvm::SetVector<Operation *> reductions;
    SmallVector<Value> work(grads.begin(), grads.end());
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != &body || !reductions.insert(def))
        continue;
      work.append(def->operand_begin(), def->operand_end());
    }
    // Phase 3: everything else, after the norm, in order.
    Operation *terminator = body.getTerminator();
    SmallVector<Operation *> later;
    for (Operation &op : body.without_terminator())
      if (!reductions.contains(&op))
        later.push_back(&op);
    for (Operation *op : later)
      op->moveBefore(terminator);

    OpBuilder ob(later.empty() ? terminator : later.front());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    auto norm = GradNormOp::create(ob, update.getLoc(), scalar, scalar, grads, b.getArrayAttr(weights),
                                   b.getF64FloatAttr(maxNorm));
    if (maxNorm > 0)
      for (Operation *op : optimizers) {
        if (auto adamw = dyn_cast<AdamWOp>(op))
          adamw.getGradScaleMutable().assign(norm.getCoef());
        else
          cast<SgdOp>(op).getGradScaleMutable().assign(norm.getCoef());
      }
  }
};

} // namespace
