//===- Fuse.cpp - matmuls with their bias, GELU and backward epilogues -----===//
//
// A linear layer's forward is matmul, bias_add, gelu; its backward through the GELU
// and the bias is gelu_grad of the next matmul's result, then a reduce_sum over the
// rows. On a GPU each is one cuBLASLt call with an epilogue (bias; GELU with the
// pre-activation as auxiliary output; DGELU with the bias gradient), saving the
// round trips of the elementwise ops through memory. The fused ops are defined as
// what they replace, and the CPU backend runs exactly that, so results are the same.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCFUSE
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

namespace {

/// reduce_sum over every axis but the last (a bias gradient).
bool isBiasGradient(ReduceSumOp op) {
  int64_t rank = tensorOf(op.getInput()).getRank();
  ArrayRef<int64_t> axes = op.getAxes();
  if (static_cast<int64_t>(axes.size()) != rank - 1)
    return false;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (axes[i] != i)
      return false;
  return true;
}

struct Fuser {
  int64_t forward = 0, backward = 0;

  /// matmul -> bias_add [-> gelu]: matmul_bias or matmul_bias_gelu.
  void fuseForward(BiasAddOp biasAdd) {
    auto mm = biasAdd.getInput().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse())
      return;
    GeluOp gelu;
    for (Operation *user : biasAdd->getUsers())
      if (auto g = dyn_cast<GeluOp>(user); g && !gelu)
        gelu = g;
    // The fused op runs where the bias_add was; a gelu further down must not read
    // anything defined in between (it reads only the bias_add, so it never does).
    OpBuilder b(biasAdd);
    Location loc = b.getFusedLoc({mm.getLoc(), biasAdd.getLoc()});
    if (gelu) {
      auto fused = MatmulBiasGeluOp::create(b, loc, biasAdd.getType(), gelu.getType(), mm.getLhs(), mm.getRhs(),
                                            biasAdd.getBias(), mm.getTransposeLhs(), mm.getTransposeRhs());
      biasAdd.getResult().replaceAllUsesWith(fused.getPre());
      gelu.getResult().replaceAllUsesWith(fused.getResult());
      gelu->erase();
    } else {
      auto fused = MatmulBiasOp::create(b, loc, biasAdd.getType(), mm.getLhs(), mm.getRhs(), biasAdd.getBias(),
                                        mm.getTransposeLhs(), mm.getTransposeRhs());
      biasAdd.getResult().replaceAllUsesWith(fused.getResult());
    }
    biasAdd->erase();
    mm->erase();
    ++forward;
  }

  /// matmul -> gelu_grad -> reduce_sum (all but the last axis): matmul_dgelu_bgrad.
  void fuseBackward(GeluGradOp geluGrad) {
    auto mm = geluGrad.getGrad().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse())
      return;
    ReduceSumOp biasGrad;
    for (Operation *user : geluGrad->getUsers())
      if (auto r = dyn_cast<ReduceSumOp>(user); r && isBiasGradient(r) && !biasGrad)
        biasGrad = r;
    if (!biasGrad)
      return;
    // At the gelu_grad: the reduce_sum reads only its result, so it can move up.
    OpBuilder b(geluGrad);
    Location loc = b.getFusedLoc({mm.getLoc(), geluGrad.getLoc(), biasGrad.getLoc()});
    auto fused = MatmulDgeluBgradOp::create(b, loc, geluGrad.getType(), biasGrad.getType(), mm.getLhs(), mm.getRhs(),
                                            geluGrad.getInput(), mm.getTransposeLhs(), mm.getTransposeRhs());
    geluGrad.getResult().replaceAllUsesWith(fused.getDpre());
    biasGrad.getResult().replaceAllUsesWith(fused.getDbias());
    biasGrad->erase();
    geluGrad->erase();
    mm->erase();
    ++backward;
  }
};

struct ZccFusePass : zc::impl::ZccFuseBase<ZccFusePass> {
  using Base::Base;

  void runOnOperation() override {
    Fuser fuser;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zc.role"))
        continue;
      SmallVector<BiasAddOp> biasAdds;
      SmallVector<GeluGradOp> geluGrads;
      fn.walk([&](Operation *op) {
        if (auto b = dyn_cast<BiasAddOp>(op))
          biasAdds.push_back(b);
        else if (auto g = dyn_cast<GeluGradOp>(op))
          geluGrads.push_back(g);
      });
      for (GeluGradOp g : geluGrads)
        fuser.fuseBackward(g);
      for (BiasAddOp b : biasAdds)
        fuser.fuseForward(b);
    }
  }
};

} // namespace
