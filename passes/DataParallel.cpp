//===- DataParallel.cpp - ZeRO stage 0: all-reduce every gradient ----------===//

#include "passes/Passes.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCDATAPARALLEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {
struct ZccDataParallelPass : zc::impl::ZccDataParallelBase<ZccDataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    if (ranks < 1 || microBatches < 1) {
      getOperation().emitError("ranks and micro-batches must be positive");
      return signalPassFailure();
    }
    SmallVector<GradRefOp> refs;
    getOperation().walk([&](GradRefOp ref) { refs.push_back(ref); });
    for (GradRefOp ref : refs) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : ref.getResult().getUses())
        uses.push_back(&use);
      ImplicitLocOpBuilder b(ref.getLoc(), ref->getBlock(), std::next(ref->getIterator()));
      Value grad = ref.getResult();
      // An expert weight's gradient: its tokens came from every rank of its expert group, so
      // the mean over all data-parallel ranks is the sum over the ranks holding the same
      // experts (data ranks / ep of them), over data ranks.
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(ref, ref.getParamAttr());
      const int64_t ep = param ? expertRanksOf(param) : 1;
      if (ep > 1 && ranks % ep != 0) {
        ref.emitOpError() << "--ep " << ep << " does not divide the " << ranks << " data-parallel ranks";
        return signalPassFailure();
      }
      if (ep > 1) {
        if (ranks > ep)
          grad = AllReduceOp::create(b, grad.getType(), ReduceKind::avg, grad, static_cast<uint64_t>(ranks / ep),
                                     MeshAxis::expert_data);
        grad = ScaleOp::create(b, grad.getType(), grad, b.getF64FloatAttr(1.0 / ep));
      } else if (ranks > 1) {
        grad = AllReduceOp::create(b, grad.getType(), ReduceKind::avg, grad,
                                   static_cast<uint64_t>(ranks));
      }
      if (microBatches > 1) // the buffer holds the sum of K micro-batch means
        grad = ScaleOp::create(b, grad.getType(), grad, b.getF64FloatAttr(1.0 / microBatches));
      for (OpOperand *use : uses)
        use->set(grad);
    }
  }
};
} // namespace
