//===- ModelChecks.cpp - checks that a module is a trainable model -------===//
//
// Op verifiers check each op alone; a model also needs the pieces to fit
// together: exactly one forward function and parameters it reads.
//
//===----------------------------------------------------------------------===//

#include "zcc/Driver.h"

#include "dialects/zc/ZcDialect.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

LogicalResult zcc::verifyModel(ModuleOp module) {
  SmallVector<zc::ForwardOp> forwards(module.getOps<zc::ForwardOp>());
  if (forwards.empty())
    return module.emitError("the model has no zc.forward function (a batch in, a loss out)");
  if (forwards.size() > 1) {
    InFlightDiagnostic diag = forwards[1].emitOpError("is a second forward function; a model has exactly one");
    diag.attachNote(forwards[0].getLoc()) << "first forward function here";
    return diag;
  }

  SmallVector<zc::ParamOp> params(module.getOps<zc::ParamOp>());
  if (params.empty())
    return module.emitError("the model has no zc.param: there is nothing to train");

  // A parameter the forward never reads gets no gradient and would be
  // sharded, stored and updated for nothing: almost always a typo.
  llvm::StringSet<> used;
  forwards[0].walk([&](zc::ParamRefOp ref) { used.insert(ref.getName()); });
  for (zc::ParamOp param : params)
    if (!used.contains(param.getSymName()))
      return param.emitOpError("'") << param.getSymName()
                                    << "' is never read by the forward function";
  return success();
}
