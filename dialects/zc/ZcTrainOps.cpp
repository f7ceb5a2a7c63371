//===- ZcTrainOps.cpp - symbol checks of gradient and optimizer ops --------===//
//
// Every op here names a parameter (and optimizer ops their state): the symbol must
// exist and the tensors must have the parameter's type, or the lowering would give
// a buffer of the wrong size.

#include "dialects/zc/ZcDialect.h"

using namespace mlir;
using namespace mlir::zc;

namespace {
FailureOr<ParamOp> lookupParam(Operation *op, FlatSymbolRefAttr name,
                               SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!param)
    return op->emitOpError() << "'" << name << "' does not name a zc.param";
  return param;
}

/// `value` must have the type of the parameter `name`.
LogicalResult verifyParamTyped(Operation *op, FlatSymbolRefAttr name, Type type,
                               SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(op, name, symbolTable);
  if (failed(param))
    return failure();
  if (param->getType() != type)
    return op->emitOpError() << "type " << type << " differs from parameter '" << name
                             << "' declared as " << param->getType();
  return success();
}

/// `name` must be a zc.state of `param`.
LogicalResult verifyStateOf(Operation *op, FlatSymbolRefAttr name, FlatSymbolRefAttr param,
                            SymbolTableCollection &symbolTable) {
  auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(op, name);
  if (!state)
    return op->emitOpError() << "'" << name << "' does not name a zc.state";
  if (state.getParamAttr() != param)
    return op->emitOpError() << "state '" << name << "' belongs to " << state.getParamAttr()
                             << ", not " << param;
  return success();
}
} // namespace

LogicalResult StateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbolTable);
  if (failed(param))
    return failure();
  if (param->getTensorType().getShape() != getTensorType().getShape())
    return emitOpError() << "shape of " << getType() << " differs from parameter "
                         << getParamAttr() << " declared as " << param->getType();
  if (!getTensorType().getElementType().isF32())
    return emitOpError() << "optimizer state is kept in f32, got " << getType();
  return success();
}

LogicalResult GradAccumulateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamTyped(*this, getParamAttr(), getGrad().getType(), symbolTable);
}

LogicalResult GradRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamTyped(*this, getParamAttr(), getType(), symbolTable);
}

LogicalResult GradZeroOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return lookupParam(*this, getParamAttr(), symbolTable);
}

LogicalResult AdamWOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyParamTyped(*this, getParamAttr(), getGrad().getType(), symbolTable)) ||
      failed(verifyStateOf(*this, getExpAvgAttr(), getParamAttr(), symbolTable)) ||
      failed(verifyStateOf(*this, getExpAvgSqAttr(), getParamAttr(), symbolTable)))
    return failure();
  return success();
}

LogicalResult SgdOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyParamTyped(*this, getParamAttr(), getGrad().getType(), symbolTable)) ||
      failed(verifyStateOf(*this, getMomentumBufferAttr(), getParamAttr(), symbolTable)))
    return failure();
  return success();
}
