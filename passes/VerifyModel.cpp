//===- VerifyModel.cpp - checks that a module is a trainable model -------===//

#include "passes/Passes.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "zcc-verify-model"

namespace mlir::zc {
#define GEN_PASS_DEF_ZCCVERIFYMODEL
#include "passes/Passes.h.inc"
} // namespace mlir::zc

using namespace mlir;
using namespace mlir::zc;

LogicalResult mlir::zc::verifyModel(ModuleOp module) {
  // 1. Exactly one forward function.
  SmallVector<ForwardOp> forwards(module.getOps<ForwardOp>());
  if (forwards.empty())
    return module.emitError("the model has no zc.forward function (a batch in, a loss out)");
  if (forwards.size() > 1) {
    InFlightDiagnostic diag =
        forwards[1].emitOpError("is a second forward function; a model has exactly one");
    diag.attachNote(forwards[0].getLoc()) << "first forward function here";
    return diag;
  }

  // 2. Something to train.
  SmallVector<ParamOp> params(module.getOps<ParamOp>());
  if (params.empty())
    return module.emitError("the model has no zc.param: there is nothing to train");

  // 3. Every parameter is read by the forward function.
  llvm::StringSet<> used;
  forwards.front().walk([&](ParamRefOp ref) { used.insert(ref.getName()); });
  for (ParamOp param : params)
    if (!used.contains(param.getSymName()))
      return param.emitOpError("'") << param.getSymName()
                                    << "' is never read by the forward function";
  LLVM_DEBUG(llvm::dbgs() << "model '" << forwards.front().getSymName() << "' with "
                          << params.size() << " parameters\n");
  return success();
}

namespace {
struct ZccVerifyModelPass : zc::impl::ZccVerifyModelBase<ZccVerifyModelPass> {
  void runOnOperation() override {
    if (failed(verifyModel(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
